// The reference HTTP server: the Message resource over a level-3 HTTP interface, on fastify, for `serve` and tests.
import http, { STATUS_CODES } from "node:http";
import { createRequire } from "node:module";
import type { Duplex } from "node:stream";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { createApiKeyCheck } from "./auth.js";
import { HttpError } from "./errors.js";
import { errorLinks } from "./links.js";
import { serialize } from "./representation.js";
import { registerRoutes, ROUTED_METHODS, sendError } from "./routes.js";
import { capConnections, createShedder, defaultLimits, validateLimits, type ProtectionLimits } from "../protection.js";
import { createOwedLedger, type OwedLedger } from "../owed.js";
import { createConnectionGate } from "./connection-gate.js";
import type { PageBounds } from "./page.js";
import { createMemoryStore, type MessageStore, type StoreLimits } from "./store.js";
import { createLogger, type LogLevel, type LogOptions } from "../logger.js";
import { DEFAULT_MAX_RECEIVE_BYTES } from "../grpc.js";
import { createLeanFront, HELLO_RPC_PATH, registerConnectRpc, warmConnectRpc } from "./connect-rpc.js";

export type HttpLogLevel = LogLevel;

/**
 * Logging (LogOptions): debug is one line per request (method, path without query, status, time; never bodies, headers
 * or keys). Default info.
 */
export interface HttpServerOptions extends LogOptions {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port; default 8080. */
  port?: number;
  /** When set, every request but the root document's needs it in X-API-Key. Never logged. */
  apiKey?: string;
  /** Default: a new in-memory store with storeLimits. */
  store?: MessageStore;
  /** Bounds of the default in-memory store (messages and bytes held); past them a create is answered 507. */
  storeLimits?: StoreLimits;
  /** Connections, requests in flight and the memory watermark; requests past a limit get 503 with Retry-After. */
  protection?: Partial<ProtectionLimits>;
  /**
   * What the server owes clients that do not read (../owed.ts); default a ledger of its own with the default limits.
   */
  ledger?: OwedLedger;
  /** How long in-flight requests may run on close before their connections are destroyed. Default 5 s. */
  shutdownGraceMs?: number;
  /** Request headers (with the request line) past this get 431; default Node's 16 KiB. */
  maxHeaderBytes?: number;
  /** Request bodies past this get 413; default 1 MiB. */
  bodyLimitBytes?: number;
  /**
   * Hello over Connect and gRPC-Web: a request message past this gets RESOURCE_EXHAUSTED; default the gRPC port's 4
   * MiB.
   */
  maxMessageBytes?: number;
  /**
   * Encoded bytes of messages one page of the collection carries (a page of one larger message is sent whole, up to
   * maxReplyBytes); default 1 MiB.
   */
  pageBytes?: number;
  /**
   * The largest message representation one reply carries; past it 500 (see README.md). Default 5 × bodyLimitBytes
   * + 64 KiB.
   */
  maxReplyBytes?: number;
  /**
   * A request not fully received within this is answered 408 and its connection closed; default the ledger's arrivalMs
   * (30 s).
   */
  requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this; default 5 s. */
  keepAliveTimeoutMs?: number;
  /**
   * False: the plain Connect and gRPC-Web call goes through fastify too, instead of the lean front (connect-rpc.ts).
   * For tests that compare the two; default true.
   */
  leanFront?: boolean;
  /** Which path answered each Hello over Connect or gRPC-Web: for tests. */
  onRpcServed?: (path: "lean" | "connect-es" | "front") => void;
}

export interface HttpServerHandle {
  /** http://host:port as bound. */
  url: string;
  port: number;
  /** Finishes in-flight requests and closes idle connections. */
  close(): Promise<void>;
}

export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
export const DEFAULT_PAGE_BYTES = 1024 * 1024;

/**
 * Every message a server with this body limit can store fits one reply in both formats: escaping makes a body at
 * most five times larger (`&` is `&amp;` in XML), and its id, links and "Hello, " take far less than 64 KiB.
 */
export function defaultMaxReplyBytes(bodyLimitBytes: number): number {
  return 5 * bodyLimitBytes + 64 * 1024;
}

