// grpc-web.trailers.in-body: a gRPC-Web reply carries its status in a trailer frame at the end of the body.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { parseFrames, parseTrailerBlock } from "../../harness/protocols/grpc-web/index.js";
import { describe, grpcWebPost } from "../rpc/_internals/exchange.js";
import { GRPC_WEB } from "../../harness/protocols/grpc-web/index.js";

export const grpcWebTrailersInBody: CheckDefinition = {
  id: "grpc-web.trailers.in-body",
  title: "a gRPC-Web reply ends its body with a trailer frame (flag 0x80) that carries grpc-status",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC PROTOCOL-WEB.md (trailers are the last message of the body, MSB of the flag byte set)",
  protocols: [GRPC_WEB],
  async run(ctx) {
    const res = await grpcWebPost(ctx, encodeMessage("trailers"));
    if (res.status !== 200) return fail(`a gRPC-Web Hello call got ${describe(res)}, not 200`);
    const { frames, leftover } = parseFrames(res.body);
    const last = frames.at(-1);
    if (!last || (last.flags & 0x80) === 0)
      return fail(
        `the reply body has no trailer frame at its end (${frames.length} frame(s), ${leftover} bytes left over)`,
      );
    const status = parseTrailerBlock(last.data)["grpc-status"]?.[0];
    if (status === undefined) return fail("the trailer frame carries no grpc-status");
    if (leftover > 0) return fail(`${leftover} bytes follow the last whole frame`);
    return pass(`trailer frame with grpc-status ${JSON.stringify(status)}`);
  },
};
