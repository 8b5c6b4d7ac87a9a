// connect.unary.content-type: a Connect unary reply to a binary request is labelled application/proto.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { connectPost, describe, header, mediaType } from "../rpc/_internals/exchange.js";
import { CONNECT } from "../../harness/protocols/connect/index.js";

export const connectUnaryContentType: CheckDefinition = {
  id: "connect.unary.content-type",
  title: "a Connect unary call in binary gets 200 with Content-Type application/proto and the message as the body",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec: "Connect protocol (unary request and response: Content-Type application/proto)",
  protocols: [CONNECT],
  async run(ctx) {
    const res = await connectPost(ctx, encodeMessage("content type"));
    if (res.status !== 200) return fail(`a binary Hello call got ${describe(res)}, not 200`);
    const type = mediaType(res);
    if (type !== "application/proto")
      return fail(
        `a binary Hello reply is labelled ${JSON.stringify(header(res, "content-type") ?? null)}, not ` +
          `application/proto`,
      );
    return pass("200 application/proto");
  },
};
