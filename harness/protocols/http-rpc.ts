// What the RPC protocols over plain HTTP share: metadata as headers, the code an HTTP status stands for, a failed
// exchange as the status an ordinary client would report, and a reply body inflated within its bound.
import { Status, type MetadataValue, type UnaryResult } from "./rpc.js";
import { inflate, isIdentity } from "../targets/inflate.js";
import { createHttpExchange, MAX_BODY, type PlainResponse } from "./http-exchange.js";
import type { ProbeAnswer, SpeaksProbe, TransportSetup, UnaryTransport } from "./protocol.js";

/** Metadata as HTTP headers: -bin values base64, as both protocols carry them. */
export function metadataHeaders(
  fixed: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, MetadataValue>> = {},
): Record<string, string> {
  const out: Record<string, string> = { ...fixed };
  for (const [k, v] of Object.entries(extra)) out[k] = typeof v === "string" ? v : Buffer.from(v).toString("base64");
  return out;
}

/** The code an HTTP status stands for when no RPC status came with it (Connect and gRPC-Web use gRPC's mapping). */
export function codeForHttpStatus(status: number): number {
  if (status === 400) return Status.INTERNAL;
  if (status === 401) return Status.UNAUTHENTICATED;
  if (status === 403) return Status.PERMISSION_DENIED;
  if (status === 404) return Status.UNIMPLEMENTED;
  if (status === 429 || status === 502 || status === 503 || status === 504) return Status.UNAVAILABLE;
  return Status.UNKNOWN;
}

/** The status of an exchange that brought no usable reply, as an ordinary client reports it; undefined when it did. */
export function failed(res: PlainResponse, deadline: number): UnaryResult | undefined {
  if (res.failure?.kind === "timeout")
    return { code: Status.DEADLINE_EXCEEDED, details: `no answer within ${deadline} ms`, headers: {}, trailers: {} };
  if (res.failure?.kind === "too-large")
    return {
      code: Status.RESOURCE_EXHAUSTED,
      details: `response larger than ${MAX_BODY} bytes`,
      headers: res.headers,
      trailers: {},
    };
  if (res.failure?.kind === "undecodable")
    return {
      code: res.failure.message.includes("inflates past") ? Status.RESOURCE_EXHAUSTED : Status.INTERNAL,
      details: res.failure.message,
      headers: res.headers,
      trailers: {},
    };
  if (res.status === undefined)
    return {
      code: Status.UNAVAILABLE,
      details: res.failure?.kind === "connection" ? res.failure.message : "no response",
      headers: {},
      trailers: {},
    };
  return undefined;
}

/** The response with its body inflated from this encoding (within MAX_BODY), or failed saying why not. */
export async function inflatedBody(res: PlainResponse, encoding: string | undefined): Promise<PlainResponse> {
  if (res.failure !== undefined || isIdentity(encoding)) return res;
  const inflated = await inflate(res.body, encoding as string, MAX_BODY);
  if (inflated.ok) return { ...res, body: inflated.bytes };
  return {
    ...res,
    body: new Uint8Array(),
    failure: { kind: "undecodable", message: `the reply (${encoding}): ${inflated.message}` },
  };
}

/** How one protocol over plain HTTP carries a unary call: the request's headers and body, and how a reply reads. */
export interface HttpRpcCodec {
  /** The protocol's name as a trace records it (its module's). */
  readonly traceAs: string;
  request(
    message: Uint8Array,
    deadlineMs: number,
    metadata: Record<string, string>,
  ): { headers: Record<string, string>; body: Uint8Array };
  reply(response: PlainResponse, deadlineMs: number): Promise<UnaryResult> | UnaryResult;
}

