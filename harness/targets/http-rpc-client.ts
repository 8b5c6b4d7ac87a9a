// The ordinary client for RPC over HTTP/1.1 or HTTP/2 without gRPC's framing rules: the Connect protocol's unary
// calls and gRPC-Web's, with raw bytes in and out like GrpcJsClient, and one plain exchange for wire checks.
// Protocols: connectrpc.com/docs/protocol (Connect) and grpc/grpc PROTOCOL-WEB.md (gRPC-Web).
import http from "node:http";
import https from "node:https";
import type { MetadataValue, UnaryCallOptions, UnaryResult } from "./grpc-target.js";
import { Status } from "./grpc-target.js";
import type { TlsMaterial } from "./connection.js";
import { HELLO_PATH } from "./grpc-js-client.js";
import { inflate, isIdentity } from "./inflate.js";
import { MAX_REPLY_BYTES } from "./read-bounds.js";
import type { TraceSink } from "../trace/exchange-record.js";
import { plainRecord } from "../trace/records.js";

export type HttpRpcProtocol = "connect" | "grpc-web";

/** Largest response body read, and largest a compressed reply may inflate to; past it the call ends RESOURCE_EXHAUSTED. */
const MAX_BODY = MAX_REPLY_BYTES;

export interface HttpRpcOptions {
  /** http(s)://host:port[/prefix]: procedures are at prefix + /package.Service/Method. */
  baseUrl: URL;
  metadata: Readonly<Record<string, string>>;
  timeoutMs: number;
  tls?: TlsMaterial;
  authority?: string;
}

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

export interface PlainResponse {
  status?: number;
  headers: Record<string, string[]>;
  body: Uint8Array;
  failure?: { kind: "timeout" } | { kind: "connection"; message: string } | { kind: "too-large" } | { kind: "undecodable"; message: string };
}

/** Connect's error codes (its protocol document), by the gRPC code each stands for. */
export const CONNECT_CODES: Readonly<Record<string, number>> = {
  canceled: Status.CANCELLED,
  unknown: Status.UNKNOWN,
  invalid_argument: Status.INVALID_ARGUMENT,
  deadline_exceeded: Status.DEADLINE_EXCEEDED,
  not_found: Status.NOT_FOUND,
  already_exists: Status.ALREADY_EXISTS,
  permission_denied: Status.PERMISSION_DENIED,
  resource_exhausted: Status.RESOURCE_EXHAUSTED,
  failed_precondition: Status.FAILED_PRECONDITION,
  aborted: Status.ABORTED,
  out_of_range: Status.OUT_OF_RANGE,
  unimplemented: Status.UNIMPLEMENTED,
  internal: Status.INTERNAL,
  unavailable: Status.UNAVAILABLE,
  data_loss: Status.DATA_LOSS,
  unauthenticated: Status.UNAUTHENTICATED,
};

/** The code an HTTP status stands for when no RPC status came with it (both protocols use gRPC's mapping). */
export function codeForHttpStatus(status: number): number {
  if (status === 400) return Status.INTERNAL;
  if (status === 401) return Status.UNAUTHENTICATED;
  if (status === 403) return Status.PERMISSION_DENIED;
  if (status === 404) return Status.UNIMPLEMENTED;
  if (status === 429 || status === 502 || status === 503 || status === 504) return Status.UNAVAILABLE;
  return Status.UNKNOWN;
}

/** Metadata as HTTP headers: -bin values base64, as both protocols carry them. */
function metadataHeaders(fixed: Readonly<Record<string, string>>, extra: Readonly<Record<string, MetadataValue>> = {}): Record<string, string> {
  const out: Record<string, string> = { ...fixed };
  for (const [k, v] of Object.entries(extra)) out[k] = typeof v === "string" ? v : Buffer.from(v).toString("base64");
  return out;
}

function headerRecord(raw: http.IncomingHttpHeaders): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  return out;
}

/** One length-prefixed frame: flag byte, 4-byte big-endian length, payload. */
export function frame(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
}

