// The RPC vocabulary every protocol, target and check shares: the Hello path, gRPC's status codes and their words,
// and what a unary call, a hand-built HTTP/2 request and a plain HTTP exchange send and get back.
import type { TraceSink } from "../trace/exchange-record.js";

/** The method every check calls unless it asks for another. */
export const HELLO_PATH = "/example.exampleService/Hello";

/**
 * The status a gRPC client gives a reply that is not gRPC (no grpc-status), by its HTTP status: grpc/grpc
 * doc/http-grpc-status-mapping.md. A proxy's error page (502 text/html) is UNAVAILABLE, not a message to parse.
 */
export function grpcStatusOfHttp(httpStatus: number): number {
  const mapped: Record<number, number> = { 400: 13, 401: 16, 403: 7, 404: 12, 429: 14, 502: 14, 503: 14, 504: 14 };
  return mapped[httpStatus] ?? 2;
}

/**
 * Whether a response may carry gRPC messages: HTTP 200 (gRPC's mapping reads any other status as no gRPC reply) and
 * no text content type (an error page). A wrong but binary content type still carries messages: the content-type
 * check judges that, and nothing else should fail for it.
 */
export function isGrpcReply(
  httpStatus: number | undefined,
  headers: Readonly<Record<string, readonly string[]>>,
): boolean {
  return httpStatus === 200 && !/^text\//i.test(headers["content-type"]?.[0] ?? "");
}

/** gRPC status codes (grpc/grpc doc/statuscodes.md). */
export const Status = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export const statusName = (code: number): string =>
  Object.entries(Status).find(([, v]) => v === code)?.[0] ?? `CODE_${code}`;

/** `${code} ${NAME}: ${details}`, as grpc-node prints a status. */
export const statusText = (code: number, details = ""): string =>
  `${code} ${statusName(code)}${details ? `: ${details}` : ""}`;

/** grpc-message as sent, percent-decoded (gRPC's PROTOCOL-HTTP2.md); as sent where it does not decode. */
export function grpcMessage(message: string | undefined): string {
  if (message === undefined || !message.includes("%")) return message ?? "";
  try {
    return decodeURIComponent(message);
  } catch {
    return message;
  }
}

export type MetadataValue = string | Uint8Array;

export interface UnaryCallOptions {
  /** Custom metadata; keys ending in -bin take bytes. */
  metadata?: Readonly<Record<string, MetadataValue>>;
  /** Deadline in milliseconds from the start of the call; default the target's --timeout. */
  deadlineMs?: number;
  /** "shared" reuses the target's channel; "fresh" opens a new connection for this call and closes it after. */
  channel?: "shared" | "fresh";
  /** The method path; default /example.exampleService/Hello. */
  path?: string;
  /** Ends the call (cancelled) when aborted: the check it belongs to has run out of time. */
  signal?: AbortSignal;
  /** With --trace: where the call reports its exchange (the session gives it, as it gives signal). */
  trace?: TraceSink;
  /**
   * The check judges a refusal of this call (it provokes RESOURCE_EXHAUSTED on purpose): a pushback is not waited
   * out, the check sees the answer as sent (harness/targets/backpressure.ts).
   */
  refusalJudged?: boolean;
}

/** What an ordinary client (grpc-js) sees of a unary call. */
export interface UnaryResult {
  code: number;
  details: string;
  /** The response message's bytes, exactly as received (pass-through deserializer); absent when none. */
  response?: Uint8Array;
  /** Response header metadata (lowercased keys). */
  headers: Record<string, string[]>;
  /** Trailing metadata (lowercased keys). */
  trailers: Record<string, string[]>;
}

/** The call got no answer at all: its connection failed or dropped before any header came (the client's status). */
export const droppedBeforeAnswer = (r: Pick<UnaryResult, "code" | "headers">): boolean =>
  r.code === Status.UNAVAILABLE && Object.keys(r.headers).length === 0;

/** One length-prefixed gRPC message as it travels: the compressed flag and the payload. */
export interface GrpcFrame {
  compressed: boolean;
  data: Uint8Array;
}

/** A hand-built HTTP/2 request, for wire-level checks that the grpc-js client would normalise away. */
export interface RawRequest {
  /** :path; default /example.exampleService/Hello. */
  path?: string;
  /** :method; default POST. */
  method?: string;
  /** Headers sent instead of the defaults (content-type application/grpc, te trailers); null removes one. */
  headers?: Readonly<Record<string, string | null>>;
  /** The request body: frames, which are length-prefixed here, or bytes sent exactly as given. */
  body?: readonly GrpcFrame[] | Uint8Array;
  /**
   * Bound on the exchange from when its connection is up (the connection has the target's --timeout); default
   * --timeout.
   */
  timeoutMs?: number;
  /** With --trace: where the exchange is reported. */
  trace?: TraceSink;
  /** As UnaryCallOptions.refusalJudged: a pushback is not waited out for this request. */
  refusalJudged?: boolean;
  /** Ends the waits a pushback asked for when aborted: the check's time is up (the session gives it). */
  signal?: AbortSignal;
}

/** Everything the server sent back, unnormalised. */
export interface RawResponse {
  /** :status, when response headers arrived. */
  httpStatus?: number;
  headers: Record<string, string[]>;
  /** Trailers; for a trailers-only response, the one header block is reported here and in headers. */
  trailers: Record<string, string[]>;
  trailersOnly: boolean;
  /** Complete length-prefixed messages received. */
  frames: GrpcFrame[];
  /** Bytes after the last complete message (a truncated frame), if any. */
  leftover: number;
  /** How the exchange ended, when not with a normal end of stream. */
  failure?:
    | { kind: "reset"; http2Code: number }
    | { kind: "goaway"; http2Code: number }
    | { kind: "timeout" }
    | { kind: "connection"; message: string };
}

/** One plain HTTP request of a protocol spoken over HTTP (Connect, gRPC-Web), for its wire checks. */
export interface PlainRequest {
  method?: string;
  /** Appended to the base URL's path; default the Hello procedure. */
  path?: string;
  headers?: Readonly<Record<string, string>>;
  body?: Uint8Array;
  timeoutMs?: number;
  channel?: "shared" | "fresh";
  /** Ends the exchange when aborted. */
  signal?: AbortSignal;
  /** With --trace: where the exchange is reported. */
  trace?: TraceSink;
}

/** Everything that came back for a PlainRequest, unnormalised. */
export interface PlainResponse {
  status?: number;
  headers: Record<string, string[]>;
  body: Uint8Array;
  failure?:
    | { kind: "timeout" }
    | { kind: "connection"; message: string }
    | { kind: "too-large" }
    | { kind: "undecodable"; message: string };
}
