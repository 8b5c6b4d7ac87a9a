// The replies at rest of a gRPC load run: Hello calls one at a time over node:http2, a client apart from the raw one
// that drives the run (raw-h2.ts), so that a reply under load is compared with one another HTTP/2 client decoded.
import http2 from "node:http2";
import net from "node:net";
import type { ParsedAddress } from "../../targets/address.js";
import { grpcMessage, HELLO_PATH, Status } from "../../protocols/rpc.js";
import { grpcResult as result, type CallResult } from "./call-result.js";
import { authorityOf } from "./raw-h2.js";

/** One node:http2 connection for Hello calls made one at a time. */
export function openConnection(address: ParsedAddress): http2.ClientHttp2Session {
  const session = http2.connect(`http://${authorityOf(address)}`, {
    ...(address.kind === "unix" && { createConnection: () => net.connect(address.path) }),
    // As many streams as the server allows; the run's concurrency is the bound.
    peerMaxConcurrentStreams: 1000,
  });
  session.on("error", () => undefined);
  return session;
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
  done: ((r: CallResult) => void) | undefined;
}

type SlotStream = http2.ClientHttp2Stream & { [SLOT]: Slot };

const newSlot = (timeoutMs: number): Slot => ({ timeoutMs, stream: undefined, status: undefined, details: "", first: undefined, more: undefined, timedOut: false, done: undefined });

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

/** One call, bounded by its own timer: for calls made one at a time. */
export function call(session: http2.ClientHttp2Session, framed: Buffer, timeoutMs: number): Promise<CallResult> {
  return new Promise((resolve) => {
    const slot = newSlot(timeoutMs);
    const timer = setTimeout(() => cancel(slot), timeoutMs);
    start(session, framed, slot, (r) => {
      clearTimeout(timer);
      // Kept past the call (the replies at rest): a copy of its own.
      resolve(r.reply ? { ...r, reply: Buffer.from(r.reply) } : r);
    });
  });
}
