// `load --connect` and `load --grpc-web` over HTTP/1.1 on a client made for exactly this call, as `load --grpc` has
// its raw HTTP/2 client: one keep-alive socket per call in flight (slot w on socket w), each distinct request's bytes
// (request line, headers and body) built once and written in one write, and the reply parsed from the socket's
// chunks as they come, with one sweep for the deadlines instead of a timer per call. Measured with `--cpu-prof` and
// process CPU on `load --connect` against the reference (docs/load.md): undici's pool (request objects, header
// lists, its llhttp in WebAssembly, a timer per call) cost the load process 45-49 us of CPU a call, four to five times
// what `load --grpc`'s client does; here it is the write and read of the socket and a few string operations.
//
// Bounded as wire/http1.ts's clients are, and read against any server: a response head past MAX_HEADER_BYTES, a
// body past MAX_LOAD_REPLY_BYTES, a malformed head or chunk, bytes the server sends unasked, and a call past its
// deadline each end the connection; a reply is framed by RFC 9112 §6.3 (no body for 1xx, 204 and 304; chunked when
// Transfer-Encoding ends in it, trailers read and dropped; else Content-Length, all its values equal; else up to the
// close), and interim 1xx replies are skipped. A failure is worded as the pool's (`socket hang up` and ECONNRESET for
// a connection closed before any reply, `the connection closed before the reply's end` after the head). A request it
// cannot write as given (a header or path with bytes HTTP/1.1 forbids, a hop-by-hop header) is left to the pool:
// rawH1Caller returns undefined. The replies at rest are asked through the pool, a client apart.
import net from "node:net";
import type { ConnectionOptions } from "node:tls";
import { MAX_HEADER_BYTES } from "../../wire/bounds.js";
import { HTTP_TOKEN } from "../../targets/http-target.js";
import { openTlsWith } from "../../wire/tls.js";
import type { BoundedReply, HttpRpcRequest, HttpWire } from "./http-rpc-call.js";

/** A header value HTTP/1.1 can carry as it is: no CR, LF or NUL, no other control but tab. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** A request target: visible ASCII, starting with a slash. */
const ORIGIN_FORM = /^\/[\x21-\x7e]*$/;
/** Headers about the connection itself, which this client sets (or leaves out) on its own. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te"]);
/** Longest line of a chunked body (size and extensions) read before the connection is ended. */
const MAX_CHUNK_LINE_BYTES = 4096;

/** Where the connections go: an http:// or https:// origin, and for https the TLS options (no ALPN offered). */
export interface RawH1Target {
  origin: URL;
  tls?: ConnectionOptions;
}

/**
 * Each request's bytes, or undefined when one cannot be written as given: the wire's headers, then the Host (the
 * wire's authority, else the origin's host), then the request's own, as the pool's exchange merges them.
 */
export function requestBytes(origin: URL, wire: HttpWire, requests: readonly HttpRpcRequest[]): Buffer[] | undefined {
  const out: Buffer[] = [];
  for (const req of requests) {
    const target =
      wire.query === undefined ? req.path : `${req.path}${req.path.includes("?") ? "&" : "?"}${wire.query}`;
    if (!ORIGIN_FORM.test(target)) return undefined;
    const fields: Record<string, string> = {
      ...wire.headers,
      ...(wire.authority !== undefined && { host: wire.authority }),
      ...req.headers,
    };
    const names = Object.keys(fields).map((n) => n.toLowerCase());
    if (new Set(names).size !== names.length) return undefined;
    let head = `POST ${target} HTTP/1.1\r\n`;
    if (!names.includes("host")) head += `host: ${origin.host}\r\n`;
    for (const [name, value] of Object.entries(fields)) {
      if (!HTTP_TOKEN.test(name) || !FIELD_VALUE.test(value) || HOP_BY_HOP.has(name.toLowerCase())) return undefined;
      head += `${name}: ${value}\r\n`;
    }
    if (fields["content-length"] !== String(req.body.length)) return undefined;
    out.push(Buffer.concat([Buffer.from(`${head}\r\n`, "latin1"), req.body]));
  }
  return out;
}

