// The harness's one HTTP/1.1 client: every HTTP/1 request a check, a probe, a load run or the trace recorder makes
// goes out here, over http or https, on a connection of its own or a keep-alive pool's, and comes back read within
// the bounds of wire/bounds.ts (reply bytes, header bytes) and its time bound, as one shape: a failure is a value,
// never a throw. Its callers build their requests (paths exactly as written, headers, TLS options) and read the
// answers by their own rules (content codings, protocol codecs, traces, observers).
import http from "node:http";
import https from "node:https";
import type { ConnectionOptions } from "node:tls";
import { MAX_HEADER_BYTES, MAX_REPLY_BYTES } from "./bounds.js";
import { readHeadTail } from "./_internals/head-tail.js";
import { headerLists, type Http1Answer, type Http1Failure } from "./_internals/http1-answer.js";
import { openUndiciPool, undiciExchange } from "./_internals/undici-pool.js";
import type { Pool } from "undici";

export type { Http1Answer, Http1Failure } from "./_internals/http1-answer.js";

/** Keep-alive connections to one origin, at most maxSockets at a time (a request waits for one past that). */
export interface Http1Pool {
  close(): void;
}

/**
 * Which client a pool's exchanges go through. "node:http" (the default; every check's pool): an http(s).Agent, which
 * sends any request as written. "undici" (the load runs'): undici's Pool, cheaper per call; a request undici will
 * not send as written (a header name or path it refuses) and one with its own host or port go through the pool's
 * node:http Agent instead. Both read within the same bounds into the same shapes; fresh connections (and headBody
 * HEADs) are always node:http's.
 */
export type Http1Client = "node:http" | "undici";

export interface Http1PoolOptions {
  maxSockets?: number;
  tls?: ConnectionOptions;
  client?: Http1Client;
}

export interface Http1Request {
  /** Its scheme says http or https; its host and port are where the connection goes unless host or port says. */
  origin: URL;
  /** The host to connect to (a name or an address without brackets); default the origin's. */
  host?: string;
  port?: number;
  method: string;
  /** Sent exactly as written. */
  path: string;
  /** Sent as given (an array: one field per value); Node adds Host from host and port when they hold none. */
  headers: Readonly<Record<string, string | string[]>>;
  body?: Uint8Array;
  timeoutMs: number;
  /**
   * Reply body bytes read at most; past them the exchange ends "too-large" with the first maxBytes. Default
   * MAX_REPLY_BYTES.
   */
  maxBytes?: number;
  /** A connection of its own, closed after the exchange (no state rides on the client side), or a pool's. */
  connection: "fresh" | Http1Pool;
  /** A fresh https connection's TLS options (a pool has its own). */
  tls?: ConnectionOptions;
  /** Ends the exchange as a failed connection, saying the error's message. */
  signal?: AbortSignal;
  /**
   * A HEAD on a fresh connection: the body is what the raw bytes show after the response head (Node's parser drops
   * it), read until the server closes or a short tail passes.
   */
  headBody?: boolean;
}

const agents = new WeakMap<Http1Pool, () => http.Agent>();
const undiciPools = new WeakMap<Http1Pool, Pool>();

/** A keep-alive pool for origin's scheme; tls: an https pool's TLS options; client: see Http1Client. */
export function openHttp1Pool(origin: URL, options: Http1PoolOptions = {}): Http1Pool {
  const limit = options.maxSockets === undefined ? {} : { maxSockets: options.maxSockets };
  let agent: http.Agent | undefined;
  const agentOf = () =>
    (agent ??=
      origin.protocol === "https:"
        ? new https.Agent({ keepAlive: true, ...limit, ...options.tls })
        : new http.Agent({ keepAlive: true, ...limit }));
  const fast = options.client === "undici" ? openUndiciPool(origin, options.maxSockets, options.tls) : undefined;
  // An undici pool's Agent is made only when a request needs it; a node:http pool's at once, as before.
  if (fast === undefined) agentOf();
  const pool: Http1Pool = {
    close: () => {
      agent?.destroy();
      void fast?.destroy().catch(() => undefined);
    },
  };
  agents.set(pool, agentOf);
  if (fast !== undefined) undiciPools.set(pool, fast);
  return pool;
}