/** The frames of a gRPC-Web body, and how many bytes were left over after the last whole one. */
export function parseFrames(body: Uint8Array): { frames: { flags: number; data: Uint8Array }[]; leftover: number } {
  const frames: { flags: number; data: Uint8Array }[] = [];
  let at = 0;
  while (body.length - at >= 5) {
    const length = new DataView(body.buffer, body.byteOffset + at + 1, 4).getUint32(0);
    if (body.length - at - 5 < length) break;
    frames.push({ flags: body[at] as number, data: body.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return { frames, leftover: body.length - at };
}

/** gRPC-Web's trailer frame: HTTP/1-style header lines, keys lowercased. */
export function parseTrailerBlock(data: Uint8Array): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of Buffer.from(data).toString("latin1").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    (out[key] ??= []).push(line.slice(colon + 1).trim());
  }
  return out;
}

const percentDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

export class HttpRpcClient {
  readonly #options: HttpRpcOptions;
  readonly #agent: http.Agent;

  constructor(readonly protocol: HttpRpcProtocol, options: HttpRpcOptions) {
    this.#options = options;
    this.#agent = options.baseUrl.protocol === "https:" ? new https.Agent({ keepAlive: true, ...options.tls }) : new http.Agent({ keepAlive: true });
  }

  /** One request exactly as given (on a connection of its own when asked), and everything that came back. */
  exchange(request: PlainRequest): Promise<PlainResponse> {
    const base = this.#options.baseUrl;
    const url = new URL(base.pathname.replace(/\/$/, "") + (request.path ?? HELLO_PATH), base);
    const secure = url.protocol === "https:";
    const timeoutMs = request.timeoutMs ?? this.#options.timeoutMs;
    const startedAt = Date.now();
    const sentHeaders = { ...(this.#options.authority !== undefined && { host: this.#options.authority }), ...request.headers };
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: PlainResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener("abort", cancel);
        request.trace?.(() => plainRecord(this.protocol, { method: options.method as string, url: url.href, headers: sentHeaders, ...(request.body && { body: request.body }) }, startedAt, r));
        resolve(r);
      };
      const options: https.RequestOptions = {
        method: request.method ?? "POST",
        headers: sentHeaders,
        agent: request.channel === "fresh" ? false : this.#agent,
        ...(secure && this.#options.tls),
        ...(secure && this.#options.authority !== undefined && { servername: this.#options.authority.replace(/:\d+$/, "") }),
      };
      const req = (secure ? https : http).request(url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY) {
            req.destroy();
            done({ status: res.statusCode ?? 0, headers: headerRecord(res.headers), body: new Uint8Array(), failure: { kind: "too-large" } });
            return;
          }
          chunks.push(c);
        });
        res.on("end", () => done({ status: res.statusCode ?? 0, headers: headerRecord(res.headers), body: new Uint8Array(Buffer.concat(chunks)) }));
        res.on("error", (err) => done({ status: res.statusCode ?? 0, headers: headerRecord(res.headers), body: new Uint8Array(Buffer.concat(chunks)), failure: { kind: "connection", message: err.message } }));
      });
      const timer = setTimeout(() => {
        req.destroy();
        done({ headers: {}, body: new Uint8Array(), failure: { kind: "timeout" } });
      }, timeoutMs);
      req.on("error", (err) => done({ headers: {}, body: new Uint8Array(), failure: { kind: "connection", message: err.message } }));
      const cancel = () => req.destroy(new Error("cancelled: the check ran out of time"));
      request.signal?.addEventListener("abort", cancel, { once: true });
      req.end(request.body === undefined ? undefined : Buffer.from(request.body));
    });
  }

  /** A unary call over the protocol, seen as an ordinary client sees it. */
  async unary(request: Uint8Array, options: UnaryCallOptions = {}): Promise<UnaryResult> {
    const deadline = options.deadlineMs ?? this.#options.timeoutMs;
    const metadata = metadataHeaders(this.#options.metadata, options.metadata);
    const common = {
      ...(options.path !== undefined && { path: options.path }),
      ...(options.signal && { signal: options.signal }),
      ...(options.trace && { trace: options.trace }),
      channel: options.channel ?? "shared",
      timeoutMs: deadline,
    } as const;
    if (this.protocol === "connect") {
      const res = await this.exchange({
        ...common,
        headers: { ...metadata, "content-type": "application/proto", "connect-protocol-version": "1", "connect-timeout-ms": String(deadline) },
        body: request,
      });
      return fromConnect(await inflatedBody(res, res.headers["content-encoding"]?.[0]), deadline);
    }
    const res = await this.exchange({
      ...common,
      headers: { ...metadata, "content-type": "application/grpc-web+proto", "x-grpc-web": "1", "grpc-timeout": `${deadline}m` },
      body: frame(0, request),
    });
    return await fromGrpcWeb(res, deadline);
  }

  close(): void {
    this.#agent.destroy();
  }
}

