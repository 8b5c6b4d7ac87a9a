// The reference server's answer to Hello. The specification leaves the reply's meaning open ("not shown");
// this implementation greets: "Hello, <body>" for a non-empty body, "Hello" for the empty (default) body.
// It is a pure function of the request body: no per-client, per-connection or per-call state.
// The suites never assume it: they judge only the reply's shape and its independence from history.

export function helloReply(body: string): string {
  return body === "" ? "Hello" : `Hello, ${body}`;
}
