// A load run on Hello: many calls in flight over a few connections for a bounded time, with latency percentiles,
// errors by status, and a statelessness check under concurrency (every reply equals the one at rest).
import http2 from "node:http2";
import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import { build as buildHistogram } from "hdr-histogram-js";
import { ConformanceError } from "../errors.js";
import { encodeMessage } from "../_internals/message.js";
import { parseAddress, type ParsedAddress } from "../targets/address.js";
import { probeReachable } from "../targets/create-grpc-target.js";
import { HELLO_PATH } from "../targets/grpc-js-client.js";
import { decodeFrames, encodeFrames } from "../targets/raw-h2.js";
import { statusText } from "../targets/grpc-target.js";

export interface LoadOptions {
  /** host:port, dns:///host:port or unix:///path. */
  address: string;
  /** How long calls keep starting; the run stops by itself after it. */
  durationMs: number;
  /** Calls in flight at once. */
  concurrency: number;
  /** Connections the calls are spread over. */
  connections: number;
  /** Calls started per second at most; absent for as fast as the target answers. */
  rate?: number;
  /** Bound on one call. */
  timeoutMs?: number;
  /** Stops the run early (Ctrl-C), keeping what was measured. */
  signal?: AbortSignal;
  /** Called about once a second. */
  onProgress?: (p: LoadProgress) => void;
}

export interface LoadProgress {
  elapsedMs: number;
  requests: number;
  errors: number;
  requestsPerSecond: number;
}

export interface LoadReport {
  target: string;
  durationMs: number;
  concurrency: number;
  connections: number;
  requests: number;
  requestsPerSecond: number;
  /** Milliseconds, from a histogram of microseconds. */
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** Calls that did not end OK, by status name. */
  errors: Record<string, number>;
  /** Replies under load compared with the reply to the same request at rest. */
  stateless: { distinctRequests: number; compared: number; mismatches: number; example?: string };
  /** Whether the run was stopped early. */
  interrupted: boolean;
}

/** Distinct requests, each sent many times under load; their replies at rest are the reference. */
const BODIES = Array.from({ length: 16 }, (_, i) => (i === 0 ? "" : `load ${i} ${"é".repeat(i % 4)}`));
const MAX_DURATION_MS = 10 * 60_000;

interface CallResult {
  code: number;
  details: string;
  reply?: Buffer;
}

/**
 * One HTTP/2 connection that sends Hello calls as raw gRPC requests. A load generator must cost far less per call
 * than the server it measures; grpc-js's client costs about as much as its server, so it would measure itself.
 */
function openConnection(address: ParsedAddress): http2.ClientHttp2Session {
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

function call(session: http2.ClientHttp2Session, framed: Buffer, timeoutMs: number): Promise<CallResult> {
  return new Promise((resolve) => {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(HEADERS);
    } catch (err) {
      resolve({ code: grpc.status.UNAVAILABLE, details: err instanceof Error ? err.message : String(err) });
      return;
    }
    const chunks: Buffer[] = [];
    let status: number | undefined;
    let details = "";
    const timer = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), timeoutMs);
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
        resolve({ code: grpc.status.UNAVAILABLE, details: `stream closed without grpc-status (HTTP/2 code ${stream.rstCode ?? 0})` });
        return;
      }
      const { frames } = decodeFrames(Buffer.concat(chunks));
      const reply = frames.length === 1 ? Buffer.from((frames[0] as { data: Uint8Array }).data) : undefined;
      resolve({ code: status, details, ...(reply && { reply }) });
    });
    stream.end(framed);
  });
}

export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  if (!(options.durationMs > 0 && options.durationMs <= MAX_DURATION_MS)) throw new ConformanceError("usage", `the duration must be between 1 ms and 10 m`);
  const address = parseAddress(options.address);
  const timeoutMs = options.timeoutMs ?? 5000;
  await probeReachable({ address: options.address, timeoutMs });
  const clients = Array.from({ length: options.connections }, () => openConnection(address));
  const requests = BODIES.map((b) => Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage(b) }])));
  try {
    // At rest: one call at a time, each request's reply recorded.
    const atRest: Buffer[] = [];
    for (const [i, request] of requests.entries()) {
      const res = await call(clients[0] as http2.ClientHttp2Session, request, timeoutMs);
      if (res.code !== 0 || !res.reply) {
        throw new ConformanceError("unreachable", `${options.address}: Hello at rest failed for ${JSON.stringify(BODIES[i])}: ${statusText(res.code, res.details)}`);
      }
      atRest.push(res.reply);
    }

    const histogram = buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 10 * 60 * 1_000_000, numberOfSignificantValueDigits: 3 });
    const errors: Record<string, number> = {};
    let done = 0;
    let failed = 0;
    let compared = 0;
    let mismatches = 0;
    let example: string | undefined;
    let started = 0;
    const t0 = performance.now();
    const end = t0 + options.durationMs;
    const stopped = () => options.signal?.aborted === true || performance.now() >= end;
    const progress = setInterval(() => {
      const elapsedMs = performance.now() - t0;
      options.onProgress?.({ elapsedMs, requests: done, errors: failed, requestsPerSecond: (done / elapsedMs) * 1000 });
    }, 1000);

    const worker = async (w: number) => {
      const client = clients[w % clients.length] as http2.ClientHttp2Session;
      for (let k = w; !stopped(); k += options.concurrency) {
        if (options.rate !== undefined) {
          // The n-th call of the run starts no earlier than n / rate seconds in.
          const due = t0 + (started / options.rate) * 1000;
          started++;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (stopped()) break;
        }
        const i = k % requests.length;
        const callStart = performance.now();
        const res = await call(client, requests[i] as Buffer, timeoutMs);
        histogram.recordValue(Math.max(1, Math.round((performance.now() - callStart) * 1000)));
        done++;
        if (res.code !== 0) {
          failed++;
          const name = grpc.status[res.code] ?? String(res.code);
          errors[name] = (errors[name] ?? 0) + 1;
          continue;
        }
        compared++;
        if (!res.reply || !res.reply.equals(atRest[i] as Buffer)) {
          mismatches++;
          example ??= `request ${JSON.stringify(BODIES[i])}: reply at rest ${(atRest[i] as Buffer).toString("hex")}, under load ${res.reply?.toString("hex") ?? "none"}`;
        }
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, (_, w) => worker(w)));
    clearInterval(progress);
    const durationMs = performance.now() - t0;
    const ms = (us: number) => Math.round(us) / 1000;
    return {
      target: options.address,
      durationMs: Math.round(durationMs),
      concurrency: options.concurrency,
      connections: options.connections,
      requests: done,
      requestsPerSecond: Math.round((done / durationMs) * 1000),
      latencyMs: {
        p50: ms(histogram.getValueAtPercentile(50)),
        p90: ms(histogram.getValueAtPercentile(90)),
        p99: ms(histogram.getValueAtPercentile(99)),
        max: ms(histogram.maxValue),
        mean: ms(histogram.mean),
      },
      errors,
      stateless: { distinctRequests: requests.length, compared, mismatches, ...(example !== undefined && { example }) },
      interrupted: options.signal?.aborted === true,
    };
  } finally {
    for (const c of clients) c.destroy();
  }
}
