// connect.get: where a server serves Connect GET for Hello, the reply is the reply to the message in the query.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { asReply, hello, show } from "../grpc/_internals/calls.js";
import { compareReplies } from "../grpc/_internals/variation.js";
import { describe, exchange } from "../rpc/_internals/exchange.js";
import { CONNECT } from "../../harness/protocols/connect/index.js";

export const connectGet: CheckDefinition = {
  id: "connect.get",
  title: "where Connect GET is served for Hello, its reply is the reply to the message its query carries",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  // The contract does not mark Hello free of side effects, so serving GET is the server's choice: one that does
  // not is skipped, not failed.
  spec: "Connect protocol (unary GET requests: connect, encoding, base64 and message query parameters)",
  protocols: [CONNECT],
  async run(ctx) {
    const body = "connect get";
    const message = encodeMessage(body);
    const query = new URLSearchParams({
      connect: "v1",
      encoding: "proto",
      base64: "1",
      message: Buffer.from(message).toString("base64url"),
    });
    const res = await exchange(ctx, { method: "GET", path: `/example.exampleService/Hello?${query}` });
    if (res.failure) return fail(`a GET call got ${describe(res)}`);
    if (res.status !== 200)
      return skip(`GET is not served for Hello (${describe(res)}): the contract leaves it to the server`);
    const post = asReply(await hello(ctx, message));
    if (!post.ok) return skip(`the same message sent by POST was not served (${post.reason}): nothing to compare`);
    const got = asReply({ code: 0, details: "", response: res.body, headers: {}, trailers: {} });
    if (!got.ok) return fail(`the GET reply does not decode as Message: ${got.reason}`);
    const same = await compareReplies(ctx, got.message.body, post.message.body);
    if (same.verdict === "differ")
      return fail(
        `the GET reply ${show(got.message.body)} is not the reply to its message ${show(body)}, which is ` +
          `${show(post.message.body)}`,
      );
    return pass(`GET served the reply to its message${same.note}`);
  },
};
