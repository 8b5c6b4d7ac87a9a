// The reference server's answer to Hello. The specification leaves the reply's meaning open ("not shown");
// this implementation greets: "Hello, <body>" for a non-empty body, "Hello" for the empty (default) body.
// It is a pure function of the request body: no per-client, per-connection or per-call state.
// The suites never assume it: they judge only the reply's shape and its independence from history.

export function helloReply(body: string): string {
  return helloReplyParts(body).join("");
}

/** The reply as the strings it is made of, so that a server can write the body it quotes without copying it. */
export function helloReplyParts(body: string): readonly string[] {
  return body === "" ? ["Hello"] : ["Hello, ", body];
}
