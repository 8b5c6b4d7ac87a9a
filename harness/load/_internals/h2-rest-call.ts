// The replies at rest of a gRPC load run: Hello calls one at a time over node:http2, a client apart from the raw one
// that drives the run (harness/wire/raw-h2-client.ts), so that a reply under load is compared with one another
// HTTP/2 client decoded.
import http2 from "node:http2";
import type { ParsedAddress } from "../../targets/address.js";
import { grpcMessage, HELLO_PATH, Status } from "../../protocols/rpc.js";
import { keptHttp2Session, type KeptHttp2Session } from "../../wire/http2.js";
import { grpcResult as result, type CallResult } from "./call-result.js";

/**
 * One node:http2 connection (harness/wire/http2.ts) for Hello calls made one at a time, replaced for the next call
 * once the server sent GOAWAY or it closed.
 */
export function openConnection(address: ParsedAddress): KeptHttp2Session {
  // As many streams as the server allows; the run's concurrency is the bound.
  return keptHttp2Session({ address, session: { peerMaxConcurrentStreams: 1000 } });
}

const HEADERS = { ":method": "POST", ":path": HELLO_PATH, "content-type": "application/grpc", te: "trailers" };

const SLOT = Symbol("load call");

/** One call's state, found by the stream's listeners on the stream. */
interface Slot {
  timeoutMs: number;
  stream: http2.ClientHttp2Stream | undefined;
  status: number | undefined;
  details: string;
  /** The reply's bytes: nearly always one chunk. */
  first: Buffer | undefined;
  more: Buffer[] | undefined;
  timedOut: boolean;
  /** The server refused the stream unprocessed (REFUSED_STREAM, no reply): it may be sent again. */
  refused: boolean;
  done: ((r: CallResult) => void) | undefined;
}

type SlotStream = http2.ClientHttp2Stream & { [SLOT]: Slot };

const newSlot = (timeoutMs: number): Slot => ({
  timeoutMs,
  stream: undefined,
  status: undefined,
  details: "",
  first: undefined,
  more: undefined,
  timedOut: false,
  refused: false,
  done: undefined,
});

function onStatus(this: SlotStream, h: http2.IncomingHttpHeaders): void {
  if (h["grpc-status"] === undefined) return;
  const slot = this[SLOT];
  slot.status = Number(h["grpc-status"]);
  slot.details = grpcMessage(h["grpc-message"] === undefined ? undefined : String(h["grpc-message"]));
}

function onData(this: SlotStream, chunk: Buffer): void {
  const slot = this[SLOT];
  if (slot.first === undefined) slot.first = chunk;
  else (slot.more ??= []).push(chunk);
}

const ignore = (): void => undefined;

function onClose(this: SlotStream): void {
  const slot = this[SLOT];
  const done = slot.done;
  slot.stream = undefined;
  slot.done = undefined;
  slot.refused = slot.status === undefined && !slot.timedOut && this.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM;
  done?.(result(slot, this.rstCode));
}

/** Starts one call on the slot; `done` gets its result when its stream closes. */
function start(session: http2.ClientHttp2Session, framed: Buffer, slot: Slot, done: (r: CallResult) => void): void {
  slot.status = undefined;
  slot.details = "";
  slot.first = undefined;
  slot.more = undefined;
  slot.timedOut = false;
  let stream: http2.ClientHttp2Stream;
  try {
    stream = session.request(HEADERS);
  } catch (err) {
    done({ code: Status.UNAVAILABLE, details: err instanceof Error ? err.message : String(err), answered: false });
    return;
  }
  (stream as SlotStream)[SLOT] = slot;
  slot.stream = stream;
  slot.done = done;
  stream.on("response", onStatus);
  stream.on("trailers", onStatus);
  stream.on("data", onData);
  stream.on("error", ignore);
  stream.on("close", onClose);
  stream.end(framed);
}

function cancel(slot: Slot): void {
  if (slot.stream === undefined) return;
  slot.timedOut = true;
  slot.stream.close(http2.constants.NGHTTP2_CANCEL);
}

/** One call on a session, bounded by its own timer; `refused` when the server refused it unprocessed. */
function callOn(
  session: http2.ClientHttp2Session,
  framed: Buffer,
  timeoutMs: number,
): Promise<{ result: CallResult; refused: boolean }> {
  return new Promise((resolve) => {
    const slot = newSlot(timeoutMs);
    const timer = setTimeout(() => cancel(slot), timeoutMs);
    start(session, framed, slot, (r) => {
      clearTimeout(timer);
      // Kept past the call (the replies at rest): a copy of its own.
      resolve({ result: r.reply ? { ...r, reply: Buffer.from(r.reply) } : r, refused: slot.refused });
    });
  });
}

/**
 * One call, bounded by its own timer, on the kept connection: for calls made one at a time. A call the server refused
 * unprocessed (REFUSED_STREAM with no reply: above the last stream of a GOAWAY that crossed it, RFC 9113 §8.7) is
 * sent once more, on the connection that replaced that one, within what is left of the same bound.
 */
export async function call(connection: KeptHttp2Session, framed: Buffer, timeoutMs: number): Promise<CallResult> {
  const deadline = performance.now() + timeoutMs;
  const first = await callOn(connection.session, framed, timeoutMs);
  const left = Math.ceil(deadline - performance.now());
  return first.refused && left > 0 ? (await callOn(connection.session, framed, left)).result : first.result;
}