function failed(res: PlainResponse, deadline: number): UnaryResult | undefined {
  if (res.failure?.kind === "timeout") return { code: Status.DEADLINE_EXCEEDED, details: `no answer within ${deadline} ms`, headers: {}, trailers: {} };
  if (res.failure?.kind === "too-large") return { code: Status.RESOURCE_EXHAUSTED, details: `response larger than ${MAX_BODY} bytes`, headers: res.headers, trailers: {} };
  if (res.failure?.kind === "undecodable") return { code: res.failure.message.includes("inflates past") ? Status.RESOURCE_EXHAUSTED : Status.INTERNAL, details: res.failure.message, headers: res.headers, trailers: {} };
  if (res.status === undefined) return { code: Status.UNAVAILABLE, details: res.failure?.kind === "connection" ? res.failure.message : "no response", headers: {}, trailers: {} };
  return undefined;
}

/** Connect unary: 200 carries the message; any other status carries a JSON error; trailers are trailer- headers. */
function fromConnect(res: PlainResponse, deadline: number): UnaryResult {
  const early = failed(res, deadline);
  if (early) return early;
  const headers: Record<string, string[]> = {};
  const trailers: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (k.startsWith("trailer-")) trailers[k.slice("trailer-".length)] = v;
    else headers[k] = v;
  }
  if (res.status === 200) return { code: Status.OK, details: "", response: res.body, headers, trailers };
  let code = codeForHttpStatus(res.status as number);
  let details = `HTTP ${res.status}`;
  if ((res.headers["content-type"]?.[0] ?? "").startsWith("application/json")) {
    try {
      const error = JSON.parse(Buffer.from(res.body).toString("utf8")) as unknown;
      if (typeof error === "object" && error !== null) {
        const c = (error as { code?: unknown }).code;
        const m = (error as { message?: unknown }).message;
        if (typeof c === "string" && c in CONNECT_CODES) code = CONNECT_CODES[c] as number;
        if (typeof m === "string") details = m;
      }
    } catch {
      // Not JSON after all: the HTTP status stands.
    }
  }
  return { code, details, headers, trailers };
}

/** gRPC-Web: messages and then a trailer frame in the body; a trailers-only answer puts grpc-status in the headers. */
async function fromGrpcWeb(res: PlainResponse, deadline: number): Promise<UnaryResult> {
  const early = failed(res, deadline);
  if (early) return early;
  const { frames } = parseFrames(res.body);
  const data = frames.filter((f) => (f.flags & 0x80) === 0);
  const trailerFrame = frames.find((f) => (f.flags & 0x80) !== 0);
  const trailers = trailerFrame ? parseTrailerBlock(trailerFrame.data) : {};
  const statusSource = trailers["grpc-status"] !== undefined ? trailers : res.headers;
  const raw = statusSource["grpc-status"]?.[0];
  if (raw === undefined) {
    const code = res.status === 200 ? Status.INTERNAL : codeForHttpStatus(res.status as number);
    return { code, details: res.status === 200 ? "no grpc-status in the trailers or headers" : `HTTP ${res.status}`, headers: res.headers, trailers };
  }
  const code = /^\d+$/.test(raw) ? Number(raw) : Status.UNKNOWN;
  const details = percentDecode(statusSource["grpc-message"]?.[0] ?? "");
  if (code === Status.OK && data.length !== 1) {
    return { code: Status.INTERNAL, details: `${data.length} response messages for a unary call`, headers: res.headers, trailers };
  }
  if (code !== Status.OK) return { code, details, headers: res.headers, trailers };
  const message = data[0] as { flags: number; data: Uint8Array };
  if ((message.flags & 0x01) === 0) return { code, details, response: message.data, headers: res.headers, trailers };
  // The compressed flag: the message is in grpc-encoding, inflated within its bound.
  const inflated = await inflatedBody({ ...res, body: message.data }, res.headers["grpc-encoding"]?.[0] ?? "identity");
  const refused = failed(inflated, deadline);
  if (refused) return { ...refused, trailers };
  return { code, details, response: inflated.body, headers: res.headers, trailers };
}

/** The response with its body inflated from this encoding (within MAX_BODY), or failed saying why not. */
async function inflatedBody(res: PlainResponse, encoding: string | undefined): Promise<PlainResponse> {
  if (res.failure !== undefined || isIdentity(encoding)) return res;
  const inflated = await inflate(res.body, encoding as string, MAX_BODY);
  if (inflated.ok) return { ...res, body: inflated.bytes };
  return { ...res, body: new Uint8Array(), failure: { kind: "undecodable", message: `the reply (${encoding}): ${inflated.message}` } };
}