function requestOptions(req: Http1Request): https.RequestOptions {
  const agent = req.connection === "fresh" ? false : agents.get(req.connection)?.();
  if (agent === undefined) throw new Error("an HTTP/1.1 pool openHttp1Pool did not open");
  return {
    host: req.host ?? req.origin.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: req.port ?? (req.origin.port === "" ? undefined : Number(req.origin.port)),
    method: req.method,
    path: req.path,
    headers: req.headers,
    maxHeaderSize: MAX_HEADER_BYTES,
    agent,
    ...(req.origin.protocol === "https:" && req.connection === "fresh" && req.tls),
  };
}

/** One exchange, bounded in time, reply bytes and header bytes; it always resolves. */
export async function http1Exchange(req: Http1Request): Promise<Http1Answer> {
  const fast = req.connection === "fresh" ? undefined : undiciPools.get(req.connection);
  if (fast !== undefined && req.host === undefined && req.port === undefined) {
    const answer = await undiciExchange(fast, { ...req, maxBytes: req.maxBytes ?? MAX_REPLY_BYTES });
    if (answer !== "refused") return answer;
  }
  return nodeExchange(req);
}

/** An exchange through node:http: a fresh connection, or a pool's Agent. */
function nodeExchange(req: Http1Request): Promise<Http1Answer> {
  const maxBytes = req.maxBytes ?? MAX_REPLY_BYTES;
  const headBody = req.headBody === true && req.method.toUpperCase() === "HEAD" && req.connection === "fresh";
  return new Promise<Http1Answer>((resolve) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    let head: Omit<Http1Answer, "body"> | undefined;
    const chunks: Buffer[] = [];
    const finish = (answer: Http1Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", cancel);
      if (req.connection === "fresh" || answer.failure !== undefined) request?.destroy();
      resolve(answer);
    };
    const failAs = (failure: Http1Failure) =>
      finish({ ...(head ?? { headers: {} }), body: Buffer.concat(chunks), failure });
    const timer = setTimeout(
      () => finish({ headers: {}, body: Buffer.alloc(0), failure: { kind: "timeout" } }),
      req.timeoutMs,
    );
    const cancel = () => request?.destroy(new Error("cancelled: the caller's time ran out"));
    const tail = headBody ? readHeadTail(maxBytes) : undefined;
    try {
      request = (req.origin.protocol === "https:" ? https : http).request(requestOptions(req));
    } catch (err) {
      failAs({ kind: "connection", message: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (tail) request.on("socket", tail.watch);
    req.signal?.addEventListener("abort", cancel, { once: true });
    request.on("error", (err: NodeJS.ErrnoException) => {
      // After a HEAD's response, an error is the parser choking on bytes past it (a body): the answer stands.
      if (tail && head) return;
      failAs({
        kind: "connection",
        message: err.message,
        ...(head === undefined && err.code !== undefined && /^E[A-Z]+$/.test(err.code) && { code: err.code }),
      });
    });
    request.on("response", (res: http.IncomingMessage) => {
      head = { status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", headers: headerLists(res.rawHeaders) };
      let size = 0;
      res.on("data", (c: Buffer) => {
        if (settled) return;
        if (size + c.length > maxBytes) {
          chunks.push(c.subarray(0, maxBytes - size));
          failAs({ kind: "too-large" });
          return;
        }
        size += c.length;
        chunks.push(c);
      });
      res.on("end", () => {
        const whole = head as Omit<Http1Answer, "body">;
        if (tail)
          void tail.body(res.socket, Math.min(req.timeoutMs, tail.ms)).then((body) => finish({ ...whole, body }));
        else finish({ ...whole, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) });
      });
      res.on("error", (err) => failAs({ kind: "connection", message: err.message }));
      res.on("close", () => {
        if (!res.complete) failAs({ kind: "connection", message: "the connection closed before the reply's end" });
      });
    });
    request.end(
      req.body === undefined ? undefined : Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength),
    );
  });
}
