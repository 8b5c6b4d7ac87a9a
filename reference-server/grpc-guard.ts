// Protocol checks grpc-js does not make, done in front of it: :method, unknown paths and encodings answered with
// proper statuses, the compressed flag on an uncompressed call refused; and the protection grpc-js lacks: every
// stream's and session's errors handled, connections and calls in flight capped, header blocks bounded.
import type http2 from "node:http2";
import type * as grpc from "@grpc/grpc-js";
import { capConnections, createShedder, defaultLimits, type ProtectionLimits, type Shedder } from "./protection.js";

/** Encodings grpc-js decompresses; anything else is refused with UNIMPLEMENTED and this list. */
const SUPPORTED_ENCODINGS = ["identity", "deflate", "gzip"];
const ACCEPT_ENCODING = SUPPORTED_ENCODINGS.join(",");
const RESOURCE_EXHAUSTED = 8;
/** How long a shed call's client is asked to wait before it retries. */
const SHED_PUSHBACK_MS = "1000";
const UNIMPLEMENTED = 12;
const INTERNAL = 13;

/** PROTOCOL-HTTP2.md: grpc-message is percent-encoded UTF-8; only 0x20-0x7E other than % go as they are. */
export function percentEncode(message: string): string {
  let out = "";
  for (const b of Buffer.from(message, "utf8")) {
    out += b >= 0x20 && b <= 0x7e && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Whether a response can still go out on the stream: a reset or closed one takes none, and respond() would throw. */
function answerable(stream: http2.ServerHttp2Stream): boolean {
  return !stream.headersSent && !stream.destroyed && !stream.closed;
}

function trailersOnly(stream: http2.ServerHttp2Stream, code: number, message: string, extra: http2.OutgoingHttpHeaders = {}): void {
  if (!answerable(stream)) return;
  try {
    stream.respond(
      {
        ":status": 200,
        "content-type": "application/grpc",
        "grpc-status": String(code),
        "grpc-message": percentEncode(message),
        "grpc-accept-encoding": ACCEPT_ENCODING,
        ...extra,
      },
      { endStream: true },
    );
  } catch {
    // The peer reset the stream between the check and the answer: there is no one left to answer.
    return;
  }
  stream.resume(); // drain what the client still sends
}

export interface GuardOptions {
  /** Every method path the server serves. */
  paths: ReadonlySet<string>;
  /** The unary ones among them: exactly one request message, and its compressed flag is checked. */
  unaryPaths: ReadonlySet<string>;
  /**
   * Keepalive abuse (gRPC's keepalive.md): pings closer together than this with no call in flight are strikes;
   * past maxPingStrikes the connection gets GOAWAY ENHANCE_YOUR_CALM "too_many_pings". grpc-js's server enforces
   * none of it.
   */
  minPingIntervalWithoutCallsMs?: number;
  maxPingStrikes?: number;
  /** Connections, calls in flight and the memory watermark; calls past a limit get RESOURCE_EXHAUSTED. Default defaultLimits(). */
  protection?: ProtectionLimits;
  /**
   * SETTINGS_MAX_HEADER_LIST_SIZE: a stream whose header block is larger is reset (ENHANCE_YOUR_CALM) by node:http2.
   * Default 16 KiB: metadata is for keys and ids, not data.
   */
  maxHeaderListBytes?: number;
  /** Called with a short reason for each refused connection, shed call and stream or session error. */
  onEvent?: (event: string, detail: string) => void;
}

export interface GuardHandle {
  /** Destroys every session still open, whatever grpc-js tracks: the end of a forced shutdown. */
  destroySessions(): void;
  /** Calls being served now. */
  inFlight(): number;
  stop(): void;
}

const ENHANCE_YOUR_CALM = 0x0b;
export const DEFAULT_MAX_HEADER_LIST_BYTES = 16 * 1024;

/** Counts a session's calls in flight and its ping strikes, and sends it away when it abuses pings. */
function policePings(session: http2.ServerHttp2Session, options: GuardOptions, inFlight: () => number): void {
  let last = -Infinity;
  let strikes = 0;
  session.on("ping", () => {
    const now = performance.now();
    const tooSoon = now - last < (options.minPingIntervalWithoutCallsMs ?? 10_000);
    last = now;
    if (!tooSoon || inFlight() > 0) return;
    strikes++;
    if (strikes > (options.maxPingStrikes ?? 2) && !session.closed && !session.destroyed) {
      session.goaway(ENHANCE_YOUR_CALM, 0, Buffer.from("too_many_pings"));
      session.close();
    }
  });
}

type StreamListener = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => void;

const PENDING = Symbol("grpc-guard pending");

/** A stream the guard holds until it has judged it, and what it needs to hand the stream to grpc-js. */
interface Pending {
  h2: http2.Http2Server;
  handlers: StreamListener[];
  headers: http2.IncomingHttpHeaders;
  rest: unknown[];
  /** The session's calls in flight. */
  count: { n: number } | undefined;
  shedder: Shedder;
  /** Counted in flight by the shedder, so that its end is counted too. */
  admitted: boolean;
  /** The call has no grpc-encoding (or identity): a message flagged compressed is a protocol error. */
  identity: boolean;
}

type GuardedStream = http2.ServerHttp2Stream & { [PENDING]: Pending };

const readableState = (stream: http2.ServerHttp2Stream) => (stream as unknown as { _readableState: { ended: boolean } })._readableState;

function forward(stream: GuardedStream, p: Pending): void {
  if (!answerable(stream)) return;
  for (const handler of p.handlers) handler.call(p.h2, stream, p.headers, ...p.rest);
}

/** One listener for everything a stream's end undoes: a stream closes once, and once() wraps and unwraps. */
function onGuardedClose(this: GuardedStream): void {
  const p = this[PENDING];
  if (p.count) p.count.n--;
  if (p.admitted) p.shedder.done();
}

/** A unary call whose request ended with no message at all: a cardinality violation (statuscodes.md). */
function noMessage(stream: http2.ServerHttp2Stream): void {
  trailersOnly(stream, UNIMPLEMENTED, "a unary call needs exactly one request message, got none");
}

/** The first bytes of a unary call: judged, then handed back untouched with the stream to grpc-js. */
function onFirstReadable(this: GuardedStream): void {
  const chunk = this.read() as Buffer | null;
  if (chunk === null) {
    // 'readable' at the end of a stream that brought nothing: no 'end' listener is needed to see it.
    if (!readableState(this).ended) return;
    this.off("readable", onFirstReadable);
    return noMessage(this);
  }
  this.off("readable", onFirstReadable);
  if (chunk[0] === 1 && this[PENDING].identity) {
    return trailersOnly(this, INTERNAL, "a message flagged compressed on a call without grpc-encoding");
  }
  this.unshift(chunk);
  forward(this, this[PENDING]);
}

/**
 * Puts the guard in front of grpc-js's stream handler on every HTTP/2 server the grpc-js server has bound.
 * grpc-js keeps those servers in a private field; the pinned version is tested, and a version without it
 * fails here at start-up rather than serving unguarded.
 */
export function guardGrpcServer(server: grpc.Server, options: GuardOptions): GuardHandle {
  const servers = (server as unknown as { http2Servers?: Map<http2.Http2Server, unknown> }).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) {
    throw new Error("grpc-guard: this grpc-js version keeps no http2Servers; the protocol guard cannot be installed");
  }
  const event = options.onEvent ?? (() => undefined);
  const protection = options.protection ?? defaultLimits();
  const shedder = createShedder(protection);
  const maxHeaderListBytes = options.maxHeaderListBytes ?? DEFAULT_MAX_HEADER_LIST_BYTES;
  const sessions = new Set<http2.ServerHttp2Session>();
  for (const h2 of servers.keys()) {
    capConnections(h2, protection, (reason) => event("connection refused", reason));
    // Sent in every new session's SETTINGS; node:http2 resets a stream whose header block passes it.
    h2.updateSettings({ maxHeaderListSize: maxHeaderListBytes });
    // Each session's calls in flight, in a counter object of its own: a WeakMap get and set on every stream's start
    // and end cost more (seen under load with --cpu-prof).
    const calls = new WeakMap<http2.ServerHttp2Session, { n: number }>();
    h2.on("session", (session: http2.ServerHttp2Session) => {
      sessions.add(session);
      session.once("close", () => sessions.delete(session));
      // A session error (a protocol violation, nghttp2 refusing a flood of resets) ends that session only.
      session.on("error", (err: Error) => event("session error", errorName(err)));
      const count = { n: 0 };
      calls.set(session, count);
      policePings(session, options, () => count.n);
    });
    const handlers = h2.listeners("stream") as StreamListener[];
    h2.removeAllListeners("stream");
    const onStreamError = (err: Error) => event("stream error", errorName(err));
    h2.on("stream", (s: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => {
      const stream = s as GuardedStream;
      // Until grpc-js takes the stream, nobody else listens: a reset (any code) must end this stream only.
      stream.on("error", onStreamError);
      const session = stream.session as http2.ServerHttp2Session | undefined;
      const count = session && calls.get(session);
      if (count) count.n++;
      // What the shared listeners below need, on the stream itself: closures made per stream cost more.
      const pending: Pending = { h2, handlers, headers, rest, count, shedder, admitted: false, identity: true };
      stream[PENDING] = pending;
      stream.on("close", onGuardedClose);
      const contentType = headers["content-type"];
      // Not gRPC at all: grpc-js answers HTTP 415 itself.
      if (typeof contentType !== "string" || !contentType.startsWith("application/grpc")) return forward(stream, pending);
      if (headers[":method"] !== "POST") {
        if (!answerable(stream)) return;
        stream.respond({ ":status": 405, allow: "POST" }, { endStream: true });
        stream.resume();
        return;
      }
      // node:http2 enforces the advertised limit only once the client has acknowledged it: a client that sends
      // its streams before that gets nghttp2's 64 KiB. Count what arrived (as RFC 9113 §6.5.2 does) and refuse it.
      const headerBytes = headerListSize(rest[1], maxHeaderListBytes);
      if (headerBytes > maxHeaderListBytes) {
        event("call refused", `header list of ${headerBytes} bytes`);
        return trailersOnly(stream, RESOURCE_EXHAUSTED, `the request's header list of ${headerBytes} bytes is past the limit of ${maxHeaderListBytes}`);
      }
      const refused = shedder.admit();
      if (refused !== undefined) {
        event("call shed", refused);
        // gRFC A6's pushback: a client that retries waits as long as HTTP's Retry-After: 1 asks on the other port.
        return trailersOnly(stream, RESOURCE_EXHAUSTED, `${refused}; retry later`, { "grpc-retry-pushback-ms": SHED_PUSHBACK_MS });
      }
      pending.admitted = true;
      const path = String(headers[":path"] ?? "");
      if (!options.paths.has(path)) return trailersOnly(stream, UNIMPLEMENTED, `unknown method ${path}`);
      const encoding = String(headers["grpc-encoding"] ?? "identity");
      if (!SUPPORTED_ENCODINGS.includes(encoding)) {
        return trailersOnly(stream, UNIMPLEMENTED, `unsupported grpc-encoding ${encoding}`);
      }
      if (!options.unaryPaths.has(path)) return forward(stream, pending);
      pending.identity = encoding === "identity";
      // Headers with END_STREAM: node:http2 ended the stream before handing it over, and no 'readable' will come.
      if (readableState(stream).ended && stream.readableLength === 0) return noMessage(stream);
      // Read the first bytes before grpc-js does, judge them, and hand them back untouched.
      stream.on("readable", onFirstReadable);
    });
  }
  return {
    destroySessions() {
      for (const session of sessions) session.destroy();
      sessions.clear();
    },
    inFlight: () => shedder.inFlight(),
    stop: () => shedder.stop(),
  };
}

/**
 * RFC 9113 §6.5.2: the uncompressed size of a header list, each field's name and value plus 32; when it is surely
 * within `limit`, a bound on it that is also within the limit.
 */
function headerListSize(rawHeaders: unknown, limit: number): number {
  if (!Array.isArray(rawHeaders)) return 0;
  // A string of n UTF-16 units is at most 3n bytes of UTF-8: when even that bound is within the limit, the exact
  // count (a Buffer.byteLength per name and value, on every call) is not needed.
  let bound = 0;
  for (const field of rawHeaders) bound += (typeof field === "string" ? 3 * field.length : 0) + 16;
  if (bound <= limit) return bound;
  let size = 0;
  for (const field of rawHeaders) size += (typeof field === "string" ? Buffer.byteLength(field) : 0) + 16;
  return size;
}

function errorName(err: Error): string {
  return (err as NodeJS.ErrnoException).code ?? err.name;
}
