// Whether a target speaks Connect, asked before any check: one unary POST of Hello, its reply read for Connect's shape.
import { decodeMessage, encodeMessage } from "../../../contract/message.js";
import type { PlainResponse } from "../http-exchange.js";
import {
  describeReply,
  http2OnlyTls,
  isDocumentType,
  mediaTypeOf,
  noReply,
  SAYS_NOTHING_OF_PROTOCOL,
} from "../http-rpc.js";
import type { ProbeAnswer, SpeaksProbe } from "../protocol.js";

/**
 * Connect's reply to a unary call: 200 with the message (a label other than application/proto is a defect the checks
 * judge, not another protocol), or an error, which Connect sends as JSON with a string `code`. A page, a JSON document
 * without a code or a gRPC reply is another server's; 401, 403 and 429 may be a guard's in front of any server.
 */
export function connectAnswer(res: PlainResponse): ProbeAnswer {
  // A slow target is no wrong protocol: whether it answers at all is the run's to find.
  if (res.failure?.kind === "timeout") return { speaks: true };
  if (res.status === undefined) return noReply(res);
  const type = mediaTypeOf(res.headers);
  const other = { speaks: false as const, answered: describeReply(res.status, res.headers, res.body) };
  if (type.startsWith("application/grpc"))
    return {
      ...other,
      answered: `${other.answered}, a ${type.startsWith("application/grpc-web") ? "gRPC-Web" : "gRPC"} reply`,
    };
  const h2only = http2OnlyTls(res);
  if (h2only !== undefined) return { speaks: false, answered: h2only };
  if (SAYS_NOTHING_OF_PROTOCOL.has(res.status)) return { speaks: true };
  if (res.status === 200) {
    if (isDocumentType(type) || type.endsWith("/html")) return other;
    return type !== "" || res.body.length === 0 || decodeMessage(res.body).ok ? { speaks: true } : other;
  }
  return isConnectError(res) ? { speaks: true } : other;
}

function isConnectError(res: PlainResponse): boolean {
  if (mediaTypeOf(res.headers) !== "application/json") return false;
  try {
    const error = JSON.parse(Buffer.from(res.body).toString("utf8")) as unknown;
    return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string";
  } catch {
    return false;
  }
}

const PROBE_BODY = "example-conformance set-up probe";

/** A unary POST of Hello in one codec, as the probe sends it. */
function helloRequest(type: "application/proto" | "application/json", timeoutMs: number) {
  const body =
    type === "application/proto"
      ? encodeMessage(PROBE_BODY)
      : new TextEncoder().encode(JSON.stringify({ body: PROBE_BODY }));
  return {
    channel: "fresh" as const,
    timeoutMs,
    headers: { "content-type": type, "connect-protocol-version": "1", "connect-timeout-ms": String(timeoutMs) },
    body,
  };
}

/**
 * Connect's reply to a unary call in its JSON codec: the message as a JSON object, or an error (see connectAnswer).
 * Asked only after a 415 to the binary codec, so that a server that takes JSON alone is judged, not refused here.
 */
export function connectJsonAnswer(res: PlainResponse): ProbeAnswer {
  if (res.status === 200 && mediaTypeOf(res.headers) === "application/json") {
    try {
      const message = JSON.parse(Buffer.from(res.body).toString("utf8")) as unknown;
      if (typeof message === "object" && message !== null && !Array.isArray(message)) return { speaks: true };
    } catch {
      // Not JSON: read as any other reply below.
    }
  }
  return connectAnswer(res);
}

/** Binary first; a 415 that is no Connect error (a server of the JSON codec alone) is asked again in JSON. */
export const connectSpeaks: SpeaksProbe = {
  spoken: "Connect",
  expected:
    "a Connect reply to a unary POST of Hello (application/proto, or application/json after a 415): the message, " +
    "or an error as JSON with a code",
  async ask(transport, timeoutMs) {
    if (!transport.exchange) return { speaks: true };
    const res = await transport.exchange(helloRequest("application/proto", timeoutMs));
    const answer = connectAnswer(res);
    if (answer.speaks || res.status !== 415) return answer;
    return connectJsonAnswer(await transport.exchange(helloRequest("application/json", timeoutMs)));
  },
};
