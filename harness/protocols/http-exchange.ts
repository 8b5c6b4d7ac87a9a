// The shared HTTP exchange layer of the RPC protocols spoken over plain HTTP (Connect, gRPC-Web, and any protocol
// registered beside them): one request exactly as given, over the wire layer's HTTP/1.1 client (wire/http1.ts) on
// a keep-alive pool or a connection of its own, read back within bounds. Every exchange passes through
// `exchange()`, where `onExchange` observers see it (round-trip counts, traces).
import { HELLO_PATH, type PlainRequest, type PlainResponse } from "./rpc.js";
import type { TlsMaterial } from "../targets/connection.js";
import { MAX_REPLY_BYTES } from "../wire/bounds.js";
import { http1Exchange, openHttp1Pool, type Http1Answer } from "../wire/http1.js";
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

/** The PlainResponse of a wire answer: a reply past the bound keeps its head and no body; a timeout, nothing. */
function plain({ status, headers, body, failure }: Http1Answer): PlainResponse {
  if (failure?.kind === "timeout") return { headers: {}, body: new Uint8Array(), failure };
  const head = { ...(status !== undefined && { status }), headers };
  if (failure?.kind === "too-large") return { ...head, body: new Uint8Array(), failure };
  if (failure?.kind === "connection")
    return { ...head, body: new Uint8Array(body), failure: { kind: "connection", message: failure.message } };
  return { ...head, body: new Uint8Array(body) };
}

export function createHttpExchange(options: HttpExchangeOptions): HttpExchange {
  const base = options.baseUrl;
  const secure = base.protocol === "https:";
  const tls = secure ? tlsConnectOptions({ material: options.tls, serverName: options.authority }) : undefined;
  const pool = openHttp1Pool(base, { ...(tls && { tls }) });
  const requestOptions = (request: PlainRequest) => ({
    method: request.method ?? "POST",
    headers: { ...(options.authority !== undefined && { host: options.authority }), ...request.headers },
  });
  const urlOf = (request: PlainRequest) =>
    new URL(base.pathname.replace(/\/$/, "") + (request.path ?? HELLO_PATH), base);
  const send = async (request: PlainRequest): Promise<PlainResponse> => {
    const url = urlOf(request);
    const answer = await http1Exchange({
      origin: url,
      ...requestOptions(request),
      path: url.pathname + url.search,
      ...(request.body !== undefined && { body: request.body }),
      timeoutMs: request.timeoutMs ?? options.timeoutMs,
      maxBytes: MAX_BODY,
      connection: request.channel === "fresh" ? "fresh" : pool,
      ...(tls && { tls }),
      ...(request.signal && { signal: request.signal }),
    });
    return plain(answer);
  };
  const observers = options.onExchange ?? [];
  const traced = (request: PlainRequest, startedAt: number, response: PlainResponse) =>
    request.trace?.(() => {
      const sent = requestOptions(request);
      return plainRecord(
        options.traceAs ?? "http",
        {
          method: sent.method,
          url: urlOf(request).href,
          headers: sent.headers,
          ...(request.body && { body: request.body }),
        },
        startedAt,
        response,
      );
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
    close: () => pool.close(),
  };
}