/** A final response head: its status, fields, whether the connection stays open, and how its body is framed. */
interface Head {
  status: number;
  headers: Record<string, string[]>;
  keepAlive: boolean;
  /** Its body's length (0: none), or chunked, or up to the close. */
  length: number | "chunked" | "close";
}

/** A response head's text (without its last CRLF CRLF) read: "interim" for a 1xx, a string saying why it is bad. */
function parseHead(text: string): Head | "interim" | string {
  const [statusLine, ...fields] = text.split("\r\n");
  const status = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\r\n]*)?$/.exec(statusLine as string);
  if (status === null) return "Parse Error: Invalid response status";
  const headers: Record<string, string[]> = {};
  for (const field of fields) {
    const colon = field.indexOf(":");
    const name = field.slice(0, colon);
    if (colon < 1 || !HTTP_TOKEN.test(name)) return "Parse Error: Invalid header value char";
    const value = field.slice(colon + 1).trim();
    if (!FIELD_VALUE.test(value)) return "Parse Error: Invalid header value char";
    (headers[name.toLowerCase()] ??= []).push(value);
  }
  const code = Number(status[2]);
  if (code === 101) return "Parse Error: an upgrade nobody asked for";
  if (code < 200) return "interim"; // the reply is still to come
  const connection = (headers.connection ?? []).join(",").toLowerCase();
  const keepAlive = status[1] === "1" ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
  const te = headers["transfer-encoding"];
  const lengths = headers["content-length"]?.flatMap((v) => v.split(",").map((x) => x.trim()));
  if (code === 204 || code === 304) return { status: code, headers, keepAlive, length: 0 };
  // RFC 9112 §6.3: Transfer-Encoding over Content-Length (and the connection closed after such a reply); chunked
  // only as the last coding, else the body runs to the close.
  if (te !== undefined) {
    const length = /(^|,)\s*chunked\s*$/i.test(te.join(",")) ? "chunked" : "close";
    return { status: code, headers, keepAlive: keepAlive && lengths === undefined && length === "chunked", length };
  }
  if (lengths === undefined) return { status: code, headers, keepAlive: false, length: "close" };
  if (!lengths.every((l) => /^\d{1,15}$/.test(l) && l === lengths[0])) return "Parse Error: Invalid content-length";
  return { status: code, headers, keepAlive, length: Number(lengths[0]) };
}

type Phase = "head" | "length" | "chunk-line" | "chunk-data" | "chunk-end" | "trailers" | "close" | "done";

/** One slot: its connection, and the call on it with the reply parsed so far. */
class Slot {
  socket: net.Socket | undefined = undefined;
  /** The call in flight: resolved once, with the reply or why there is none. */
  done: ((r: BoundedReply | string) => void) | undefined = undefined;
  deadline = 0;
  /** Which distinct request the call sent. */
  request = 0;
  phase: Phase = "head";
  /** Bytes of the head (or of a chunk line, or of the trailers) not yet whole. */
  pending: Buffer | undefined = undefined;
  headBytes = 0;
  /** Bytes of trailer fields read so far. */
  trailerBytes = 0;
  status = 0;
  headers: Record<string, string[]> = {};
  keepAlive = true;
  /** Body bytes still to come (Content-Length, or the chunk being read). */
  left = 0;
  chunks: Buffer[] = [];
  size = 0;
  /** Bytes of the reply seen: none means the server closed before answering anything. */
  seen = 0;
  /** Why the socket ended, when it was an error: its code (ECONNREFUSED) or message. */
  error: string | undefined = undefined;

  constructor(
    /** For each distinct request, the last final response head any slot had to it, and what it says. */
    private readonly cache: { text: string; head: Head | undefined }[],
    private readonly target: RawH1Target,
    private readonly timeoutMs: number,
    private readonly maxBytes: number,
  ) {}

  start(i: number, request: Buffer, done: (r: BoundedReply | string) => void): void {
    this.request = i;
    this.done = done;
    this.deadline = performance.now() + this.timeoutMs;
    this.phase = "head";
    this.pending = undefined;
    this.headBytes = 0;
    this.trailerBytes = 0;
    this.headers = {};
    this.keepAlive = true;
    this.chunks = [];
    this.size = 0;
    this.seen = 0;
    (this.socket ?? this.open()).write(request);
  }

