// grpc.encoding.unsupported: a request compressed with an encoding the server does not know gets UNIMPLEMENTED.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, type CheckContext, type CheckDefinition } from "../../harness/check.js";
import { Status, type RawResponse } from "../../harness/targets/grpc-target.js";
import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";

export const UNKNOWN_ENCODING = "x-conformance-unknown";

/** One message flagged compressed with an encoding no server knows. */
export function sendUnknownEncoding(ctx: CheckContext): Promise<RawResponse> {
  return target(ctx).raw({
    headers: { "grpc-encoding": UNKNOWN_ENCODING },
    body: [{ compressed: true, data: encodeMessage("opaque") }],
  });
}

export const encodingUnsupported: CheckDefinition = {
  id: "grpc.encoding.unsupported",
  title: `a message compressed with grpc-encoding ${UNKNOWN_ENCODING} gets UNIMPLEMENTED`,
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC compression.md (unsupported encoding: UNIMPLEMENTED)",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: ["grpc"],
  async run(ctx) {
    const res = await sendUnknownEncoding(ctx);
    if (rawStatus(res) === Status.UNIMPLEMENTED) return pass("UNIMPLEMENTED");
    return fail(`an unknown grpc-encoding got ${describeRaw(res)}, not 12 UNIMPLEMENTED`);
  },
};
