// The load loop itself: calls kept in flight on raw HTTP/2 connections until a deadline, counted and timed. It runs
// in the CLI's thread, or in each worker thread of a --threads run.
import http2 from "node:http2";
import net from "node:net";
import { build as buildHistogram, type Histogram } from "hdr-histogram-js";
import type { ParsedAddress } from "../../targets/address.js";
import { HELLO_PATH } from "../../targets/grpc-js-client.js";
import { Status, statusName } from "../../targets/grpc-target.js";
import { decodeFrames } from "../../targets/raw-h2.js";

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

export function call(session: http2.ClientHttp2Session, framed: Buffer, timeoutMs: number): Promise<CallResult> {
  return new Promise((resolve) => {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(HEADERS);
    } catch (err) {
      resolve({ code: Status.UNAVAILABLE, details: err instanceof Error ? err.message : String(err), answered: false });
      return;
    }
    const chunks: Buffer[] = [];
    let status: number | undefined;
    let details = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stream.close(http2.constants.NGHTTP2_CANCEL);
    }, timeoutMs);
    const grpcStatus = (h: http2.IncomingHttpHeaders) => {
      if (h["grpc-status"] !== undefined) {
        status = Number(h["grpc-status"]);
        const message = String(h["grpc-message"] ?? "");
        try {
          details = decodeURIComponent(message);
        } catch {
          details = message;
        }
      }
    };
    stream.on("response", grpcStatus);
    stream.on("trailers", grpcStatus);
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", () => undefined);
    stream.on("close", () => {
      clearTimeout(timer);
      if (status === undefined) {
        resolve(
          timedOut
            ? { code: Status.DEADLINE_EXCEEDED, details: `no status within ${timeoutMs} ms`, answered: false }
            : { code: Status.UNAVAILABLE, details: `stream closed without grpc-status (HTTP/2 code ${stream.rstCode ?? 0})`, answered: false },
        );
        return;
      }
      const { frames } = decodeFrames(Buffer.concat(chunks));
      const reply = frames.length === 1 ? Buffer.from((frames[0] as { data: Uint8Array }).data) : undefined;
      resolve({ code: status, details, ...(reply && { reply }), answered: true });
    });
    stream.end(framed);
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
  const worker = async (w: number) => {
    const session = sessions[w % sessions.length] as http2.ClientHttp2Session;
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
      const res = await call(session, requests[i] as Buffer, spec.timeoutMs);
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
    for (const s of sessions) s.destroy();
  }
  result.elapsedMs = performance.now() - t0;
  return result;
}