  private open(): net.Socket {
    const { origin, tls } = this.target;
    const secure = origin.protocol === "https:";
    const at = { host: origin.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(origin.port || (secure ? 443 : 80)) };
    const socket = secure ? openTlsWith(at, tls ?? {}) : net.connect(at);
    socket.setNoDelay(true);
    this.error = undefined;
    socket.on("data", (chunk: Buffer) => this.read(socket, chunk));
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (this.socket === socket)
        this.error ??= err.code !== undefined && /^E[A-Z]+$/.test(err.code) ? err.code : err.message;
    });
    socket.on("close", () => this.closed(socket));
    this.socket = socket;
    return socket;
  }

  /** Ends the call with `r` and, unless the reply left the connection reusable, the connection. */
  private finish(r: BoundedReply | string, reusable: boolean): void {
    const done = this.done;
    this.done = undefined;
    this.chunks = [];
    this.pending = undefined;
    if (!reusable) this.drop();
    done?.(r);
  }

  /** Destroys the connection; the next call opens another. */
  drop(): void {
    const socket = this.socket;
    this.socket = undefined;
    socket?.destroy();
  }

  private closed(socket: net.Socket): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    if (this.done === undefined) return;
    if (this.phase === "close" && this.error === undefined) return this.complete(false);
    if (this.phase === "head" && this.headBytes === 0 && this.seen === 0)
      return this.finish(this.error ?? "ECONNRESET", false);
    this.finish(this.phase === "head" ? "ECONNRESET" : "the connection closed before the reply's end", false);
  }

  /** The call past its deadline ends, and so does its connection (the reply may still come). */
  expire(now: number): void {
    if (this.done !== undefined && now >= this.deadline) this.finish(`no reply within ${this.timeoutMs} ms`, false);
  }

  private read(socket: net.Socket, chunk: Buffer): void {
    if (this.socket !== socket) return;
    // Bytes no request asked for: the connection can no longer be trusted to frame the next reply.
    if (this.done === undefined) return this.drop();
    this.seen += chunk.length;
    let at = 0;
    while (at < chunk.length && this.done !== undefined) at = this.step(chunk, at);
    // Past the reply's end: the server sent what was not asked for.
    if (at < chunk.length) this.drop();
  }

  /** Reads from chunk[at]; returns where it stopped (the chunk's end, or the reply's). */
  private step(chunk: Buffer, at: number): number {
    switch (this.phase) {
      case "head": {
        const lines = this.lines(chunk, at, MAX_HEADER_BYTES, "\r\n\r\n");
        if (lines === undefined) return chunk.length;
        if (lines.text === undefined) return this.fail("Parse Error: Header overflow");
        this.head(lines.text);
        return lines.next;
      }
      case "trailers": {
        // Trailer fields, a line each, up to an empty line; read and dropped, within the head's bound in all.
        const line = this.lines(chunk, at, MAX_HEADER_BYTES - this.trailerBytes, "\r\n");
        if (line === undefined) return chunk.length;
        if (line.text === undefined) return this.fail("Parse Error: Header overflow");
        if (line.text === "") this.complete(this.keepAlive);
        else this.trailerBytes += line.text.length + 2;
        return line.next;
      }
      case "chunk-line": {
        const line = this.lines(chunk, at, MAX_CHUNK_LINE_BYTES, "\r\n");
        if (line === undefined) return chunk.length;
        const size = /^([0-9A-Fa-f]{1,8})[ \t]*(;.*)?$/.exec(line.text ?? "");
        if (size === null) return this.fail("Parse Error: Invalid character in chunk size");
        this.left = Number.parseInt(size[1] as string, 16);
        this.phase = this.left === 0 ? "trailers" : "chunk-data";
        this.headBytes = 0;
        return line.next;
      }
      case "chunk-data":
      case "length":
      case "close": {
        const take = this.phase === "close" ? chunk.length - at : Math.min(this.left, chunk.length - at);
        if (this.size + take > this.maxBytes) return this.fail(`a reply past ${this.maxBytes} bytes`);
        this.chunks.push(at === 0 && take === chunk.length ? chunk : chunk.subarray(at, at + take));
        this.size += take;
        this.left -= take;
        if (this.left === 0 && this.phase === "length") this.complete(this.keepAlive);
        else if (this.left === 0 && this.phase === "chunk-data") this.phase = "chunk-end";
        return at + take;
      }
      case "chunk-end": {
        // The CRLF after a chunk's data, possibly split across reads.
        const need = 2 - this.headBytes;
        const got = chunk.subarray(at, at + need).toString("latin1");
        if (got !== "\r\n".slice(this.headBytes, this.headBytes + got.length))
          return this.fail("Parse Error: Invalid chunk end");
        this.headBytes += got.length;
        if (this.headBytes === 2) {
          this.headBytes = 0;
          this.phase = "chunk-line";
        }
        return at + got.length;
      }
      default:
        return chunk.length;
    }
  }

  /**
   * Bytes up to `end` (CRLF CRLF for a head, CRLF for a line), gathered across reads: the text before it and where
   * the chunk goes on; undefined while it is not whole; text undefined past `max` bytes.
   */
  private lines(chunk: Buffer, at: number, max: number, end: string): { text?: string; next: number } | undefined {
    const before = this.pending;
    const joined = before === undefined ? chunk.subarray(at) : Buffer.concat([before, chunk.subarray(at)]);
    const found = joined.indexOf(end, Math.max(0, (before?.length ?? 0) - end.length + 1), "latin1");
    if (found === -1) {
      if (joined.length > max) return { next: chunk.length };
      this.pending = Buffer.from(joined);
      this.headBytes = joined.length;
      return undefined;
    }
    if (found > max) return { next: chunk.length };
    this.pending = undefined;
    const used = found + end.length - (before?.length ?? 0);
    return { text: joined.toString("latin1", 0, found), next: at + used };
  }

  /**
   * A whole response head: a 1xx is skipped, anything else sets how the body is framed. The last final head to each
   * distinct request is kept (a server answers the same call with the same head, bar a Date that changes once a
   * second), parsed once.
   */
  private head(text: string): void {
    this.headBytes = 0;
    const last = this.cache[this.request] as { text: string; head: Head | undefined };
    const cached = last.text === text ? last.head : undefined;
    const head = cached ?? parseHead(text);
    if (head === "interim") return;
    if (typeof head === "string") return void this.fail(head);
    if (cached === undefined) {
      last.text = text;
      last.head = head;
    }
    this.status = head.status;
    this.headers = head.headers;
    this.keepAlive = head.keepAlive;
    if (head.length === 0) return void this.complete(this.keepAlive);
    if (head.length === "chunked") this.phase = "chunk-line";
    else if (head.length === "close") this.phase = "close";
    else if (head.length > this.maxBytes) return void this.fail(`a reply past ${this.maxBytes} bytes`);
    else {
      this.left = head.length;
      this.phase = "length";
    }
  }

  private complete(reusable: boolean): void {
    this.phase = "done";
    const body = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    this.finish({ status: this.status, headers: this.headers, body }, reusable);
  }

  /** Ends the call with why and its connection; returns a position past any chunk, so reading stops. */
  private fail(why: string): number {
    this.finish(why, false);
    return Number.MAX_SAFE_INTEGER;
  }
}

/**
 * Calls over `concurrency` keep-alive connections, slot w's on connection w, opened on its first call and again
 * after the server closed it; undefined when a request cannot be written as given (the pool sends those).
 */
export function rawH1Caller(
  target: RawH1Target,
  wire: HttpWire,
  requests: readonly HttpRpcRequest[],
  concurrency: number,
  timeoutMs: number,
  maxBytes: number,
) {
  const bytes = requestBytes(target.origin, wire, requests);
  if (bytes === undefined) return undefined;
  const cache = bytes.map(() => ({ text: "", head: undefined }));
  const slots = Array.from({ length: concurrency }, () => new Slot(cache, target, timeoutMs, maxBytes));
  const sweep = setInterval(
    () => {
      const now = performance.now();
      for (const slot of slots) slot.expire(now);
    },
    Math.max(1, Math.min(50, timeoutMs)),
  );
  sweep.unref();
  return {
    call: (w: number, i: number) =>
      new Promise<BoundedReply | string>((resolve) => (slots[w] as Slot).start(i, bytes[i] as Buffer, resolve)),
    close(): void {
      clearInterval(sweep);
      for (const slot of slots) slot.drop();
    },
  };
}
