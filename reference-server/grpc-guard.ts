// Protocol checks grpc-js does not make, done in front of it: :method, unknown paths and encodings answered with
// proper statuses, the compressed flag on an uncompressed call refused; and the protection grpc-js lacks: every
// stream's and session's errors handled, connections and calls in flight capped, header blocks bounded, the replies
// a connection leaves unread (flow-control windows held shut) and the requests it leaves half-sent counted, bounded
// and reset, and a connection whose streams all stalled sent away. It also keeps grpc-js's idle limit
// (grpc.max_connection_idle_ms) in its sweep, instead of grpc-js's bookkeeping on every stream (takeOverIdleLimit).
import type http2 from "node:http2";
import { Readable } from "node:stream";
import type * as grpc from "@grpc/grpc-js";
import { createOwedLedger, type OwedAccount, type OwedLedger, type OwedLimits } from "./owed.js";
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
    out +=
      b >= 0x20 && b <= 0x7e && b !== 0x25
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Whether a response can still go out on the stream: a reset or closed one takes none, and respond() would throw. */
function answerable(stream: http2.ServerHttp2Stream): boolean {
  return !stream.headersSent && !stream.destroyed && !stream.closed;
}

function trailersOnly(
  stream: http2.ServerHttp2Stream,
  code: number,
  message: string,
  extra: http2.OutgoingHttpHeaders = {},
): void {
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
   * The ones whose request is a stream of messages (client-streaming and bidi: reflection), each handed on when it is
   * whole, so each counts while it comes. On every other path grpc-js keeps the request until the client ends it, so
   * it counts until then.
   */
  streamingRequestPaths?: ReadonlySet<string>;
  /**
   * Keepalive abuse (gRPC's keepalive.md): pings closer together than this with no call in flight are strikes;
   * past maxPingStrikes the connection gets GOAWAY ENHANCE_YOUR_CALM "too_many_pings". grpc-js's server enforces
   * none of it.
   */
  minPingIntervalWithoutCallsMs?: number;
  maxPingStrikes?: number;
  /**
   * Connections, calls in flight and the memory watermark; calls past a limit get RESOURCE_EXHAUSTED. Default
   * defaultLimits().
   */
  protection?: ProtectionLimits;
  /**
   * SETTINGS_MAX_HEADER_LIST_SIZE: a stream whose header block is larger is reset (ENHANCE_YOUR_CALM) by node:http2.
   * Default 16 KiB: metadata is for keys and ids, not data.
   */
  maxHeaderListBytes?: number;
  /**
   * What the server owes clients that do not read (owed.ts): each session is one account. A call on a session the
   * ledger refuses is shed as one past a limit, and a reply to a call admitted before is refused by a reset; a stream
   * whose unsent reply makes no progress for the ledger's stallMs is reset. The bytes of requests admitted and not yet
   * whole count too (grpc-js keeps them until they are): a request that takes its session past the ledger's limits
   * is refused by a reset, and one that makes no progress for stallMs, or is not whole within arrivalMs, is reset.
   * Default a ledger of its own with the default limits.
   */
  ledger?: OwedLedger;
  /**
   * Request bytes a client may send on a stream, and on a connection, before the server takes them: the HTTP/2
   * receive windows (SETTINGS_INITIAL_WINDOW_SIZE, and the session's own window). Default HTTP/2's 65,535 (see
   * receiveWindowFor).
   */
  receiveWindowBytes?: number;
  /**
   * Called with a short reason for each refused connection, shed call, reset stream, connection closed or sent away,
   * and stream or session error.
   */
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
/** How long a session sent away for stalling may take to close before it is destroyed. */
const GOAWAY_GRACE_MS = 1000;
export const DEFAULT_MAX_HEADER_LIST_BYTES = 16 * 1024;
/** HTTP/2's initial window (RFC 9113 §6.9.2), and the largest a window may be (§6.9.1). */
const HTTP2_DEFAULT_WINDOW = 65_535;
const HTTP2_MAX_WINDOW = 2 ** 31 - 1;

/**
 * The receive window for a server whose largest request message is `maxReceiveMessageBytes`: room for that message
 * and its 5-byte prefix, so that any request the server would accept arrives in one round trip (with HTTP/2's
 * 64 KiB, a 2 MiB request took 32 round trips through a 50 ms link; grpc-go grows its window by BDP estimation to
 * the same end). It bounds nothing new: grpc-js reads every admitted call's message as it comes, up to the receive
 * limit, whatever the window, so a connection's window only lets the bytes it would read anyway come sooner. Bytes
 * the server has not yet read (a stream before the guard judges it) are at most one window per connection.
 */
export function receiveWindowFor(maxReceiveMessageBytes: number): number {
  return windowWithinBounds(maxReceiveMessageBytes + 5);
}

/** A receive window HTTP/2 allows, and never below its default. */
const windowWithinBounds = (bytes: number): number => Math.min(HTTP2_MAX_WINDOW, Math.max(HTTP2_DEFAULT_WINDOW, bytes));

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

/** grpc-js's value of sessionIdleTimeout for "no idle limit" (its MAX_CONNECTION_IDLE_MS). */
const GRPC_JS_NO_IDLE_LIMIT = ~(1 << 31);
/** A book's idleSince until the sweep stamps it. */
const IDLE_UNSTAMPED = -1;

/** What the guard keeps for one session: its calls in flight, and what its admitted streams owe. */
interface SessionBook {
  session: http2.ServerHttp2Session;
  /** Calls in flight. */
  n: number;
  /**
   * With no call in flight: the sweep's clock when it first saw the session so, or IDLE_UNSTAMPED until the next sweep
   * does (a call's end marks it so, with no clock read). Closing after idleMs from that stamp never closes early.
   */
  idleSince: number;
  /** Admitted streams still open: the ones whose replies can be left unread. */
  streams: Set<GuardedStream>;
  /** What they owe, as last measured: the sum of their Pending.owed. */
  account: OwedAccount;
  /** The guard's ledger and what measuring needs, shared by every book. */
  owing: Owing;
}

interface Owing {
  ledger: OwedLedger;
  event: (what: string, detail: string) => void;
  /**
   * performance.now() at the last sweep: when a call began and when its request last came, to within a sweep (at most
   * 100 ms, against a stall bound of seconds), with no clock read per call.
   */
  now: number;
}

/** A stream the guard holds until it has judged it, and what it needs to hand the stream to grpc-js. */
interface Pending {
  h2: http2.Http2Server;
  handlers: StreamListener[];
  headers: http2.IncomingHttpHeaders;
  rest: unknown[];
  book: SessionBook | undefined;
  shedder: Shedder;
  /** Counted in flight by the shedder, so that its end is counted too. */
  admitted: boolean;
  /** The call has no grpc-encoding (or identity): a message flagged compressed is a protocol error. */
  identity: boolean;
  /** Bytes held for the stream's unread reply when last measured (see measure). */
  owed: number;
  /** When it last made progress (sent some of what it owes) or began to owe: performance.now(). */
  since: number;
  /** Bytes of the write under way that have left already (see writePieces). */
  taken: number;
  /** A unary call's request message, by its length prefix: grpc-js keeps it while the call lasts. */
  requestBytes: number;
  /** The first bytes of a unary call, fewer than the five of a message's prefix, until the rest come. */
  head: Buffer | undefined;
  /** Request bytes received and kept by grpc-js until they are whole (see countRequest), counted in the account. */
  held: number;
  /** When request bytes last came, or the call began: the sweep's clock (Owing.now). */
  heard: number;
  /** When the request began (a streamed request's: its message under way), which must arrive whole within arrivalMs. */
  began: number;
  /** Its request is a stream of messages, each counted while it comes: the path is in streamingRequestPaths. */
  streamed: boolean;
  /** Of a streamed request: bytes of the message under way still to come, and how much of its prefix has come. */
  left: number;
  prefixAt: number;
  announced: number;
}

type GuardedStream = http2.ServerHttp2Stream & { [PENDING]: Pending };

const readableState = (stream: http2.ServerHttp2Stream) =>
  (stream as unknown as { _readableState: { ended: boolean } })._readableState;

function forward(stream: GuardedStream, p: Pending): void {
  if (!answerable(stream)) return;
  for (const handler of p.handlers) handler.call(p.h2, stream, p.headers, ...p.rest);
}

/** One listener for everything a stream's end undoes: a stream closes once, and once() wraps and unwraps. */
function onGuardedClose(this: GuardedStream): void {
  const p = this[PENDING];
  if (p.book) {
    if (--p.book.n === 0) p.book.idleSince = IDLE_UNSTAMPED;
    if (p.admitted) {
      p.book.streams.delete(this);
      p.book.account.paid(p.owed + p.held);
      p.owed = 0;
      p.held = 0;
    }
  }
  if (p.admitted) p.shedder.done();
}

/**
 * grpc-js (1.14) keeps a unary call's request twice until the call ends: the chunks its decoder received and the
 * message it made of them. While the reply is unread, that is memory the client holds too.
 */
const REQUEST_COPIES_KEPT = 2;

type WriteCallback = (err?: Error | null) => void;
type WriteMethod = (this: http2.ServerHttp2Stream, chunk: unknown, encoding: BufferEncoding, cb: WriteCallback) => void;
/** node:http2's own _write, found on the first stream admitted. */
let nodeWrite: WriteMethod | undefined;
/** Writes below this go as they are, and queue without a fresh measure while their session owes nothing. */
const PIECE_BYTES = 64 * 1024;

/**
 * Every reply an admitted stream writes, before node:http2 queues it. Calls are admitted when their headers come,
 * before any reply exists, so a client that opens a hundred streams and only then sends their requests would be
 * given them all: a large reply, or any reply on a session that owes something, is measured first and judged as a
 * new call would be on the session as it stood without it, and a refused one is not queued but its stream reset.
 * So a session holds at most its share and one reply, as with calls that come one after another.
 */
function guardedWrite(this: GuardedStream, chunk: unknown, encoding: BufferEncoding, cb: WriteCallback): void {
  const p = this[PENDING];
  if (!Buffer.isBuffer(chunk)) return (nodeWrite as WriteMethod).call(this, chunk, encoding, cb);
  const book = p.book;
  if (
    book !== undefined &&
    (book.account.owed() > 0 || chunk.length + REQUEST_COPIES_KEPT * p.requestBytes >= PIECE_BYTES)
  ) {
    const prior = p.owed;
    measure(book, performance.now());
    const refused = refusedWithout(book, p.owed - prior);
    if (refused !== undefined) book.owing.event("reply refused", refused);
    if (refused !== undefined || this.closed || this.destroyed) {
      // Reset (or reset by measure, as stalled): grpc-js, told the write is done, finds the stream closed and sends
      // nothing more; the reply is never queued.
      this.close(ENHANCE_YOUR_CALM);
      return cb();
    }
  }
  if (chunk.length <= PIECE_BYTES) return (nodeWrite as WriteMethod).call(this, chunk, encoding, cb);
  writePieces(this, chunk, encoding, cb);
}

/** What the ledger says of the session without `bytes` it has just counted: the reply being judged. */
function refusedWithout(book: SessionBook, bytes: number): string | undefined {
  book.account.paid(bytes);
  const refused = book.owing.ledger.refuse(book.account);
  book.account.owe(bytes);
  return refused;
}

/**
 * A large write handed to node:http2 in pieces. node:http2 completes a write only once all of it has left in DATA
 * frames, so a 1 MiB reply trickling out under a slow reader's windows would look stalled until its last byte went;
 * in pieces, each completes as it leaves, and `taken` shows the progress. All pieces are queued at once (node sends
 * them in order), so nothing waits on a round trip through JavaScript; only the last one ends the write.
 * grpc-js asks for trailers on every stream (waitForTrailers), so node never ends the stream on a piece.
 */
function writePieces(stream: GuardedStream, chunk: Buffer, encoding: BufferEncoding, cb: WriteCallback): void {
  const p = stream[PENDING];
  let left = Math.ceil(chunk.length / PIECE_BYTES);
  let failed = false;
  const onPiece: WriteCallback = (err) => {
    if (failed) return;
    if (err) {
      failed = true;
      p.taken = 0;
      return cb(err);
    }
    if (--left > 0) {
      p.taken += PIECE_BYTES;
      return;
    }
    p.taken = 0;
    cb();
  };
  for (let at = 0; at < chunk.length; at += PIECE_BYTES)
    (nodeWrite as WriteMethod).call(stream, chunk.subarray(at, at + PIECE_BYTES), encoding, onPiece);
}

/** Sends the stream's replies through guardedWrite. */
function guardWrites(stream: GuardedStream): void {
  const own = stream as unknown as { _write: WriteMethod };
  nodeWrite ??= own._write;
  own._write = guardedWrite as WriteMethod;
}

/**
 * What a session's streams hold now, each: for its unread reply, the reply bytes unsent (its writable buffer, which
 * node:http2 keeps until the peer's window lets them out, less what of the write under way has left) and, while any
 * are, the request grpc-js keeps with the call; and the request bytes it holds until they are whole (held). A stream
 * that made no progress for stallMs, sending none of the reply it holds or receiving none of the request it waits
 * for, is reset ENHANCE_YOUR_CALM, which gRPC clients read as RESOURCE_EXHAUSTED, the bandwidth the client would not
 * use (PROTOCOL-HTTP2.md); its memory is freed with it. A session left with nothing but stalled streams is sent away
 * (see sendAway). Keeps the session's account equal to the sum.
 */
function measure(book: SessionBook, now: number): void {
  const stallMs = book.owing.ledger.limits.stallMs;
  let owed = 0;
  let stalled = 0;
  let live = 0;
  for (const stream of book.streams) {
    const p = stream[PENDING];
    if (stream.destroyed || stream.closed) {
      p.owed = 0;
      p.held = 0;
      continue;
    }
    const why = replyStall(stream, p, now, stallMs) ?? requestStall(stream, p, now, book.owing.ledger.limits);
    if (why !== undefined) {
      book.owing.event("stream reset", why);
      p.owed = 0;
      p.held = 0;
      stream.close(ENHANCE_YOUR_CALM);
      stalled++;
      continue;
    }
    live++;
    owed += p.owed + p.held;
  }
  const change = owed - book.account.owed();
  if (change > 0) book.account.owe(change);
  else book.account.paid(-change);
  if (stalled > 0 && live === 0) sendAway(book, stalled);
}

/**
 * Measures what the stream holds for its unread reply (p.owed); why it stalled, if its reply made no progress for
 * stallMs.
 */
function replyStall(stream: GuardedStream, p: Pending, now: number, stallMs: number): string | undefined {
  const unsent = stream.writableLength - p.taken;
  if (unsent <= 0) {
    p.owed = 0;
    return undefined;
  }
  const o = unsent + REQUEST_COPIES_KEPT * p.requestBytes;
  if (p.owed === 0 || o < p.owed) p.since = now;
  p.owed = o;
  return now - p.since >= stallMs
    ? `${unsent} bytes of its reply unread for ${Math.round(now - p.since)} ms`
    : undefined;
}

/**
 * Why the stream stalled, if it waits for request bytes and none came for stallMs, or what it waits for has not come
 * whole within arrivalMs of its start (a client trickling a byte at a time): a message under way on a streamed
 * request, or on any other call the request's end (a unary call's request held whole but never ended holds the call
 * as one half-sent does). A stream the guard answered itself and whose client never ends it is reset likewise.
 */
function requestStall(
  stream: GuardedStream,
  p: Pending,
  now: number,
  limits: Readonly<OwedLimits>,
): string | undefined {
  const waiting = p.streamed ? p.left > 0 || p.prefixAt > 0 : !readableState(stream).ended;
  if (!waiting) return undefined;
  if (now - p.heard >= limits.stallMs)
    return `its request incomplete (${p.held} bytes held), none of it for ${Math.round(now - p.heard)} ms`;
  if (now - p.began >= limits.arrivalMs)
    return `its request incomplete (${p.held} bytes held) ${Math.round(now - p.began)} ms after it began`;
  return undefined;
}

/**
 * GOAWAY ENHANCE_YOUR_CALM to a session whose every stream stalled, and the connection closed: a client that sends
 * nothing and reads nothing holds only what the server keeps for it. close() lets the (already reset) streams end;
 * a peer that never reads could keep even that from finishing, so the session is destroyed after a grace.
 */
function sendAway(book: SessionBook, stalled: number): void {
  const session = book.session;
  if (session.closed || session.destroyed) return;
  book.owing.event("connection sent away", `its ${stalled} streams left all stalled`);
  // The last stream it took: a client may retry on another connection only the streams after it, never processed.
  let last = 0;
  for (const stream of book.streams) last = Math.max(last, stream.id ?? 0);
  session.goaway(ENHANCE_YOUR_CALM, last, Buffer.from("stalled"));
  session.close();
  setTimeout(() => session.destroy(), GOAWAY_GRACE_MS).unref();
}

/**
 * How often every session's debt is measured and its stalled streams reset: a quarter of the stall bound, at most 100
 * ms.
 */
function sweepInterval(stallMs: number): number {
  return Math.max(10, Math.min(100, Math.floor(stallMs / 4)));
}

/** A unary call whose request ended with no message at all: a cardinality violation (statuscodes.md). */
function noMessage(stream: http2.ServerHttp2Stream): void {
  trailersOnly(stream, UNIMPLEMENTED, "a unary call needs exactly one request message, got none");
}

type PushMethod = (this: GuardedStream, chunk: Buffer | null) => boolean;

/**
 * The first bytes of a unary call, taken as node:http2 pushes them and before anyone reads them: judged, then pushed
 * on untouched once grpc-js has the stream. No read and no unshift: reading them first and handing them back cost a
 * 'readable' tick, a read, an unshift and their garbage on every call (bench/reference-cost.js: about 1.2 KB more
 * allocated per call). The guard's push is the stream's own property while it judges, node's after.
 */
function firstPush(this: GuardedStream, chunk: Buffer | null): boolean {
  const p = this[PENDING];
  if (chunk === null) {
    if (p.head === undefined) {
      // The stream ended with no byte of a message: refused before grpc-js sees it.
      restorePush(this);
      noMessage(this);
      return this.push(null);
    }
    return judgeFirst(this, p, p.head, null);
  }
  const bytes = p.head === undefined ? chunk : Buffer.concat([p.head, chunk]);
  // The message's length is in its first five bytes: a client that sends them apart does not hide it. They are kept
  // here until the rest come or the stream ends.
  if (bytes.length < 5) {
    p.head = bytes;
    return true;
  }
  return judgeFirst(this, p, bytes, undefined);
}

/**
 * Judges a unary call's first bytes (`end` null when the stream ended with them), then pushes them on. A request
 * that is not whole in them (past one DATA frame, 16 KiB) is counted from here until it ends (countingPush); one that
 * is, the common call, costs nothing more.
 */
function judgeFirst(stream: GuardedStream, p: Pending, bytes: Buffer, end: null | undefined): boolean {
  p.head = undefined;
  restorePush(stream);
  if (bytes[0] === 1 && p.identity) {
    trailersOnly(stream, INTERNAL, "a message flagged compressed on a call without grpc-encoding");
  } else {
    if (bytes.length >= 5) p.requestBytes = bytes.readUInt32BE(1);
    forward(stream, p);
    if (end !== null && bytes.length < 5 + p.requestBytes && !stream.destroyed) {
      countPushes(stream);
      return stream.push(bytes);
    }
  }
  if (stream.destroyed) return false;
  const more = stream.push(bytes);
  return end === null ? stream.push(null) : more;
}

/**
 * Every request chunk node:http2 pushes, counted against the session before anyone reads it (countRequest); a chunk
 * the session may not hold is not pushed, its stream reset. A unary call's counting ends with its request, so node's
 * own push is put back then; a streamed request is counted while the stream lasts (streamed calls are few: reflection).
 */
function countingPush(this: GuardedStream, chunk: Buffer | null): boolean {
  const p = this[PENDING];
  if (chunk === null) {
    // The request ended: grpc-js has it whole, and the reply, when written, counts it (REQUEST_COPIES_KEPT).
    if (!p.streamed) {
      settleHeld(p, 0);
      restorePush(this);
    }
    return Readable.prototype.push.call(this, null);
  }
  if (!countRequest(this, p, chunk)) return false;
  return Readable.prototype.push.call(this, chunk);
}

function countPushes(stream: GuardedStream): void {
  (stream as unknown as { push: PushMethod }).push = countingPush;
}

/**
 * Counts a request chunk: a call that is not streamed holds all of its request until it ends; a streamed one, the
 * message under way. The session is judged as a new call would be, on the session as it stands without this stream's
 * request, so it holds at most its share and one request, as with replies (guardedWrite); and past the process's
 * budget no request grows, whatever its session owes: else every connection could hold a request of up to the
 * receive limit (1,000 of 4 MiB) while the budget reads full. A request whole in its first DATA frame, as nearly
 * every call's is, is not counted, so small calls are served as before. False when the session may not hold this
 * one, whose stream is then reset.
 */
function countRequest(stream: GuardedStream, p: Pending, chunk: Buffer): boolean {
  const book = p.book;
  if (book === undefined) return true;
  p.heard = book.owing.now;
  const before = p.held;
  settleHeld(p, p.streamed ? messageUnderWay(p, chunk) : before + chunk.length);
  if (p.held <= before) return true;
  const refused = refusedWithout(book, p.held) ?? pastBudget(book.owing.ledger);
  if (refused === undefined) return true;
  book.owing.event("request refused", refused);
  settleHeld(p, 0);
  stream.close(ENHANCE_YOUR_CALM);
  return false;
}

function pastBudget(ledger: OwedLedger): string | undefined {
  const total = ledger.total();
  return total > ledger.limits.totalBytes
    ? `the server holds ${total} bytes for its clients, past its budget`
    : undefined;
}

/** Sets what the stream's request holds, and the session's account with it. */
function settleHeld(p: Pending, held: number): void {
  const account = p.book?.account;
  if (account !== undefined) {
    if (held > p.held) account.owe(held - p.held);
    else account.paid(p.held - held);
  }
  p.held = held;
}

/**
 * The bytes of a streamed request's message under way once `chunk` has come: its 5-byte prefix (the length in bytes
 * 1-4, perhaps split across chunks) and what of its body came; 0 between messages, as grpc-js hands each on whole.
 */
function messageUnderWay(p: Pending, chunk: Buffer): number {
  let held = p.held;
  for (let at = 0; at < chunk.length; ) {
    if (p.left > 0) {
      const n = Math.min(p.left, chunk.length - at);
      p.left -= n;
      at += n;
      held = p.left === 0 ? 0 : held + n;
      continue;
    }
    const b = chunk[at++] as number;
    // A new message begins: it has arrivalMs to come whole.
    if (p.prefixAt === 0) p.began = p.heard;
    held++;
    if (p.prefixAt > 0) p.announced = p.announced * 256 + b;
    if (++p.prefixAt < 5) continue;
    p.left = p.announced;
    p.prefixAt = 0;
    p.announced = 0;
    if (p.left === 0) held = 0;
  }
  return held;
}

/**
 * node:stream's own push, put back on the stream: assigned, not deleted (a delete makes the stream a slow dictionary).
 */
function restorePush(stream: GuardedStream): void {
  (stream as unknown as { push: PushMethod }).push = Readable.prototype.push as PushMethod;
}

/** What every session and stream of one guarded grpc-js server shares: made once, read by the handlers below. */
interface Guard {
  options: GuardOptions;
  event: (kind: string, detail: string) => void;
  protection: ProtectionLimits;
  shedder: Shedder;
  ledger: OwedLedger;
  owing: Owing;
  maxHeaderListBytes: number;
  receiveWindow: number;
  streamingRequestPaths: ReadonlySet<string>;
  /**
   * Every session's book: its calls in flight in a counter object of its own (a WeakMap get and set on every stream's
   * start and end cost more, seen under load with --cpu-prof), its streams and its account.
   */
  books: Map<http2.ServerHttp2Session, SessionBook>;
  onStreamError: (err: Error) => void;
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
  const guard = createGuard(options);
  const { books, owing, ledger, shedder } = guard;
  const idleMs = takeOverIdleLimit(server);
  // One sweep for all sessions: what each owes, which stream stalled, which session is idle. Nothing per call.
  const sweep = setInterval(() => {
    const now = performance.now();
    owing.now = now;
    for (const book of books.values()) {
      if (book.streams.size > 0) measure(book, now);
      if (book.n === 0 && idleMs !== undefined) closeIfIdle(book, now, idleMs);
    }
  }, sweepInterval(ledger.limits.stallMs));
  sweep.unref();
  for (const h2 of servers.keys()) guardHttp2Server(guard, h2);
  return {
    destroySessions() {
      for (const session of [...books.keys()]) session.destroy();
      books.clear();
    },
    inFlight: () => shedder.inFlight(),
    stop: () => {
      clearInterval(sweep);
      shedder.stop();
    },
  };
}

/**
 * grpc.max_connection_idle_ms, taken from grpc-js to be kept by the guard's sweep: grpc-js (1.14) keeps it with a Map
 * lookup, a once('close') listener (a wrapper and its state) on every stream, and a lookup, a Date.now() and a timer
 * refresh at every stream's end (--cpu-prof under the Go generator: onStreamOpened, onStreamClose, removeListener),
 * while the guard counts each session's calls anyway. The limit in ms, or undefined when there is none. grpc-js
 * keeps it in a private field read when a session opens (before any has); a version without it fails here at start-up.
 */
function takeOverIdleLimit(server: grpc.Server): number | undefined {
  const own = server as unknown as { sessionIdleTimeout?: unknown };
  if (typeof own.sessionIdleTimeout !== "number") {
    throw new Error(
      "grpc-guard: this grpc-js version keeps no sessionIdleTimeout; the idle limit cannot be taken over",
    );
  }
  const idleMs = own.sessionIdleTimeout;
  if (idleMs >= GRPC_JS_NO_IDLE_LIMIT) return undefined;
  own.sessionIdleTimeout = GRPC_JS_NO_IDLE_LIMIT;
  return idleMs;
}

/** A session with no call in flight for idleMs is closed, as grpc-js would: GOAWAY, then the connection ends. */
function closeIfIdle(book: SessionBook, now: number, idleMs: number): void {
  if (book.idleSince === IDLE_UNSTAMPED) {
    book.idleSince = now;
    return;
  }
  const session = book.session;
  if (now - book.idleSince < idleMs || session.closed || session.destroyed) return;
  book.owing.event("connection closed", `idle for ${Math.round(now - book.idleSince)} ms`);
  session.close();
}

function createGuard(options: GuardOptions): Guard {
  const event = options.onEvent ?? (() => undefined);
  const ledger = options.ledger ?? createOwedLedger();
  const protection = options.protection ?? defaultLimits();
  return {
    options,
    event,
    protection,
    shedder: createShedder(protection),
    ledger,
    owing: { ledger, event, now: performance.now() },
    maxHeaderListBytes: options.maxHeaderListBytes ?? DEFAULT_MAX_HEADER_LIST_BYTES,
    receiveWindow: windowWithinBounds(options.receiveWindowBytes ?? HTTP2_DEFAULT_WINDOW),
    streamingRequestPaths: options.streamingRequestPaths ?? new Set<string>(),
    books: new Map(),
    onStreamError: (err: Error) => event("stream error", errorName(err)),
  };
}

/** One HTTP/2 server of grpc-js's: its connections capped, its sessions booked, its streams judged before grpc-js. */
function guardHttp2Server(guard: Guard, h2: http2.Http2Server): void {
  capConnections(h2, guard.protection, (reason) => guard.event("connection refused", reason));
  // Sent in every new session's SETTINGS; node:http2 resets a stream whose header block passes it.
  h2.updateSettings({ maxHeaderListSize: guard.maxHeaderListBytes, initialWindowSize: guard.receiveWindow });
  h2.on("session", (session: http2.ServerHttp2Session) => openBook(guard, session));
  const handlers = h2.listeners("stream") as StreamListener[];
  h2.removeAllListeners("stream");
  h2.on("stream", (s: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => {
    onStream(guard, h2, handlers, s as GuardedStream, headers, rest);
  });
}

function openBook(guard: Guard, session: http2.ServerHttp2Session): void {
  const book: SessionBook = {
    session,
    n: 0,
    idleSince: IDLE_UNSTAMPED,
    streams: new Set(),
    account: guard.ledger.open(),
    owing: guard.owing,
  };
  guard.books.set(session, book);
  session.once("close", () => {
    guard.books.delete(session);
    book.account.close();
  });
  // A session error (a protocol violation, nghttp2 refusing a flood of resets) ends that session only.
  session.on("error", (err: Error) => guard.event("session error", errorName(err)));
  policePings(session, guard.options, () => book.n);
  // The stream windows come in SETTINGS; the connection's own window is raised by a WINDOW_UPDATE on stream 0.
  if (guard.receiveWindow > HTTP2_DEFAULT_WINDOW) session.setLocalWindowSize(guard.receiveWindow);
}

function onStream(
  guard: Guard,
  h2: http2.Http2Server,
  handlers: StreamListener[],
  stream: GuardedStream,
  headers: http2.IncomingHttpHeaders,
  rest: unknown[],
): void {
  // Until grpc-js takes the stream, nobody else listens: a reset (any code) must end this stream only.
  stream.on("error", guard.onStreamError);
  const session = stream.session as http2.ServerHttp2Session | undefined;
  const book = session && guard.books.get(session);
  if (book) book.n++;
  const now = guard.owing.now;
  // What the shared listeners below need, on the stream itself: closures made per stream cost more.
  const pending: Pending = {
    h2,
    handlers,
    headers,
    rest,
    book,
    shedder: guard.shedder,
    admitted: false,
    identity: true,
    owed: 0,
    since: 0,
    taken: 0,
    requestBytes: 0,
    head: undefined,
    held: 0,
    heard: now,
    began: now,
    streamed: false,
    left: 0,
    prefixAt: 0,
    announced: 0,
  };
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
  if (refusedAtAdmission(guard, stream, book, rest)) return;
  pending.admitted = true;
  if (book) book.streams.add(stream);
  guardWrites(stream);
  routeAdmitted(guard, stream, pending, headers);
}

/** The header-list bound and the shedding, before anything is admitted; true when the stream was answered. */
function refusedAtAdmission(
  guard: Guard,
  stream: GuardedStream,
  book: SessionBook | undefined,
  rest: unknown[],
): boolean {
  const { maxHeaderListBytes } = guard;
  // node:http2 enforces the advertised limit only once the client has acknowledged it: a client that sends
  // its streams before that gets nghttp2's 64 KiB. Count what arrived (as RFC 9113 §6.5.2 does) and refuse it.
  const headerBytes = headerListSize(rest[1], maxHeaderListBytes);
  if (headerBytes > maxHeaderListBytes) {
    guard.event("call refused", `header list of ${headerBytes} bytes`);
    trailersOnly(
      stream,
      RESOURCE_EXHAUSTED,
      `the request's header list of ${headerBytes} bytes is past the limit of ${maxHeaderListBytes}`,
    );
    return true;
  }
  // What the session owes counts before anything new is admitted on it: a client that leaves its replies unread
  // gets no more until it reads, and one on another connection, owing nothing, is served.
  const refused = guard.ledger.refuse(book?.account) ?? guard.shedder.admit();
  if (refused === undefined) return false;
  guard.event("call shed", refused);
  // gRFC A6's pushback: a client that retries waits as long as HTTP's Retry-After: 1 asks on the other port.
  trailersOnly(stream, RESOURCE_EXHAUSTED, `${refused}; retry later`, { "grpc-retry-pushback-ms": SHED_PUSHBACK_MS });
  return true;
}

/** An admitted call: unknown methods and encodings answered here, streamed calls counted, unary ones read first. */
function routeAdmitted(
  guard: Guard,
  stream: GuardedStream,
  pending: Pending,
  headers: http2.IncomingHttpHeaders,
): void {
  const path = String(headers[":path"] ?? "");
  if (!guard.options.paths.has(path)) return trailersOnly(stream, UNIMPLEMENTED, `unknown method ${path}`);
  const encoding = String(headers["grpc-encoding"] ?? "identity");
  if (!SUPPORTED_ENCODINGS.includes(encoding)) {
    return trailersOnly(stream, UNIMPLEMENTED, `unsupported grpc-encoding ${encoding}`);
  }
  if (!guard.options.unaryPaths.has(path)) {
    // Streamed calls are few (health's Watch, reflection): each chunk of theirs is counted, at no cost to Hello.
    pending.streamed = guard.streamingRequestPaths.has(path);
    forward(stream, pending);
    if (!stream.destroyed) countPushes(stream);
    return;
  }
  pending.identity = encoding === "identity";
  // Headers with END_STREAM: node:http2 ended the stream before handing it over, and nothing more will be pushed.
  if (readableState(stream).ended && stream.readableLength === 0) return noMessage(stream);
  // Take the first bytes as they come, before grpc-js (or anyone) reads them; judge them, and pass them on.
  (stream as unknown as { push: PushMethod }).push = firstPush;
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