function pageBoundsOf(options: HttpServerOptions, bodyLimitBytes: number): PageBounds {
  const softBytes = options.pageBytes ?? DEFAULT_PAGE_BYTES;
  const hardBytes = options.maxReplyBytes ?? Math.max(softBytes, defaultMaxReplyBytes(bodyLimitBytes));
  for (const [name, value] of [
    ["pageBytes", softBytes],
    ["maxReplyBytes", hardBytes],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  if (hardBytes < softBytes)
    throw new RangeError(`maxReplyBytes (${hardBytes}) must be at least pageBytes (${softBytes})`);
  return { softBytes, hardBytes };
}

/**
 * Where the server listens and how large a body it reads, checked: a bad value is a RangeError, before anything starts.
 */
function listenSettings(options: HttpServerOptions): { host: string; port: number; bodyLimitBytes: number } {
  const host = options.host ?? "127.0.0.1";
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  if (!Number.isInteger(bodyLimitBytes) || bodyLimitBytes < 1) {
    throw new RangeError(`bodyLimitBytes must be a positive integer, got ${bodyLimitBytes}`);
  }
  const port = options.port ?? 8080;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`port must be 0 to 65535, got ${port}`);
  return { host, port, bodyLimitBytes };
}

/** Every method the routes answer reaches them, and every body as bytes: the routes decide what is supported. */
function acceptEveryMethodAndBody(app: FastifyInstance): void {
  for (const method of ROUTED_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
  // Bodies are read as bytes whatever their type: the routes decide what is supported (415) and parse strictly
  // (400), so the framework's lenient JSON parser never sees them.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "*",
    { parseAs: "buffer" },
    (_request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: Buffer) => void) => {
      done(null, body);
    },
  );
}

/** The protection's caps: connections past them closed at once, requests past the shedder's answered 503. */
function protect(
  app: FastifyInstance,
  options: HttpServerOptions,
  log: ReturnType<typeof createLogger>,
): ReturnType<typeof createShedder> {
  const protection = validateLimits({ ...defaultLimits(), ...options.protection });
  // Before any protocol: a connection past the caps is closed at once, so HTTP can never take the descriptors the
  // gRPC interface needs (each has its own share).
  capConnections(app.server, protection, (reason) => log.debug({ msg: "connection refused", detail: reason }));
  const shedder = createShedder(protection);
  shedRequests(app, shedder, log);
  return shedder;
}

/** Requests past the shedder's bound are answered 503 with Retry-After before any route runs. */
function shedRequests(
  app: FastifyInstance,
  shedder: ReturnType<typeof createShedder>,
  log: ReturnType<typeof createLogger>,
): void {
  app.addHook("onRequest", (request, reply, done) => {
    const refused = shedder.admit();
    if (refused !== undefined) {
      log.debug({ msg: "request shed", detail: refused });
      void sendError(request, reply, new HttpError(503, `${refused}; retry later`, { "retry-after": "1" }));
      return;
    }
    let ended = false;
    const end = () => {
      if (!ended) shedder.done();
      ended = true;
    };
    reply.raw.once("finish", end);
    reply.raw.once("close", end);
    done();
  });
}

export async function startHttpServer(options: HttpServerOptions = {}): Promise<HttpServerHandle> {
  const { host, port } = listenSettings(options);
  const { app, shedder, log } = await buildHttpApp(options);
  try {
    await app.listen({ host, port });
  } catch (err) {
    await app.close();
    shedder.stop();
    throw err;
  }
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error(`unexpected server address ${String(address)}`);
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  log.info({ msg: "http listening", url, keyRequired: options.apiKey !== undefined });
  return {
    url,
    port: address.port,
    async close() {
      // app.close waits for requests in flight, which a client may hold open: after the grace, their
      // connections are destroyed.
      const grace = options.shutdownGraceMs ?? 5000;
      const timer = setTimeout(() => {
        log.info({ msg: "http shutdown forced", afterMs: grace });
        app.server.closeAllConnections();
      }, grace);
      try {
        await app.close();
      } finally {
        clearTimeout(timer);
        shedder.stop();
      }
      log.info({ msg: "http stopped" });
    },
  };
}

/** What startHttpServer listens with, and what createHttpHandler (handler.ts) serves without a socket. */
export interface BuiltHttpApp {
  app: FastifyInstance;
  shedder: ReturnType<typeof createShedder>;
  log: ReturnType<typeof createLogger>;
}

const require = createRequire(import.meta.url);

/**
 * fastify's schema compilers, loaded when a route first asks for one: the reference's routes declare no schema, so
 * ajv and fast-json-stringify (about 0.1 CPU-s at each start, which fastify spends by default) are never loaded.
 */
