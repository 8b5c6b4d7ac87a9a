// One message flagged compressed with an encoding no server knows: what grpc.encoding.accept-encoding sends to read
// the server's grpc-accept-encoding (fixtures/golden/grpc/encoding-unsupported.json sends the same to judge the
// status).
import { encodeMessage } from "../../../contract/message.js";
import type { CheckContext } from "../../../harness/check.js";
import type { RawResponse } from "../../../harness/protocols/rpc.js";
import { target } from "./calls.js";

export const UNKNOWN_ENCODING = "x-conformance-unknown";

export function sendUnknownEncoding(ctx: CheckContext): Promise<RawResponse> {
  return target(ctx).raw({
    headers: { "grpc-encoding": UNKNOWN_ENCODING },
    body: [{ compressed: true, data: encodeMessage("opaque") }],
  });
}
