// grpc.encoding.flag-without-encoding: the compressed flag with no grpc-encoding is a protocol error: INTERNAL.
import { encodeMessage } from "../../common/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { Status } from "../../harness/protocols/rpc.js";
import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

export const encodingFlagWithoutEncoding: CheckDefinition = {
  id: "grpc.encoding.flag-without-encoding",
  title: "a message flagged compressed on a call with no grpc-encoding gets INTERNAL",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC PROTOCOL-HTTP2.md (Compressed-Flag), compression.md",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const res = await target(ctx).raw({ body: [{ compressed: true, data: encodeMessage("not really compressed") }] });
    if (rawStatus(res) === Status.INTERNAL) return pass("INTERNAL");
    return fail(`the compressed flag without grpc-encoding got ${describeRaw(res)}, not 13 INTERNAL`);
  },
};
