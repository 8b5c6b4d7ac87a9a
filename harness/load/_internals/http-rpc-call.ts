// One Hello call over Connect or gRPC-Web (HTTP/1.1, keep-alive), for the load loop: a request built once per
// distinct body, a reply read bounded, and the call's status worked out from either protocol's rules.
import http from "node:http";
import https from "node:https";
import type { TlsMaterial } from "../../targets/connection.js";
import { Status } from "../../protocols/rpc.js";
import { CONNECT_CODES } from "../../protocols/connect/index.js";
import { frame, parseFrames, parseTrailerBlock } from "../../protocols/grpc-web/index.js";
import { codeForHttpStatus } from "../../protocols/http-rpc.js";
import { HELLO_PATH } from "../../protocols/rpc.js";
import type { CallResult } from "./call-result.js";
import { tlsConnectOptions } from "../../wire/tls.js";

export type HttpRpcLoadProtocol = "connect" | "grpc-web";

/** Past this a reply is no Hello reply: the read stops and the call fails (a load run keeps nothing big). */
const MAX_REPLY_BYTES = 1 << 20;

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

/** Keep-alive connections to the base URL, at most `connections` of them; TLS ones for an https:// URL. */
export function openAgent(base: URL, connections: number, wire: HttpWire = {}): http.Agent {
  if (base.protocol !== "https:") return new http.Agent({ keepAlive: true, maxSockets: connections });
  return new https.Agent({ keepAlive: true, maxSockets: connections, ...tlsConnectOptions({ material: wire.tls, serverName: wire.authority }) });
}

export interface HttpRpcRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** The request for one message, encoded: built once per distinct body and sent many times. */
export function httpRpcRequest(protocol: HttpRpcLoadProtocol, base: URL, message: Uint8Array): HttpRpcRequest {
  const path = `${base.pathname.replace(/\/$/, "")}${HELLO_PATH}`;
  const body = Buffer.from(protocol === "connect" ? message : frame(0, message));
  const headers: Record<string, string> =
    protocol === "connect"
      ? { "content-type": "application/proto", "connect-protocol-version": "1", "content-length": String(body.length) }
      : { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", "content-length": String(body.length) };
  return { path, headers, body };
}

/**
 * A refusal that sheds load, by HTTP: 429, or 503 with Retry-After. (RESOURCE_EXHAUSTED in the RPC status is
 * shed too: see isShed.)
 */
const shedByHttp = (status: number, headers: http.IncomingHttpHeaders): boolean => status === 429 || (status === 503 && headers["retry-after"] !== undefined);

function connectResult(status: number, headers: http.IncomingHttpHeaders, body: Buffer): CallResult {
  if (status === 200) return { code: Status.OK, details: "", reply: body, answered: true };
  let code = codeForHttpStatus(status);
  let details = `HTTP ${status}`;
  try {
    const error = JSON.parse(body.toString("utf8")) as { code?: unknown; message?: unknown };
    if (typeof error.code === "string" && CONNECT_CODES[error.code] !== undefined) code = CONNECT_CODES[error.code] as number;
    if (typeof error.message === "string") details = error.message;
  } catch {
    // Not Connect's JSON error: the HTTP status decides.
  }
  return { code: shedByHttp(status, headers) ? Status.RESOURCE_EXHAUSTED : code, details, answered: true };
}

function grpcWebResult(status: number, headers: http.IncomingHttpHeaders, body: Buffer): CallResult {
  if (status !== 200) return { code: shedByHttp(status, headers) ? Status.RESOURCE_EXHAUSTED : codeForHttpStatus(status), details: `HTTP ${status}`, answered: true };
  const { frames } = parseFrames(body);
  const data = frames.filter((f) => (f.flags & 0x80) === 0);
  const trailer = frames.find((f) => (f.flags & 0x80) !== 0);
  const block = trailer ? parseTrailerBlock(trailer.data) : {};
  const statusText = block["grpc-status"]?.[0] ?? (typeof headers["grpc-status"] === "string" ? headers["grpc-status"] : undefined);
  if (statusText === undefined) return { code: Status.INTERNAL, details: "no grpc-status in the trailer frame or the headers", answered: false };
  const code = Number(statusText);
  const details = block["grpc-message"]?.[0] ?? "";
  const reply = data.length === 1 ? Buffer.from((data[0] as { data: Uint8Array }).data) : undefined;
  return reply && code === Status.OK ? { code, details, reply, answered: true } : { code, details, answered: true };
}

export interface BoundedReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One HTTP/1.1 exchange on the agent's keep-alive connections, its reply read up to MAX_REPLY_BYTES and ended by
 * the timeout; a string says why there is no reply.
 */
export function boundedExchange(agent: http.Agent, base: URL, method: string, path: string, headers: Record<string, string>, body: Buffer | undefined, timeoutMs: number, wire: HttpWire = {}): Promise<BoundedReply | string> {
  const target = wire.query === undefined ? path : `${path}${path.includes("?") ? "&" : "?"}${wire.query}`;
  const sent = { ...wire.headers, ...(wire.authority !== undefined && { host: wire.authority }), ...headers };
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: BoundedReply | string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const secure = base.protocol === "https:";
    const options = { host: base.hostname.replace(/^\[(.*)\]$/, "$1"), port: base.port || (secure ? 443 : 80), method, path: target, headers: sent, agent };
    const request = (secure ? https : http).request(options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_REPLY_BYTES) {
          request.destroy();
          done(`a reply past ${MAX_REPLY_BYTES} bytes`);
        } else chunks.push(c);
      });
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) }));
      res.on("error", (err) => done(err.message));
    });
    const timer = setTimeout(() => {
      request.destroy();
      done(`no reply within ${timeoutMs} ms`);
    }, timeoutMs);
    // A system error by its code (ECONNREFUSED); a TLS one by its message (self-signed certificate).
    request.on("error", (err: NodeJS.ErrnoException) => done(err.code !== undefined && /^E[A-Z]+$/.test(err.code) ? err.code : err.message));
    request.end(body);
  });
}

/** One call on the agent's keep-alive connections, ended by the timeout. */
export async function httpRpcCall(protocol: HttpRpcLoadProtocol, base: URL, agent: http.Agent, req: HttpRpcRequest, timeoutMs: number, wire: HttpWire = {}): Promise<CallResult> {
  const r = await boundedExchange(agent, base, "POST", req.path, req.headers, req.body, timeoutMs, wire);
  if (typeof r === "string") return { code: r.startsWith("no reply within") ? Status.DEADLINE_EXCEEDED : Status.UNAVAILABLE, details: r, answered: false };
  return protocol === "connect" ? connectResult(r.status, r.headers, r.body) : grpcWebResult(r.status, r.headers, r.body);
}
