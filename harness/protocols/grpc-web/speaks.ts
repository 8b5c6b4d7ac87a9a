// Whether a target speaks gRPC-Web, asked before any check: one unary POST of Hello, its reply read for gRPC's marks.
import { encodeMessage } from "../../../contract/message.js";
import type { PlainResponse } from "../http-exchange.js";
import {
  describeReply,
  http2OnlyTls,
  httpSpeaksProbe,
  mediaTypeOf,
  noReply,
  SAYS_NOTHING_OF_PROTOCOL,
} from "../http-rpc.js";
import type { ProbeAnswer, SpeaksProbe } from "../protocol.js";
import { frame, parseFrames, parseTrailerBlock } from "./codec.js";

/**
 * gRPC-Web's reply carries gRPC's marks: a content-type of application/grpc-web (application/grpc is a defect the
 * checks judge, not another protocol), or a grpc-status in the headers or in a trailer frame. Anything else (a JSON
 * document, a page, a Connect reply) is another server's; 401, 403 and 429 may be a guard's in front of any server.
 */
export function grpcWebAnswer(res: PlainResponse): ProbeAnswer {
  // A slow target is no wrong protocol: whether it answers at all is the run's to find.
  if (res.failure?.kind === "timeout") return { speaks: true };
  if (res.status === undefined) return noReply(res);
  if (mediaTypeOf(res.headers).startsWith("application/grpc") || res.headers["grpc-status"] !== undefined)
    return { speaks: true };
  const h2only = http2OnlyTls(res);
  if (h2only !== undefined) return { speaks: false, answered: h2only };
  if (SAYS_NOTHING_OF_PROTOCOL.has(res.status)) return { speaks: true };
  const trailer = parseFrames(res.body).frames.find((f) => (f.flags & 0x80) !== 0);
  if (trailer && parseTrailerBlock(trailer.data)["grpc-status"] !== undefined) return { speaks: true };
  return { speaks: false, answered: `${describeReply(res.status, res.headers, res.body)}, with no grpc-status` };
}

export const grpcWebSpeaks: SpeaksProbe = httpSpeaksProbe(
  "gRPC-Web",
  "a gRPC-Web reply to a unary POST of Hello (application/grpc-web+proto): content-type application/grpc-web or " +
    "a grpc-status",
  (timeoutMs) => ({
    headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", "grpc-timeout": `${timeoutMs}m` },
    body: frame(0, encodeMessage("example-conformance set-up probe")),
  }),
  grpcWebAnswer,
);
