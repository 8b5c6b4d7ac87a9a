// The load loop itself: calls kept in flight on raw HTTP/2 connections until a deadline, counted and timed. It runs
// in the CLI's thread, or in each worker thread of a --threads run.
import http2 from "node:http2";
import net from "node:net";
import { build as buildHistogram, type Histogram } from "hdr-histogram-js";
import type { ParsedAddress } from "../../targets/address.js";
import { HELLO_PATH } from "../../targets/grpc-target.js";
import { Status, statusName } from "../../targets/grpc-target.js";
import { decodeFrames } from "../../protocols/grpc/index.js";

export interface CallResult {
  code: number;
  details: string;
  reply?: Buffer;
  /** The server sent a grpc-status: an error it chose, not a connection that failed. */
  answered: boolean;
}

/**
 * One HTTP/2 connection that sends Hello calls as raw gRPC requests. A load generator must cost far less per call
 * than the server it measures; grpc-js's client costs about as much as its server, so it would measure itself.
 */
export function openConnection(address: ParsedAddress): http2.ClientHttp2Session {
  const authority = address.kind === "unix" ? "localhost" : address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
  const session = http2.connect(`http://${authority}`, {
    ...(address.kind === "unix" && { createConnection: () => net.connect(address.path) }),
    // As many streams as the server allows; the run's concurrency is the bound.
    peerMaxConcurrentStreams: 1000,
  });
  session.on("error", () => undefined);
  return session;
}

const HEADERS = { ":method": "POST", ":path": HELLO_PATH, "content-type": "application/grpc", te: "trailers" };

const SLOT = Symbol("load call");

/**
 * One call's state. A driver keeps one per call it has in flight and reuses it call after call, and the stream's
 * listeners are shared functions that find it on the stream: a load generator must cost far less per call than the
 * server it measures, and closures, a timer and a decoded frame list made for every call cost the CPU and the
 * garbage collection of a few thousand calls a second (seen with --cpu-prof against grpc-go).
 */
