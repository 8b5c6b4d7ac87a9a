// The recording servers a client under test is run against: a gRPC port (node:http2, h2c) and an HTTP port (Connect,
// gRPC-Web and the /messages resources, which the reference server's HTTP interface serves behind it). Both on
// 127.0.0.1 port 0. They keep what the client sent, bounded, and answer as their scenario plays a legal server.
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { decodeMessage } from "../../contract/message.js";
import { CONNECT_CODES } from "../protocols/connect/index.js";
import { frame, parseFrames } from "../protocols/grpc-web/index.js";
import { inflate, isIdentity } from "../targets/inflate.js";
import { http1Exchange } from "../wire/http1.js";
import { carriesKey, isKey } from "./_internals/api-key.js";
import { readBounded } from "./_internals/read-body.js";
import { MAX_HEADER_VALUES, MAX_RECORDED_BODY_BYTES, MAX_RECORDED_REQUESTS, type RecordedProtocol, type RecordedRequest } from "./recorded-request.js";
import { CODE, encodeReply, encodeReplyJson, type Codec, type HelloAnswer, type Scenario } from "./scenarios.js";

export const HELLO_PATH = "/example.exampleService/Hello";
/** Bound on the reference server's answer to a forwarded resource request: it answers at once; this bounds a wedged one. */
const UPSTREAM_TIMEOUT_MS = 30_000;
/** Request headers past this many bytes are refused by the HTTP layer itself (431, or a reset stream). */
const MAX_HEADER_BYTES = 16 * 1024;

export interface RecordingServers {
  /** 127.0.0.1:PORT of the gRPC port: EXAMPLE_GRPC_TARGET. */
  grpcTarget: string;
  /** http://127.0.0.1:PORT of the HTTP port: EXAMPLE_HTTP_URL. */
  httpUrl: string;
  /** What was recorded, in the order received (at most MAX_RECORDED_REQUESTS). */
  requests: RecordedRequest[];
  /** Requests received, recorded or not. */
  received(): number;
  close(): Promise<void>;
}

export interface RecordingOptions {
  scenario: Scenario;
  /** With requireKey scenarios: the key every request must carry. */
  apiKey?: string;
}

const CONNECT_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(CONNECT_CODES).map(([name, code]) => [code, name]));
const CONNECT_HTTP_STATUS: Readonly<Record<string, number>> = {
  canceled: 499, unknown: 500, invalid_argument: 400, deadline_exceeded: 504, not_found: 404, already_exists: 409, permission_denied: 403,
  resource_exhausted: 429, failed_precondition: 400, aborted: 409, out_of_range: 400, unimplemented: 501, internal: 500, unavailable: 503,
  data_loss: 500, unauthenticated: 401,
};
const STATUS_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(CODE).map(([name, code]) => [code, name]));
const statusWords = (code: number) => STATUS_NAMES[code] ?? String(code);

function headerRecord(raw: http.IncomingHttpHeaders | http2.IncomingHttpHeaders): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let kept = 0;
  for (const [k, v] of Object.entries(raw)) {
    if (k.startsWith(":") || v === undefined) continue;
    for (const value of Array.isArray(v) ? v : [String(v)]) {
      if (kept++ >= MAX_HEADER_VALUES) return out;
      (out[k] ??= []).push(value);
    }
  }
  return out;
}

/** The request Message's body, for the greeting; undefined when the frames or the message are not well formed. */
async function requestBody(frames: Uint8Array, encoding: string | undefined): Promise<string | undefined> {
  const { frames: parsed, leftover } = parseFrames(frames);
  const first = parsed[0];
  if (parsed.length !== 1 || leftover !== 0 || first === undefined) return undefined;
  let data = first.data;
  if (first.flags === 1) {
    if (isIdentity(encoding)) return undefined;
    const inflated = await inflate(data, encoding as string, MAX_RECORDED_BODY_BYTES);
    if (!inflated.ok) return undefined;
    data = inflated.bytes;
  } else if (first.flags !== 0) return undefined;
  const decoded = decodeMessage(data);
  return decoded.ok ? decoded.message.body : undefined;
}