const LAZY_COMPILERS = {
  buildValidator: (...args: unknown[]) =>
    (require("@fastify/ajv-compiler") as () => (...a: unknown[]) => unknown)()(...args),
  buildSerializer: (...args: unknown[]) =>
    (require("@fastify/fast-json-stringify-compiler") as () => (...a: unknown[]) => unknown)()(...args),
};

/**
 * The reference's fastify app with its routes, protections and hooks, warmed up but not listening: the server
 * fastify makes keeps its requests behind the connection gate once it listens.
 */
export async function buildHttpApp(options: HttpServerOptions = {}): Promise<BuiltHttpApp> {
  const { bodyLimitBytes } = listenSettings(options);
  const log = createLogger(options, "info");
  const pageBounds = pageBoundsOf(options, bodyLimitBytes);
  const ledger = options.ledger ?? createOwedLedger();

  const requestTimeout = options.requestTimeoutMs ?? ledger.limits.arrivalMs;
  /** The lean path in front of fastify (connect-rpc.ts), once the shedder it admits calls with exists. */
  const front: { serve?: (raw: http.IncomingMessage, res: http.ServerResponse) => boolean } = {};
  const app = Fastify({
    // The framework's logger would log request URLs and errors our way does not; ours logs what it means to.
    logger: false,
    bodyLimit: bodyLimitBytes,
    // HEAD is routed explicitly to the GET handler, so that it runs the same checks and sends the same headers.
    exposeHeadRoutes: false,
    // Rules 5 and 7 of part 4.2: another spelling of a path is another resource, which here does not exist.
    routerOptions: {
      caseSensitive: true,
      ignoreTrailingSlash: false,
      ignoreDuplicateSlashes: false,
      maxParamLength: 256,
    },
    serverFactory: (handler) => gatedServer(withFront(front, handler), ledger, log, options, requestTimeout),
    return503OnClosing: true,
    schemaController: { compilersFactory: LAZY_COMPILERS as never },
    clientErrorHandler: answerUnparsedRequest,
    // Malformed URLs and overlong ids are the client's mistakes: answered like any other error.
    frameworkErrors: (error, request, reply) => {
      const status =
        typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 500
          ? error.statusCode
          : 400;
      void sendError(request as FastifyRequest, reply as FastifyReply, new HttpError(status, error.message));
    },
  });
  acceptEveryMethodAndBody(app);

  const shedder = protect(app, options, log);

  registerRoutes(app, {
    store: options.store ?? createMemoryStore(options.storeLimits),
    ...(options.apiKey !== undefined && { apiKeyCheck: createApiKeyCheck(options.apiKey) }),
    bodyLimitBytes,
    pageBounds,
    openRoutes: new Set([HELLO_RPC_PATH]),
    onServerError: (err, request) => {
      // A store's message may quote stored data, so only its name goes out at the default level.
      log.info({
        msg: "http server error",
        method: request.method,
        path: pathOf(request.url),
        error: err instanceof Error ? err.name : typeof err,
      });
      log.debug({ msg: "http server error detail", error: err instanceof Error ? err.message : String(err) });
    },
  });
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_RECEIVE_BYTES;
  await registerConnectRpc(app, { maxMessageBytes, ...(options.onRpcServed && { onServed: options.onRpcServed }) });
  if (options.leanFront !== false)
    front.serve = leanFront(app, options, { maxMessageBytes, bodyLimitBytes, requestTimeout, shedder, log });
  boundRequestArrival(app, requestTimeout);
  const warmed = logRequests(app, log);

  try {
    await warmConnectRpc(app);
    warmed();
  } catch (err) {
    await app.close();
    shedder.stop();
    throw err;
  }
  return { app, shedder, log };
}

/**
 * The lean front (connect-rpc.ts) with what fastify's hooks would do for its calls: the shedder, the 408 bound; off
 * once the server closes (fastify answers 503 and closes the connection) and at the debug level (fastify's hook logs
 * every request).
 */
