// The recording servers a client under test is run against: a gRPC port (node:http2, h2c) and an HTTP port (Connect,
// gRPC-Web and the /messages resources, which the reference server's HTTP interface serves behind it). Both on
// 127.0.0.1 port 0. They keep what the client sent, bounded, and answer as their scenario plays a legal server.
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { protocolModules, type HelloAsk, type ProtocolModule } from "../protocols/index.js";
import { http1Exchange } from "../wire/http1.js";
import { carriesKey, isKey } from "./_internals/api-key.js";
import { readBounded } from "./_internals/read-body.js";
import {
  MAX_HEADER_VALUES,
  MAX_RECORDED_BODY_BYTES,
  MAX_RECORDED_REQUESTS,
  RESOURCES,
  type RecordedRequest,
} from "./recorded-request.js";
import { CODE, type Codec, type HelloAnswer, type Scenario } from "./scenarios.js";

export const HELLO_PATH = "/example.exampleService/Hello";
/**
 * Bound on the reference server's answer to a forwarded resource request: it answers at once; this bounds a wedged one.
 */
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

const STATUS_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(CODE).map(([name, code]) => [code, name]),
);
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

/** The protocol whose calls come to a port (on the HTTP port: whose content types name this one), by its module. */
function recordedOn(port: "h2c" | "http1", contentType = ""): ProtocolModule | undefined {
  const on = protocolModules().filter((m) => m.recording?.port === port);
  if (port === "h2c") return on[0];
  const named = on.find((m) => {
    const types = m.recording?.contentTypes;
    return types instanceof RegExp && types.test(contentType);
  });
  return named ?? on.find((m) => m.recording?.contentTypes === "rest");
}

/** Waits ms, or less if the exchange closes first: true when the time passed, false when the client gave up. */
function hold(ms: number, closed: Promise<void>): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(true);
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    new Promise<boolean>((r) => (timer = setTimeout(() => r(true), ms))),
    closed.then(() => false),
  ]).finally(() => clearTimeout(timer));
}

/** What one pair of recording servers shares: what was received, and the scenario's answers to it. */
interface Recorder {
  options: RecordingOptions;
  /** When the servers started (performance.now()). */
  t0: number;
  requests: RecordedRequest[];
  received(): number;
  /** Counts the request and keeps it when under the bound; the returned record's answer is filled in later. */
  record(
    arrived: number,
    protocol: string,
    method: string,
    path: string,
    headers: Record<string, string[]>,
    body: { body: Uint8Array; truncated: boolean },
    hello: boolean,
  ): RecordedRequest;
  keyMissing(headers: Record<string, string[]>, path: string): boolean;
}

function createRecorder(options: RecordingOptions): Recorder {
  const t0 = performance.now();
  const requests: RecordedRequest[] = [];
  let received = 0;
  let hellos = 0;
  return {
    options,
    t0,
    requests,
    received: () => received,
    record(arrived, protocol, method, path, headers, body, hello) {
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
    },
    keyMissing: (headers, path) =>
      options.scenario.requireKey && options.apiKey !== undefined && !carriesKey(headers, path, options.apiKey),
  };
}

/** The scenario's answer to a Hello (after the key and the request's form), held as it says. */
async function answerHello(
  rec: Recorder,
  r: RecordedRequest,
  codec: Codec,
  body: string | undefined,
  closed: Promise<void>,
): Promise<HelloAnswer | undefined> {
  if (rec.keyMissing(r.headers, r.path))
    return {
      kind: "error",
      code: CODE.UNAUTHENTICATED,
      message: "this server controls access by the API key, and the request carries none",
    };
  if (body === undefined)
    return { kind: "error", code: CODE.INVALID_ARGUMENT, message: "the request is not one well-formed Message" };
  const answer = rec.options.scenario.hello(r.helloIndex ?? 0, codec, body);
  if (answer.kind === "reply" && !(await hold(answer.holdMs, closed))) {
    r.answer =
      `nothing: held ${answer.holdMs} ms, and the client gave up after ` +
      `${Math.round(performance.now() - rec.t0) - r.atMs} ms`;
    return undefined;
  }
  r.answer =
    answer.kind === "reply"
      ? answer.holdMs > 0
        ? `OK after holding it ${answer.holdMs} ms`
        : "OK"
      : statusWords(answer.code);
  // Each protocol writes the answer as soon as this returns.
  r.answeredAtMs = Math.round(performance.now() - rec.t0);
  return answer;
}

/** What a protocol's recording side asks while it answers the recorded call r. */
const helloAsk = (rec: Recorder, r: RecordedRequest, closed: Promise<void>): HelloAsk => ({
  answer: (codec, message) => answerHello(rec, r, codec, message, closed),
  said: (words) => void (r.answer = words),
  statusName: statusWords,
  maxBodyBytes: MAX_RECORDED_BODY_BYTES,
});

/** The gRPC port (h2c): each call recorded and answered by the protocol whose calls come to it. */
function createGrpcPort(rec: Recorder): { server: http2.Http2Server; sessions: Set<http2.ServerHttp2Session> } {
  const server = http2.createServer({ settings: { maxHeaderListSize: MAX_HEADER_BYTES }, maxSessionMemory: 16 });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("error", () => undefined);
    session.once("close", () => sessions.delete(session));
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    void onGrpc(rec, stream, headers);
  });
  return { server, sessions };
}

