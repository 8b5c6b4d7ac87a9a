// One Hello call over Connect or gRPC-Web on HTTP/1.1 keep-alive connections (h2-rpc-call.ts has HTTP/2's), for the
// load loop: a request built once per distinct body, a reply read bounded, and the call's status worked out from
// either protocol's rules (callResultOf, for both HTTP versions).
import type { TlsMaterial } from "../../targets/connection.js";
import { Status, type PlainResponse } from "../../protocols/rpc.js";
import { CONNECT, readConnectReply } from "../../protocols/connect/index.js";
import { frame, fromGrpcWeb, type GRPC_WEB } from "../../protocols/grpc-web/index.js";
import { HELLO_PATH } from "../../protocols/rpc.js";
import { MAX_LOAD_REPLY_BYTES } from "../../wire/bounds.js";
import { http1Exchange, openHttp1Pool, type Http1Pool } from "../../wire/http1.js";
import type { CallResult } from "./call-result.js";
import { tlsConnectOptions } from "../../wire/tls.js";

export type HttpRpcLoadProtocol = typeof CONNECT | typeof GRPC_WEB;

/**
 * How every exchange of an HTTP run goes out, beside its own headers: TLS (an https:// base URL), the :authority
 * (Host header and TLS server name), headers sent on every request (metadata, an API key) and a query parameter
 * added to every path (an API key placed there). Plain data: a driver's spec carries it.
 */
export interface HttpWire {
  tls?: TlsMaterial;
  authority?: string;
  headers?: Readonly<Record<string, string>>;
  /** name=value, encoded, appended to every path. */
  query?: string;
}

/**
 * Keep-alive connections to the base URL, at most `connections` of them, through undici (wire/http1.ts: the load
 * process's CPU per call is what limits an HTTP/1.1 run); TLS ones for an https:// URL, offering no ALPN, so that an
 * HTTP/2-capable server speaks HTTP/1.1 on them.
 */
export function openPool(base: URL, connections: number, wire: HttpWire = {}): Http1Pool {
  if (base.protocol !== "https:") return openHttp1Pool(base, { maxSockets: connections, client: "undici" });
  return openHttp1Pool(base, {
    maxSockets: connections,
    tls: tlsConnectOptions({ material: wire.tls, serverName: wire.authority }),
    client: "undici",
  });
}

export interface HttpRpcRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** The request for one message, encoded: built once per distinct body and sent many times. */
export function httpRpcRequest(protocol: HttpRpcLoadProtocol, base: URL, message: Uint8Array): HttpRpcRequest {
  const path = `${base.pathname.replace(/\/$/, "")}${HELLO_PATH}`;
  const body = Buffer.from(protocol === CONNECT ? message : frame(0, message));
  const headers: Record<string, string> =
    protocol === CONNECT
      ? { "content-type": "application/proto", "connect-protocol-version": "1", "content-length": String(body.length) }
      : { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", "content-length": String(body.length) };
  return { path, headers, body };
}

/**
 * A refusal that sheds load, by HTTP: 429, or 503 with Retry-After. (RESOURCE_EXHAUSTED in the RPC status is
 * shed too: see isShed.)
 */
const shedByHttp = (status: number, headers: Readonly<Record<string, readonly string[]>>): boolean =>
  status === 429 || (status === 503 && headers["retry-after"] !== undefined);

/**
 * A reply's result by the protocol's own codec, the one check reads replies with (protocols/connect, grpc-web):
 * one reply, one verdict. A gRPC-Web reply with no grpc-status anywhere is no answer the server chose.
 */
async function replyResult(protocol: HttpRpcLoadProtocol, reply: BoundedReply, timeoutMs: number): Promise<CallResult> {
  const res: PlainResponse = { status: reply.status, headers: reply.headers, body: reply.body };
  const r = protocol === CONNECT ? await readConnectReply(res, timeoutMs) : await fromGrpcWeb(res, timeoutMs);
  const code = r.code !== Status.OK && shedByHttp(reply.status, reply.headers) ? Status.RESOURCE_EXHAUSTED : r.code;
  const answered =
    protocol === CONNECT ||
    reply.status !== 200 ||
    r.trailers["grpc-status"] !== undefined ||
    reply.headers["grpc-status"] !== undefined;
  const message =
    r.response === undefined ? undefined : Buffer.from(r.response.buffer, r.response.byteOffset, r.response.byteLength);
  return message && code === Status.OK
    ? { code, details: r.details, reply: message, answered }
    : { code, details: r.details, answered };
}

export interface BoundedReply {
  status: number;
  /** Every header field, names lowercased. */
  headers: Record<string, string[]>;
  body: Buffer;
}

/**
 * One HTTP/1.1 exchange on the pool's keep-alive connections (wire/http1.ts), its reply read up to
 * MAX_LOAD_REPLY_BYTES and ended by the timeout; a string says why there is no reply.
 */
export async function boundedExchange(
  pool: Http1Pool,
  base: URL,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  timeoutMs: number,
  wire: HttpWire = {},
): Promise<BoundedReply | string> {
  const target = wire.query === undefined ? path : `${path}${path.includes("?") ? "&" : "?"}${wire.query}`;
  const sent = { ...wire.headers, ...(wire.authority !== undefined && { host: wire.authority }), ...headers };
  const a = await http1Exchange({
    origin: base,
    method,
    path: target,
    headers: sent,
    ...(body && { body }),
    timeoutMs,
    maxBytes: MAX_LOAD_REPLY_BYTES,
    connection: pool,
  });
  if (a.failure === undefined) return { status: a.status as number, headers: a.headers, body: a.body };
  if (a.failure.kind === "timeout") return `no reply within ${timeoutMs} ms`;
  if (a.failure.kind === "too-large") return `a reply past ${MAX_LOAD_REPLY_BYTES} bytes`;
  // A system error by its code (ECONNREFUSED); a TLS one by its message (self-signed certificate).
  return a.failure.code ?? a.failure.message;
}

/** One call on the pool's keep-alive connections, ended by the timeout. */
export async function httpRpcCall(
  protocol: HttpRpcLoadProtocol,
  base: URL,
  pool: Http1Pool,
  req: HttpRpcRequest,
  timeoutMs: number,
  wire: HttpWire = {},
): Promise<CallResult> {
  return callResultOf(
    protocol,
    await boundedExchange(pool, base, "POST", req.path, req.headers, req.body, timeoutMs, wire),
    timeoutMs,
  );
}

/**
 * A call's result from its exchange, over HTTP/1.1 or HTTP/2 alike: a reply read by the protocol's codec, or why
 * there was none ("no reply within ..." is DEADLINE_EXCEEDED, anything else UNAVAILABLE).
 */
export async function callResultOf(
  protocol: HttpRpcLoadProtocol,
  r: BoundedReply | string,
  timeoutMs: number,
): Promise<CallResult> {
  if (typeof r === "string")
    return {
      code: r.startsWith("no reply within") ? Status.DEADLINE_EXCEEDED : Status.UNAVAILABLE,
      details: r,
      answered: false,
    };
  return replyResult(protocol, r, timeoutMs);
}