/** A unary transport over the shared HTTP exchange layer, speaking the codec's protocol. */
export function createHttpRpcTransport(
  { conn, url, tls, onExchange }: TransportSetup,
  codec: HttpRpcCodec,
): UnaryTransport {
  const http = createHttpExchange({
    baseUrl: url as URL,
    timeoutMs: conn.timeoutMs,
    ...(tls && { tls }),
    ...(conn.authority !== undefined && { authority: conn.authority }),
    ...(onExchange && { onExchange }),
    traceAs: codec.traceAs,
  });
  return {
    async unary(message, options = {}) {
      const deadline = options.deadlineMs ?? conn.timeoutMs;
      const res = await http.exchange({
        ...(options.path !== undefined && { path: options.path }),
        ...(options.signal && { signal: options.signal }),
        ...(options.trace && { trace: options.trace }),
        channel: options.channel ?? "shared",
        timeoutMs: deadline,
        ...codec.request(message, deadline, metadataHeaders(conn.metadata, options.metadata)),
      });
      return await codec.reply(res, deadline);
    },
    exchange: (request) => http.exchange(request),
    close: () => http.close(),
  };
}

/** The media type of a reply, lowercased and without parameters; "" when it names none. */
export function mediaTypeOf(headers: Readonly<Record<string, readonly string[]>>): string {
  return (headers["content-type"]?.[0] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** Media types no RPC reply carries on success: a page or a document of a plain HTTP server. */
export const isDocumentType = (type: string): boolean =>
  type.startsWith("text/") ||
  type === "application/json" ||
  type.endsWith("+json") ||
  type.endsWith("/xml") ||
  type.endsWith("+xml");

/** A reply in a few words for a line that refuses a target: its status, media type and the start of its body. */
export function describeReply(
  status: number,
  headers: Readonly<Record<string, readonly string[]>>,
  body: Uint8Array,
): string {
  const type = mediaTypeOf(headers);
  const text = Buffer.from(body.subarray(0, 60)).toString("utf8");
  const printable = body.length > 0 && !/[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text);
  const start =
    body.length === 0
      ? ", empty"
      : printable
        ? ` ${JSON.stringify(body.length > 60 ? `${text}...` : text)}`
        : ` (${body.length} bytes)`;
  return `HTTP ${status} ${type === "" ? "with no content-type" : type}${start}`;
}

/** The answer of an exchange that got no HTTP reply: what failed, for the probe that asked. */
export const noReply = (res: PlainResponse): { speaks: false; answered: string; noReply: true } => ({
  speaks: false,
  noReply: true,
  answered:
    res.failure?.kind === "timeout"
      ? "no reply in time"
      : `no HTTP/1.1 reply (${res.failure?.kind === "connection" ? res.failure.message : "the connection ended"})`,
});

/**
 * Node's HTTP/2-only TLS server answers a client that offered no ALPN h2 (an HTTP/1.1 client) itself: 403 text/plain,
 * "Missing ALPN Protocol, expected `h2` to be available". Not a guard's 403: the port speaks HTTP/2 alone.
 */
export function http2OnlyTls(res: PlainResponse): string | undefined {
  if (
    res.status !== 403 ||
    !Buffer.from(res.body.subarray(0, 40)).toString("latin1").startsWith("Missing ALPN Protocol")
  )
    return undefined;
  return `${describeReply(res.status, res.headers, res.body)}: an HTTP/2-only TLS port, as a gRPC server's is`;
}

/** Statuses a gateway or a guard in front of any server may send in its own words: they say nothing of the protocol. */
export const SAYS_NOTHING_OF_PROTOCOL: ReadonlySet<number> = new Set([401, 403, 429]);

/**
 * The set-up probe of a protocol over plain HTTP: one POST of Hello on a connection of its own, as `request` builds
 * it for the probe's time bound, its reply read by `answer`.
 */
export function httpSpeaksProbe(
  spoken: string,
  expected: string,
  request: (timeoutMs: number) => { headers: Record<string, string>; body: Uint8Array },
  answer: (res: PlainResponse) => ProbeAnswer,
): SpeaksProbe {
  return {
    spoken,
    expected,
    async ask(transport, timeoutMs) {
      if (!transport.exchange) return { speaks: true };
      return answer(await transport.exchange({ channel: "fresh", timeoutMs, ...request(timeoutMs) }));
    },
  };
}
