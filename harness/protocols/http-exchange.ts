// The shared HTTP exchange layer of the RPC protocols spoken over plain HTTP (Connect, gRPC-Web, and any protocol
// registered beside them): one request exactly as given, over HTTP/1.1 (or HTTPS), read back within bounds. Every
// exchange passes through `exchange()`, where `onExchange` observers see it (round-trip counts, traces).
import http from "node:http";
import https from "node:https";
import { HELLO_PATH, type PlainRequest, type PlainResponse } from "./rpc.js";
import type { TlsMaterial } from "../targets/connection.js";
import { MAX_REPLY_BYTES } from "../targets/read-bounds.js";
import type { TraceProtocol } from "../trace/exchange-record.js";
import { plainRecord } from "../trace/records.js";
import { tlsConnectOptions } from "../wire/tls.js";

/** Largest response body read; past it the exchange ends "too-large". */
export const MAX_BODY = MAX_REPLY_BYTES;

export type { PlainRequest, PlainResponse };

/** Told of every exchange once it ended: what was sent, what came back, and how long it took. */
export type ExchangeObserver = (request: PlainRequest, response: PlainResponse, elapsedMs: number) => void;

export interface HttpExchangeOptions {
  /** http(s)://host:port[/prefix]: procedures are at prefix + /package.Service/Method. */
  baseUrl: URL;
  /** Bound on an exchange that names none of its own (resolved by the run's options). */
  timeoutMs: number;
  tls?: TlsMaterial;
  authority?: string;
  /** Observers of every exchange (see ExchangeObserver). */
  onExchange?: readonly ExchangeObserver[];
  /** The protocol a request's own trace sink (--trace) records the exchange as. */
  traceAs?: TraceProtocol;
}

export interface HttpExchange {
  /** One request exactly as given (on a connection of its own when asked), and everything that came back. */
  exchange(request: PlainRequest): Promise<PlainResponse>;
  close(): void;
}

function headerRecord(raw: http.IncomingHttpHeaders): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  return out;
}

export function createHttpExchange(options: HttpExchangeOptions): HttpExchange {
  const base = options.baseUrl;
  const secure = base.protocol === "https:";
  const tls = secure ? tlsConnectOptions({ material: options.tls, serverName: options.authority }) : undefined;
  const agent = secure ? new https.Agent({ keepAlive: true, ...tls }) : new http.Agent({ keepAlive: true });
  const requestOptions = (request: PlainRequest): https.RequestOptions => ({
    method: request.method ?? "POST",
    headers: { ...(options.authority !== undefined && { host: options.authority }), ...request.headers },
    agent: request.channel === "fresh" ? false : agent,
    ...tls,
  });
  const send = (request: PlainRequest): Promise<PlainResponse> => {
    const url = new URL(base.pathname.replace(/\/$/, "") + (request.path ?? HELLO_PATH), base);
    const timeoutMs = request.timeoutMs ?? options.timeoutMs;
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: PlainResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener("abort", cancel);
        resolve(r);
      };
      const req = (secure ? https : http).request(url, requestOptions(request), (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const answer = () => ({ status: res.statusCode ?? 0, headers: headerRecord(res.headers) });
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY) {
            req.destroy();
            done({ ...answer(), body: new Uint8Array(), failure: { kind: "too-large" } });
            return;
          }
          chunks.push(c);
        });
        res.on("end", () => done({ ...answer(), body: new Uint8Array(Buffer.concat(chunks)) }));
        res.on("error", (err) => done({ ...answer(), body: new Uint8Array(Buffer.concat(chunks)), failure: { kind: "connection", message: err.message } }));
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
  };
  const observers = options.onExchange ?? [];
  const traced = (request: PlainRequest, startedAt: number, response: PlainResponse) =>
    request.trace?.(() => {
      const sent = requestOptions(request);
      const url = new URL(base.pathname.replace(/\/$/, "") + (request.path ?? HELLO_PATH), base);
      return plainRecord(options.traceAs ?? "http", { method: sent.method as string, url: url.href, headers: sent.headers as Record<string, string>, ...(request.body && { body: request.body }) }, startedAt, response);
    });
  return {
    async exchange(request) {
      if (observers.length === 0 && request.trace === undefined) return send(request);
      const startedAt = Date.now();
      const started = performance.now();
      const response = await send(request);
      for (const observe of observers) observe(request, response, performance.now() - started);
      traced(request, startedAt, response);
      return response;
    },
    close: () => agent.destroy(),
  };
}
