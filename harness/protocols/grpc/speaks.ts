// Whether a target that completed the HTTP/2 handshake speaks gRPC, asked before any check: one call of Hello by hand.
import { encodeMessage } from "../../../contract/message.js";
import type { RawResponse } from "../rpc.js";
import { mediaTypeOf, SAYS_NOTHING_OF_PROTOCOL } from "../http-rpc.js";
import type { ProbeAnswer, SpeaksProbe } from "../protocol.js";

/**
 * gRPC's reply carries its marks: a content-type of application/grpc (another label is a defect the checks judge), or a
 * grpc-status in the headers or trailers. An HTTP/2 server that answers with neither (a JSON API, a proxy's page) is
 * not a gRPC server; 401, 403 and 429 may be a guard's in front of any server.
 */
export function grpcAnswer(res: RawResponse): ProbeAnswer {
  // No reply (a reset, a timeout) is judged by the checks and the run's end, as it always was: the handshake passed.
  if (res.httpStatus === undefined) return { speaks: true };
  if (mediaTypeOf(res.headers).startsWith("application/grpc")) return { speaks: true };
  if (res.headers["grpc-status"] !== undefined || res.trailers["grpc-status"] !== undefined) return { speaks: true };
  if (SAYS_NOTHING_OF_PROTOCOL.has(res.httpStatus)) return { speaks: true };
  const type = mediaTypeOf(res.headers);
  const bytes = res.frames.reduce((n, f) => n + 5 + f.data.length, 0) + res.leftover;
  return {
    speaks: false,
    answered:
      `HTTP ${res.httpStatus} ${type === "" ? "with no content-type" : type}` + ` (${bytes} bytes) and no grpc-status`,
  };
}

export const grpcSpeaks: SpeaksProbe = {
  spoken: "gRPC",
  expected: "a gRPC reply to a call of Hello: content-type application/grpc or a grpc-status",
  async ask(transport, timeoutMs) {
    if (!transport.raw) return { speaks: true };
    return grpcAnswer(
      await transport.raw({
        body: [{ compressed: false, data: encodeMessage("example-conformance set-up probe") }],
        timeoutMs,
      }),
    );
  },
};
