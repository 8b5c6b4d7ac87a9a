// The exchange records of today's clients, one builder each, so that each place an exchange happens reports it in
// one line: the HTTP resources' exchange, the Connect and gRPC-Web client's, grpc-js calls and hand-built HTTP/2.
import type { HttpResponse } from "../targets/http-target.js";
import {
  HELLO_PATH,
  type PlainResponse,
  type RawResponse,
  type UnaryCallOptions,
  type UnaryResult,
} from "../protocols/rpc.js";
import type { ExchangeRecord, TraceHeaders, TraceProtocol } from "./exchange-record.js";

type Sent = ExchangeRecord["request"];

/** A message with its gRPC length prefix, in two pieces: the message is not copied to be framed. */
const framed = (message: Uint8Array): Uint8Array[] => {
  const prefix = new Uint8Array(5);
  new DataView(prefix.buffer).setUint32(1, message.length);
  return [prefix, message];
};

const failureText = (f: { kind: string; message?: string; http2Code?: number } | undefined): string | undefined =>
  f === undefined
    ? undefined
    : [f.kind, f.http2Code !== undefined ? `HTTP/2 code ${f.http2Code}` : undefined, f.message]
        .filter((x) => x !== undefined)
        .join(": ");

/** An HTTP resource exchange (http-exchange.ts): the body as read, its content codings undone. */
export function httpRecord(request: Sent, startedAt: number, res: HttpResponse): ExchangeRecord {
  const failure = failureText(res.failure);
  return {
    protocol: "http",
    startedAt,
    durationMs: Date.now() - startedAt,
    request,
    ...(res.status !== 0 && {
      response: { status: res.status, statusText: res.statusText, headers: res.headers, body: res.body },
    }),
    ...(failure !== undefined && { failure }),
  };
}

/** A Connect or gRPC-Web exchange (http-rpc-client.ts): the body as it came, before any inflation. */
export function plainRecord(
  protocol: TraceProtocol,
  request: Sent,
  startedAt: number,
  res: PlainResponse,
): ExchangeRecord {
  const failure = failureText(res.failure);
  return {
    protocol,
    startedAt,
    durationMs: Date.now() - startedAt,
    request,
    ...(res.status !== undefined && { response: { status: res.status, headers: res.headers, body: res.body } }),
    ...(failure !== undefined && { failure }),
  };
}

/** A grpc-js unary call: what the library shows of it (metadata, whole messages, the status and trailers). */
export function unaryRecord(
  protocol: TraceProtocol,
  url: string,
  headers: TraceHeaders,
  request: Uint8Array,
  options: UnaryCallOptions,
  startedAt: number,
  r: UnaryResult,
): ExchangeRecord {
  const { signal: _signal, trace: _trace, ...callOptions } = options;
  return {
    protocol,
    via: "grpc-js",
    startedAt,
    durationMs: Date.now() - startedAt,
    request: {
      method: "POST",
      url,
      headers: { ":path": options.path ?? HELLO_PATH, ...headers },
      body: framed(request),
    },
    response: {
      headers: r.headers,
      ...(r.response !== undefined && { body: framed(r.response) }),
      trailers: r.trailers,
    },
    clientStatus: { code: r.code, details: r.details },
    call: { request, options: callOptions },
  };
}

/** A hand-built HTTP/2 request (raw-h2.ts): the frames as sent and received. */
export function rawRecord(
  protocol: TraceProtocol,
  request: Sent,
  startedAt: number,
  body: Uint8Array,
  r: RawResponse,
): ExchangeRecord {
  const failure = failureText(r.failure);
  return {
    protocol,
    via: "raw-h2",
    startedAt,
    durationMs: Date.now() - startedAt,
    request,
    ...((r.httpStatus !== undefined || body.length > 0) && {
      response: {
        ...(r.httpStatus !== undefined && { status: r.httpStatus }),
        headers: r.headers,
        body,
        ...(!r.trailersOnly && Object.keys(r.trailers).length > 0 && { trailers: r.trailers }),
      },
    }),
    ...(failure !== undefined && { failure }),
  };
}