function leanFront(
  app: FastifyInstance,
  options: HttpServerOptions,
  the: {
    maxMessageBytes: number;
    bodyLimitBytes: number;
    requestTimeout: number;
    shedder: ReturnType<typeof createShedder>;
    log: ReturnType<typeof createLogger>;
  },
) {
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  const timedOut = Object.assign(new Error("request timeout"), { code: "ERR_HTTP_REQUEST_TIMEOUT" });
  return createLeanFront({
    maxMessageBytes: the.maxMessageBytes,
    bodyLimitBytes: the.bodyLimitBytes,
    requestTimeoutMs: the.requestTimeout,
    onLate: (socket) => answerUnparsedRequest(timedOut, socket),
    open: () => !closing && !the.log.isLevelEnabled("debug"),
    shedder: the.shedder,
    ...(options.onRpcServed && { onServed: options.onRpcServed }),
  });
}

/** fastify's handler, after the lean front (connect-rpc.ts) has taken the calls it answers itself. */
function withFront(
  front: { serve?: (raw: http.IncomingMessage, res: http.ServerResponse) => boolean },
  handler: http.RequestListener,
): http.RequestListener {
  return (raw, res) => {
    if (front.serve?.(raw, res) !== true) handler(raw, res);
  };
}

/**
 * The server fastify would make, with its requests behind the gate (connection-gate.ts): one at a time per connection,
 * the next once the kernel took the previous reply, and a connection that never reads is closed.
 */
function gatedServer(
  handler: http.RequestListener,
  ledger: OwedLedger,
  log: ReturnType<typeof createLogger>,
  options: HttpServerOptions,
  requestTimeout: number,
): http.Server {
  const gate = createConnectionGate(handler, {
    ledger,
    onClose: (why) => log.debug({ msg: "connection closed", detail: why }),
  });
  const server = http.createServer(
    {
      // Node looks for overdue requests every 30 s by default, so a 30 s bound could take a minute: look more often.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(requestTimeout / 4))),
      ...(options.maxHeaderBytes !== undefined && { maxHeaderSize: options.maxHeaderBytes }),
    },
    gate.handler,
  );
  // A client that trickles its request out does not hold a connection for Node's default five minutes.
  server.requestTimeout = requestTimeout;
  // Node's own default: an idle connection costs the server a socket, so it does not stay for fastify's 72 s.
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 5_000;
  return server;
}

/**
 * Node's requestTimeout stops at the headers: a body that trickles in would hold the connection for as long as the
 * client likes. The same bound covers the body, counted from the request's start.
 */
function boundRequestArrival(app: FastifyInstance, requestTimeout: number): void {
  app.addHook("onRequest", (request, reply, done) => {
    const raw = request.raw;
    if (!raw.complete) {
      const timer = setTimeout(() => {
        if (!raw.complete)
          answerUnparsedRequest(
            Object.assign(new Error("request timeout"), { code: "ERR_HTTP_REQUEST_TIMEOUT" }),
            raw.socket,
          );
      }, requestTimeout);
      const clear = () => clearTimeout(timer);
      raw.once("end", clear);
      raw.once("close", clear);
      reply.raw.once("finish", clear);
    }
    done();
  });
}

/**
 * One debug line per request a client made; returns what ends the warm-up, whose calls are the server's own and get
 * none.
 */
function logRequests(app: FastifyInstance, log: ReturnType<typeof createLogger>): () => void {
  let warming = true;
  app.addHook("onResponse", async (request, reply) => {
    if (!warming)
      log.debug({
        msg: "request",
        method: request.method,
        path: pathOf(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      });
  });
  return () => {
    warming = false;
  };
}

/** The query can hold a filter, which is message data: logs keep only the path. */
function pathOf(url: string): string {
  const at = url.indexOf("?");
  return at === -1 ? url : url.slice(0, at);
}

/**
 * A request Node cannot parse never reaches the routes, so nothing was negotiated: the error goes in JSON, the
 * default, but in the same shape as every other error rather than the framework's own.
 */
function answerUnparsedRequest(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const status = err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : err.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
  const reason = STATUS_CODES[status] ?? "";
  const message =
    status === 408
      ? "the request did not arrive in time"
      : status === 431
        ? "the request headers are too large"
        : "the request is not valid HTTP/1.1";
  const body = serialize("json", { kind: "error", status, reason, message, links: errorLinks() });
  // Only on a connection that has sent nothing yet, as Node's own handler does: after a response that said
  // Connection: close, bytes the client sent past it (a body it did not frame) must not get a second response.
  if (socket.writable && (socket as Duplex & { bytesWritten?: number }).bytesWritten === 0) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ` +
        `${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