/** Waits ms, or less if the exchange closes first: true when the time passed, false when the client gave up. */
function hold(ms: number, closed: Promise<void>): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(true);
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([new Promise<boolean>((r) => (timer = setTimeout(() => r(true), ms))), closed.then(() => false)]).finally(() => clearTimeout(timer));
}

export async function startRecordingServers(options: RecordingOptions): Promise<RecordingServers> {
  const { scenario } = options;
  const t0 = performance.now();
  const requests: RecordedRequest[] = [];
  let received = 0;
  let hellos = 0;
  const keyMissing = (headers: Record<string, string[]>, path: string) =>
    scenario.requireKey && options.apiKey !== undefined && !carriesKey(headers, path, options.apiKey);

  /** Counts the request and keeps it when under the bound; the returned record's answer is filled in later. */
  function record(arrived: number, protocol: RecordedProtocol, method: string, path: string, headers: Record<string, string[]>, body: { body: Uint8Array; truncated: boolean }, hello: boolean): RecordedRequest {
    received++;
    const r: RecordedRequest = {
      n: received,
      atMs: Math.round(arrived - t0),
      protocol,
      method,
      path: path.slice(0, 2048),
      headers,
      body: body.body,
      truncated: body.truncated,
      ...(hello && { helloIndex: hellos++ }),
      answer: "nothing (the exchange closed first)",
    };
    if (requests.length < MAX_RECORDED_REQUESTS) requests.push(r);
    return r;
  }

  /** The scenario's answer to a Hello (after the key and the request's form), held as it says. */
  async function answerHello(r: RecordedRequest, codec: Codec, body: string | undefined, closed: Promise<void>): Promise<HelloAnswer | undefined> {
    if (keyMissing(r.headers, r.path)) return { kind: "error", code: CODE.UNAUTHENTICATED, message: "this server controls access by the API key, and the request carries none" };
    if (body === undefined) return { kind: "error", code: CODE.INVALID_ARGUMENT, message: "the request is not one well-formed Message" };
    const answer = scenario.hello(r.helloIndex ?? 0, codec, body);
    if (answer.kind === "reply" && !(await hold(answer.holdMs, closed))) {
      r.answer = `nothing: held ${answer.holdMs} ms, and the client gave up after ${Math.round(performance.now() - t0) - r.atMs} ms`;
      return undefined;
    }
    r.answer = answer.kind === "reply" ? (answer.holdMs > 0 ? `OK after holding it ${answer.holdMs} ms` : "OK") : statusWords(answer.code);
    // Each protocol writes the answer as soon as this returns.
    r.answeredAtMs = Math.round(performance.now() - t0);
    return answer;
  }

  const grpc = http2.createServer({ settings: { maxHeaderListSize: MAX_HEADER_BYTES }, maxSessionMemory: 16 });
  const sessions = new Set<http2.ServerHttp2Session>();
  grpc.on("session", (session) => {
    sessions.add(session);
    session.on("error", () => undefined);
    session.once("close", () => sessions.delete(session));
  });
  grpc.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    void onGrpc(stream, headers);
  });
  async function onGrpc(stream: http2.ServerHttp2Stream, raw: http2.IncomingHttpHeaders): Promise<void> {
    const path = String(raw[":path"] ?? "");
    const method = String(raw[":method"] ?? "");
    const closed = new Promise<void>((r) => stream.once("close", r));
    const arrived = performance.now();
    const body = await readBounded(stream, MAX_RECORDED_BODY_BYTES);
    const headers = headerRecord(raw);
    const isHelloCall = method === "POST" && path === HELLO_PATH;
    const r = record(arrived, "grpc", method, path, headers, body, isHelloCall);
    const status = (code: number, message: string) => {
      r.answer = statusWords(code);
      if (stream.destroyed || stream.headersSent) return;
      stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": String(code), "grpc-message": encodeURIComponent(message) }, { endStream: true });
    };
    if (body.truncated) return status(CODE.RESOURCE_EXHAUSTED, `request larger than ${MAX_RECORDED_BODY_BYTES} bytes`);
    if (!isHelloCall) return keyMissing(headers, path) ? status(CODE.UNAUTHENTICATED, "API key required") : status(CODE.UNIMPLEMENTED, `no procedure at ${path.slice(0, 100)}`);
    const answer = await answerHello(r, "proto", await requestBody(body.body, headers["grpc-encoding"]?.[0]), closed);
    if (answer === undefined || stream.destroyed) return;
    if (answer.kind === "error") return status(answer.code, answer.message);
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame(0, encodeReply(answer)));
  }

  // Started with the recording servers, before the client runs: loading the reference server takes about 0.4 s the
  // first time, which a client's own deadline on its first resource request must not pay for.
  const resources: Promise<{ url: string; close(): Promise<void> }> = import("../../reference-server/http/server.js").then((m) =>
    m.startHttpServer({ host: "127.0.0.1", port: 0, log: "silent", shutdownGraceMs: 500 }),
  );

  const httpServer = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    req.on("error", () => undefined);
    res.on("error", () => undefined);
    void onHttp(req, res);
  });
  async function onHttp(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = req.url ?? "";
    const method = req.method ?? "";
    const closed = new Promise<void>((r) => res.once("close", r));
    const arrived = performance.now();
    const body = await readBounded(req, MAX_RECORDED_BODY_BYTES);
    const headers = headerRecord(req.headers);
    const contentType = (headers["content-type"]?.[0] ?? "").toLowerCase();
    const onHello = path.split("?")[0] === HELLO_PATH;
    const protocol: RecordedProtocol = !onHello ? "http" : contentType.startsWith("application/grpc-web") ? "grpc-web" : "connect";
    const r = record(arrived, protocol, method, path, headers, body, onHello && method === "POST");
    const plain = (status: number, text: string) => {
      r.answer = String(status);
      if (!res.headersSent) res.writeHead(status, { "content-type": "text/plain; charset=utf-8", connection: "close" }).end(text);
    };
    if (body.truncated) return plain(413, `request larger than ${MAX_RECORDED_BODY_BYTES} bytes`);
    if (protocol === "http") {
      if (keyMissing(headers, path)) {
        r.answer = "401";
        res.writeHead(401, { "www-authenticate": "ApiKey", "content-type": "text/plain" }).end("API key required");
        return;
      }
      return forward(req, res, r, body.body);
    }
    if (method !== "POST") return plain(405, "Hello is called with POST");
    if (protocol === "grpc-web") return onGrpcWeb(res, r, contentType, body.body, closed);
    return onConnect(res, r, contentType, body.body, closed);
  }

  async function onConnect(res: http.ServerResponse, r: RecordedRequest, contentType: string, raw: Uint8Array, closed: Promise<void>): Promise<void> {
    const codec: Codec | undefined = /^application\/proto\s*(;|$)/.test(contentType) ? "proto" : /^application\/json\s*(;|$)/.test(contentType) ? "json" : undefined;
    const error = (code: number, message: string) => {
      const name = CONNECT_NAMES[code] ?? "unknown";
      r.answer = `${statusWords(code)} (HTTP ${CONNECT_HTTP_STATUS[name] ?? 500})`;
      if (!res.headersSent) res.writeHead(CONNECT_HTTP_STATUS[name] ?? 500, { "content-type": "application/json" }).end(JSON.stringify({ code: name, message }));
    };
    if (codec === undefined) {
      r.answer = "415";
      res.writeHead(415, { "accept-post": "application/proto, application/json" }).end();
      return;
    }
    const encoding = r.headers["content-encoding"]?.[0];
    let data = raw;
    if (!isIdentity(encoding)) {
      const inflated = await inflate(raw, encoding as string, MAX_RECORDED_BODY_BYTES);
      if (!inflated.ok) return error(inflated.reason === "unknown-encoding" ? CODE.UNIMPLEMENTED : CODE.INVALID_ARGUMENT, inflated.message);
      data = inflated.bytes;
    }
    const answer = await answerHello(r, codec, codec === "proto" ? protoBody(data) : jsonBody(data), closed);
    if (answer === undefined) return;
    if (answer.kind === "error") return error(answer.code, answer.message);
    if (res.headersSent) return;
    res.writeHead(200, { "content-type": codec === "proto" ? "application/proto" : "application/json" }).end(codec === "proto" ? encodeReply(answer) : encodeReplyJson(answer));
  }

  async function onGrpcWeb(res: http.ServerResponse, r: RecordedRequest, contentType: string, raw: Uint8Array, closed: Promise<void>): Promise<void> {
    const text = contentType.startsWith("application/grpc-web-text");
    const frames = text ? Buffer.from(Buffer.from(raw).toString("latin1"), "base64") : raw;
    const send = (payload: Uint8Array | undefined, code: number, message: string) => {
      if (res.headersSent) return;
      const trailer = Buffer.from(`grpc-status:${code}\r\ngrpc-message:${encodeURIComponent(message)}\r\n`, "latin1");
      const out = Buffer.concat([payload ? frame(0, payload) : new Uint8Array(), frame(0x80, trailer)]);
      res.writeHead(200, { "content-type": text ? "application/grpc-web-text+proto" : "application/grpc-web+proto" }).end(text ? out.toString("base64") : out);
    };
    const answer = await answerHello(r, "proto", await requestBody(frames, r.headers["grpc-encoding"]?.[0]), closed);
    if (answer === undefined) return;
    if (answer.kind === "error") return send(undefined, answer.code, answer.message);
    send(encodeReply(answer), 0, "");
  }

  /** A resource request goes to the reference server's HTTP interface, as recorded; its answer comes back as it is. */
  async function forward(req: http.IncomingMessage, res: http.ServerResponse, r: RecordedRequest, body: Uint8Array): Promise<void> {
    const target = new URL(r.path.startsWith("/") ? r.path : `/${r.path}`, (await resources).url);
    // The key in a query parameter is this server's to read (part 5 leaves its placement open); the reference server
    // behind it, which refuses a parameter it does not understand, never sees it.
    const key = options.apiKey;
    if (key !== undefined) for (const [name, value] of [...target.searchParams]) if (isKey(value, key)) target.searchParams.delete(name, value);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && name !== "host") headers[name] = value;
    const answer = await http1Exchange({ origin: target, method: req.method ?? "GET", path: target.pathname + target.search, headers, body, timeoutMs: UPSTREAM_TIMEOUT_MS, connection: "fresh" });
    r.answer = answer.failure === undefined ? String(answer.status) : "502";
    if (res.headersSent) return;
    if (answer.failure === undefined) res.writeHead(answer.status as number, answer.headers).end(answer.body);
    else res.writeHead(502).end();
  }

  const listen = (server: http.Server | http2.Http2Server) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
    });
  const started = await Promise.allSettled([listen(grpc), listen(httpServer), resources]);
  const [grpcPort, httpPort] = started.map((s) => (s.status === "fulfilled" ? s.value : undefined));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed !== undefined || typeof grpcPort !== "number" || typeof httpPort !== "number") {
    grpc.close();
    httpServer.close();
    await resources.then((s) => s.close()).catch(() => undefined);
    throw failed?.reason instanceof Error ? failed.reason : new Error("the recording servers did not start");
  }
  return {
    grpcTarget: `127.0.0.1:${grpcPort}`,
    httpUrl: `http://127.0.0.1:${httpPort}`,
    requests,
    received: () => received,
    async close() {
      httpServer.closeAllConnections();
      for (const s of sessions) s.destroy();
      await Promise.all([
        new Promise<void>((r) => grpc.close(() => r())),
        new Promise<void>((r) => httpServer.close(() => r())),
        resources.then((s) => s.close()).catch(() => undefined),
      ]);
    },
  };
}

function protoBody(data: Uint8Array): string | undefined {
  const decoded = decodeMessage(data);
  return decoded.ok ? decoded.message.body : undefined;
}

/** proto3's JSON mapping of Message: an object whose body, when present, is a string (or null, the default). */
function jsonBody(data: Uint8Array): string | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(data).toString("utf8"));
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const body = (value as Record<string, unknown>).body;
    return body === undefined || body === null ? "" : typeof body === "string" ? body : undefined;
  } catch {
    return undefined;
  }
}