async function onGrpc(rec: Recorder, stream: http2.ServerHttp2Stream, raw: http2.IncomingHttpHeaders): Promise<void> {
  /** The protocol whose calls come to the gRPC port. */
  const h2c = recordedOn("h2c");
  const path = String(raw[":path"] ?? "");
  const method = String(raw[":method"] ?? "");
  const closed = new Promise<void>((r) => stream.once("close", r));
  const arrived = performance.now();
  const body = await readBounded(stream, MAX_RECORDED_BODY_BYTES);
  const headers = headerRecord(raw);
  const isHelloCall = method === "POST" && path === HELLO_PATH;
  const r = rec.record(arrived, h2c?.name ?? RESOURCES, method, path, headers, body, isHelloCall);
  const answer = h2c?.recording?.answerH2c;
  if (answer === undefined) return void stream.respond({ ":status": 404 }, { endStream: true });
  const ask = helloAsk(rec, r, closed);
  if (body.truncated)
    return answer(r, stream, ask, {
      code: CODE.RESOURCE_EXHAUSTED,
      message: `request larger than ${MAX_RECORDED_BODY_BYTES} bytes`,
    });
  if (!isHelloCall)
    return answer(
      r,
      stream,
      ask,
      rec.keyMissing(headers, path)
        ? { code: CODE.UNAUTHENTICATED, message: "API key required" }
        : { code: CODE.UNIMPLEMENTED, message: `no procedure at ${path.slice(0, 100)}` },
    );
  return answer(r, stream, ask);
}

/** The reference server's HTTP interface, behind the HTTP port for the /messages resources. */
type Resources = Promise<{ url: string; close(): Promise<void> }>;

async function onHttp(
  rec: Recorder,
  resources: Resources,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const path = req.url ?? "";
  const method = req.method ?? "";
  const closed = new Promise<void>((r) => res.once("close", r));
  const arrived = performance.now();
  const body = await readBounded(req, MAX_RECORDED_BODY_BYTES);
  const headers = headerRecord(req.headers);
  const contentType = (headers["content-type"]?.[0] ?? "").toLowerCase();
  const onHello = path.split("?")[0] === HELLO_PATH;
  const rpc = onHello ? recordedOn("http1", contentType) : undefined;
  const r = rec.record(
    arrived,
    rpc?.name ?? RESOURCES,
    method,
    path,
    headers,
    body,
    rpc !== undefined && method === "POST",
  );
  const plain = (status: number, text: string) => {
    r.answer = String(status);
    if (!res.headersSent)
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", connection: "close" }).end(text);
  };
  if (body.truncated) return plain(413, `request larger than ${MAX_RECORDED_BODY_BYTES} bytes`);
  if (rpc?.recording?.answerHttp1 === undefined) {
    if (rec.keyMissing(headers, path)) {
      r.answer = "401";
      res.writeHead(401, { "www-authenticate": "ApiKey", "content-type": "text/plain" }).end("API key required");
      return;
    }
    return forward(rec.options.apiKey, resources, req, res, r, body.body);
  }
  if (method !== "POST") return plain(405, "Hello is called with POST");
  return rpc.recording.answerHttp1(r, res, helloAsk(rec, r, closed));
}

/** A resource request goes to the reference server's HTTP interface, as recorded; its answer comes back as it is. */
async function forward(
  key: string | undefined,
  resources: Resources,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  r: RecordedRequest,
  body: Uint8Array,
): Promise<void> {
  const target = new URL(r.path.startsWith("/") ? r.path : `/${r.path}`, (await resources).url);
  // The key in a query parameter is this server's to read (part 5 leaves its placement open); the reference server
  // behind it, which refuses a parameter it does not understand, never sees it.
  if (key !== undefined)
    for (const [name, value] of [...target.searchParams])
      if (isKey(value, key)) target.searchParams.delete(name, value);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined && name !== "host") headers[name] = value;
  const answer = await http1Exchange({
    origin: target,
    method: req.method ?? "GET",
    path: target.pathname + target.search,
    headers,
    body,
    timeoutMs: UPSTREAM_TIMEOUT_MS,
    connection: "fresh",
  });
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

export async function startRecordingServers(options: RecordingOptions): Promise<RecordingServers> {
  const rec = createRecorder(options);
  const { server: grpc, sessions } = createGrpcPort(rec);
  // Started with the recording servers, before the client runs: loading the reference server takes about 0.4 s the
  // first time, which a client's own deadline on its first resource request must not pay for.
  const resources: Resources = import("../../reference-server/http/server.js").then((m) =>
    m.startHttpServer({ host: "127.0.0.1", port: 0, log: "silent", shutdownGraceMs: 500 }),
  );
  const httpServer = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    req.on("error", () => undefined);
    res.on("error", () => undefined);
    void onHttp(rec, resources, req, res);
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
    requests: rec.requests,
    received: rec.received,
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
