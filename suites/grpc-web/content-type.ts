// grpc-web.content-type: a gRPC-Web reply is labelled as gRPC-Web.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { describe, grpcWebPost, header, mediaType } from "../rpc/_internals/exchange.js";
import { GRPC_WEB } from "../../harness/protocols/grpc-web/index.js";

export const grpcWebContentType: CheckDefinition = {
  id: "grpc-web.content-type",
  title: "a gRPC-Web reply to a binary request is labelled application/grpc-web (optionally +proto)",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC PROTOCOL-WEB.md (Content-Type application/grpc-web[+proto])",
  protocols: [GRPC_WEB],
  async run(ctx) {
    const res = await grpcWebPost(ctx, encodeMessage("content type"));
    if (res.status !== 200) return fail(`a gRPC-Web Hello call got ${describe(res)}, not 200`);
    const type = mediaType(res);
    if (type !== "application/grpc-web" && type !== "application/grpc-web+proto") {
      return fail(
        `the reply is labelled ${JSON.stringify(header(res, "content-type") ?? null)}, not ` +
          `application/grpc-web[+proto]`,
      );
    }
    return pass(`labelled ${type}`);
  },
};
