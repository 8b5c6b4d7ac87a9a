// A keep-alive pool's exchanges through undici (a Pool per origin, one request per connection at a time), for the
// pools that ask for it: the load runs'. node:http's Agent costs the load process more CPU per call than the
// server's own work (request queueing, option objects, IncomingMessage streams: measured with --cpu-prof on
// `load --connect`, see docs/performance.md); undici's dispatcher reads the same bytes with less. Bounds and shapes
// are http1.ts's: reply bytes (past them "too-large", the connection destroyed), header bytes (undici's
// maxHeaderSize), the time bound (the request aborted, its connection destroyed), the caller's signal, and a failure
// as a value. Connections are made here (net, or wire/tls.ts with the pool's TLS options as they are, so no ALPN is
// offered: undici's own connector would offer http/1.1).
import { createRequire } from "node:module";
import net from "node:net";
import type { ConnectionOptions } from "node:tls";
import type { Dispatcher, Pool } from "undici";
import { MAX_HEADER_BYTES } from "../bounds.js";
import { openTlsWith } from "../tls.js";
import { headerLists, type Http1Answer, type Http1Failure } from "./http1-answer.js";

/** A request undici can send as written: what http1.ts hands over. */
export interface UndiciRequest {
  method: string;
  path: string;
  headers: Readonly<Record<string, string | string[]>>;
  body?: Uint8Array;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

/**
 * undici's Pool, loaded on the first pool that asks for it (a check run never does), from its own module: undici's
 * index loads all of undici (fetch, WebSocket, caches), 92 ms of CPU against 28 ms for the Pool alone (measured with
 * process.cpuUsage in a fresh process). undici declares no "exports", and package.json pins its version.
 */
let PoolClass: typeof Pool | undefined;
const POOL_MODULE = "undici/lib/dispatcher/pool.js";

/** undici's own connection pool to origin (http or https), at most `connections` connections, one call on each. */
export function openUndiciPool(origin: URL, connections: number | undefined, tlsOptions?: ConnectionOptions): Pool {
  PoolClass ??= createRequire(import.meta.url)(POOL_MODULE) as typeof Pool;
  const secure = origin.protocol === "https:";
  return new PoolClass(origin.origin, {
    ...(connections !== undefined && Number.isFinite(connections) && { connections }),
    pipelining: 1,
    maxHeaderSize: MAX_HEADER_BYTES,
    // The exchange's own timer bounds it (headers and body alike); undici's would end it with other words.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: (options, callback) => {
      const at = { host: options.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(options.port) };
      const socket = secure ? openTlsWith(at, tlsOptions ?? {}) : net.connect(at);
      socket.setNoDelay(true);
      const ready = secure ? "secureConnect" : "connect";
      const failed = (err: Error) => {
        socket.off(ready, opened);
        callback(err, null);
      };
      const opened = () => {
        socket.off("error", failed);
        callback(null, socket);
      };
      socket.once(ready, opened).once("error", failed);
      return socket;
    },
  });
}

/**
 * One exchange on the pool; it always resolves. "refused" when undici will not send the request as written (a header
 * or path it rejects): the caller sends it another way.
 */
export function undiciExchange(pool: Pool, req: UndiciRequest): Promise<Http1Answer | "refused"> {
  return new Promise((resolve) => {
    let settled = false;
    let abort: ((reason?: Error) => void) | undefined;
    let head: Omit<Http1Answer, "body"> | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (answer: Http1Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", cancel);
      // A reply ended early leaves its connection mid-reply: undici destroys it on abort.
      if (answer.failure !== undefined) abort?.(new Error(answer.failure.kind));
      resolve(answer);
    };
    const failAs = (failure: Http1Failure) => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      finish({ ...(head ?? { headers: {} }), body, failure });
    };
    const timer = setTimeout(
      () => finish({ headers: {}, body: Buffer.alloc(0), failure: { kind: "timeout" } }),
      req.timeoutMs,
    );
    const cancel = () => failAs({ kind: "connection", message: "cancelled: the caller's time ran out" });
    if (req.signal?.aborted) {
      cancel();
      return;
    }
    req.signal?.addEventListener("abort", cancel, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onConnect(a) {
        abort = a;
        if (settled) a(new Error("settled"));
      },
      onHeaders(status, raw, _resume, statusText) {
        head = { status, statusText, headers: headerLists(raw as unknown as readonly Buffer[]) };
        return true;
      },
      onData(chunk) {
        if (settled) return false;
        if (size + chunk.length > req.maxBytes) {
          chunks.push(chunk.subarray(0, req.maxBytes - size));
          failAs({ kind: "too-large" });
          return false;
        }
        size += chunk.length;
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        const whole = head as Omit<Http1Answer, "body">;
        finish({ ...whole, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) });
      },
      onError(err: Error & { code?: string }) {
        if (settled) return;
        if (err.code === "UND_ERR_INVALID_ARG" && abort === undefined) {
          settled = true;
          clearTimeout(timer);
          req.signal?.removeEventListener("abort", cancel);
          resolve("refused");
          return;
        }
        failAs(failureOf(err, head !== undefined));
      },
    };
    pool.dispatch(
      {
        method: req.method,
        path: req.path,
        headers: req.headers as Record<string, string | string[]>,
        ...(req.body !== undefined && {
          body: Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength),
        }),
      } as Dispatcher.DispatchOptions,
      handler,
    );
  });
}

/**
 * A connection failure in node:http's words, so that check and load name it alike whichever client sent: the other
 * side closing before any reply is node:http's "socket hang up" (ECONNRESET), after the head "closed before the
 * reply's end", a head past the bound node:http's header overflow; a system error keeps its code before any reply,
 * as http1.ts does.
 */
function failureOf(err: Error & { code?: string }, answered: boolean): Http1Failure {
  if (err.code === "UND_ERR_SOCKET")
    return answered
      ? { kind: "connection", message: "the connection closed before the reply's end" }
      : { kind: "connection", message: "socket hang up", code: "ECONNRESET" };
  if (err.code === "UND_ERR_HEADERS_OVERFLOW") return { kind: "connection", message: "Parse Error: Header overflow" };
  return {
    kind: "connection",
    message: err.message,
    ...(!answered && err.code !== undefined && /^E[A-Z]+$/.test(err.code) && { code: err.code }),
  };
}