interface Slot {
  timeoutMs: number;
  /** When a call in flight is cancelled (performance.now() time), by the driver's sweep. */
  deadline: number;
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

const newSlot = (timeoutMs: number): Slot => ({ timeoutMs, deadline: 0, stream: undefined, status: undefined, details: "", first: undefined, more: undefined, timedOut: false, done: undefined });

function onStatus(this: SlotStream, h: http2.IncomingHttpHeaders): void {
  if (h["grpc-status"] === undefined) return;
  const slot = this[SLOT];
  slot.status = Number(h["grpc-status"]);
  const message = String(h["grpc-message"] ?? "");
  if (message === "" || !message.includes("%")) {
    slot.details = message;
    return;
  }
  try {
    slot.details = decodeURIComponent(message);
  } catch {
    slot.details = message;
  }
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

function result(slot: Slot, rstCode: number | undefined): CallResult {
  if (slot.status === undefined) {
    return slot.timedOut
      ? { code: Status.DEADLINE_EXCEEDED, details: `no status within ${slot.timeoutMs} ms`, answered: false }
      : { code: Status.UNAVAILABLE, details: `stream closed without grpc-status (HTTP/2 code ${rstCode ?? 0})`, answered: false };
  }
  const first = slot.first;
  let reply: Buffer | undefined;
  if (first !== undefined && slot.more === undefined && first.length >= 5 && first[0] === 0 && first.readUInt32BE(1) === first.length - 5) {
    // One uncompressed message in one chunk: node:http2 gives each chunk its own memory, so a view will do.
    reply = first.subarray(5);
  } else if (first !== undefined) {
    const { frames } = decodeFrames(slot.more ? Buffer.concat([first, ...slot.more]) : first);
    if (frames.length === 1) reply = Buffer.from((frames[0] as { data: Uint8Array }).data);
  }
  return reply ? { code: slot.status, details: slot.details, reply, answered: true } : { code: slot.status, details: slot.details, answered: true };
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
  slot.deadline = performance.now() + slot.timeoutMs;
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

/** One driver's share of a run: plain data, so that it can be handed to a worker thread. */
export interface DriveSpec {
  address: ParsedAddress;
  /** The distinct requests, framed, with their bodies (for the mismatch example) and their replies at rest. */
  requests: readonly Uint8Array[];
  bodies: readonly string[];
  /** null where the server answered that request at rest with an error: nothing to compare with. */
  atRest: readonly (Uint8Array | null)[];
  concurrency: number;
  connections: number;
  rate?: number;
  timeoutMs: number;
  durationMs: number;
}

export interface DriveResult {
  histogram: Histogram;
  /** From the first call started to the last one ended: a worker thread's start-up is not part of it. */
  elapsedMs: number;
  requests: number;
  failed: number;
  errors: Record<string, number>;
  compared: number;
  mismatches: number;
  example?: string;
}

/** How often a driver looks for calls past their deadline. */
const SWEEP_MS = 50;

export const newHistogram = (): Histogram =>
  buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 10 * 60 * 1_000_000, numberOfSignificantValueDigits: 3 });

/**
 * Keeps spec.concurrency calls in flight until spec.durationMs has passed or stopped() says so. progress[0] and
 * progress[1] count calls and failures as they end: a shared array when the driver is a worker thread.
 */
export async function drive(spec: DriveSpec, stopped: () => boolean, progress: Int32Array): Promise<DriveResult> {
  const sessions = Array.from({ length: spec.connections }, () => openConnection(spec.address));
  const requests = spec.requests.map((r) => Buffer.from(r.buffer, r.byteOffset, r.byteLength));
  const atRest = spec.atRest.map((r) => (r === null ? undefined : Buffer.from(r.buffer, r.byteOffset, r.byteLength)));
  const histogram = newHistogram();
  const result: DriveResult = { histogram, elapsedMs: 0, requests: 0, failed: 0, errors: {}, compared: 0, mismatches: 0 };
  let started = 0;
  const t0 = performance.now();
  const end = t0 + spec.durationMs;
  const over = () => stopped() || performance.now() >= end;
  const slots = Array.from({ length: spec.concurrency }, () => newSlot(spec.timeoutMs));
  // One sweep cancels the calls past their deadline, instead of a timer set and cleared for every call: a call
  // is cancelled at most SWEEP_MS after its deadline.
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const slot of slots) if (slot.stream !== undefined && now >= slot.deadline) cancel(slot);
  }, Math.min(SWEEP_MS, spec.timeoutMs));
  const worker = async (w: number) => {
    const session = sessions[w % sessions.length] as http2.ClientHttp2Session;
    const slot = slots[w] as Slot;
    for (let k = w; !over(); k += spec.concurrency) {
      if (spec.rate !== undefined) {
        // The n-th call of the run starts no earlier than n / rate seconds in.
        const due = t0 + (started / spec.rate) * 1000;
        started++;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (over()) break;
      }
      const i = k % requests.length;
      const callStart = performance.now();
      const res = await new Promise<CallResult>((resolve) => start(session, requests[i] as Buffer, slot, resolve));
      histogram.recordValue(Math.max(1, Math.round((performance.now() - callStart) * 1000)));
      result.requests++;
      Atomics.add(progress, 0, 1);
      if (res.code !== 0) {
        result.failed++;
        Atomics.add(progress, 1, 1);
        const name = statusName(res.code);
        result.errors[name] = (result.errors[name] ?? 0) + 1;
        continue;
      }
      const rest = atRest[i];
      if (rest === undefined) continue;
      result.compared++;
      if (!res.reply || !res.reply.equals(rest)) {
        result.mismatches++;
        result.example ??= `request ${JSON.stringify(spec.bodies[i])}: reply at rest ${rest.toString("hex")}, under load ${res.reply?.toString("hex") ?? "none"}`;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: spec.concurrency }, (_, w) => worker(w)));
  } finally {
    clearInterval(sweep);
    for (const s of sessions) s.destroy();
  }
  result.elapsedMs = performance.now() - t0;
  return result;
}
