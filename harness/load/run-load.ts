// A load run on Hello: many calls in flight over a few connections for a bounded time, with latency percentiles,
// errors by status, and a statelessness check under concurrency (every reply equals the one at rest).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { decodeFromCompressedBase64 } from "hdr-histogram-js";
import { ConformanceError } from "../errors.js";
import { encodeMessage } from "../../contract/message.js";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import { parseAddress } from "../targets/address.js";
import { probeReachable } from "../targets/rpc-probes.js";
import { statusName, statusText } from "../targets/grpc-target.js";
import { encodeFrames } from "../protocols/grpc/index.js";
import { call, drive, newHistogram, openConnection, type DriveResult, type DriveSpec } from "./_internals/drive.js";
import type { WorkerInput } from "./load-worker.js";

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
  /**
   * Threads that drive calls, each with its share of the concurrency, connections and rate (default 1). Node's
   * HTTP/2 client costs about 100 µs of CPU a call, so one thread tops out near 10,000 calls a second; more threads
   * use more cores. Needs the compiled harness (dist/).
   */
  threads?: number;
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
  threads: number;
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

const WORKER_FILE = join(PACKAGE_ROOT, "dist", "harness", "load", "load-worker.js");

/** Splits n into parts as even as possible, the larger ones first. */
function share(n: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(n / parts) + (i < n % parts ? 1 : 0));
}

interface WorkerResult extends Omit<DriveResult, "histogram"> {
  histogram: string;
}

/** Runs the drivers in worker threads and hands back each one's result, its histogram decoded. */
function driveInWorkers(specs: DriveSpec[], signal: AbortSignal | undefined, progress: SharedArrayBuffer): Promise<DriveResult[]> {
  if (!existsSync(WORKER_FILE)) {
    return Promise.reject(new ConformanceError("internal", `--threads needs the compiled harness (${WORKER_FILE} is missing): run npm run build`));
  }
  return Promise.all(
    specs.map(
      (spec, index) =>
        new Promise<DriveResult>((resolve, reject) => {
          const worker = new Worker(WORKER_FILE, { workerData: { spec, progress, index } satisfies WorkerInput });
          const stop = () => worker.postMessage("stop");
          signal?.addEventListener("abort", stop, { once: true });
          worker.once("message", (m: WorkerResult) => {
            signal?.removeEventListener("abort", stop);
            resolve({ ...m, histogram: decodeFromCompressedBase64(m.histogram) });
          });
          worker.once("error", (err) => reject(new ConformanceError("internal", `load worker ${index + 1}: ${err.message}`, { cause: err })));
          worker.once("exit", (code) => reject(new ConformanceError("internal", `load worker ${index + 1} exited (${code}) without a result`)));
        }),
    ),
  );
}

export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  if (!(options.durationMs > 0 && options.durationMs <= MAX_DURATION_MS)) throw new ConformanceError("usage", `the duration must be between 1 ms and 10 m`);
  const threads = options.threads ?? 1;
  if (!(Number.isInteger(threads) && threads >= 1 && threads <= Math.min(options.concurrency, options.connections))) {
    throw new ConformanceError("usage", `--threads ${threads}: expected a whole number from 1 to the lesser of --concurrency and --connections`);
  }
  const address = parseAddress(options.address);
  const timeoutMs = options.timeoutMs ?? 5000;
  await probeReachable({ address: options.address, timeoutMs });
  const requests = BODIES.map((b) => Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage(b) }])));

  // At rest: one call at a time on a connection of its own, each request's reply recorded.
  // A call the server answers with an error is a finding of the run (its status counted under load), not an
  // unreachable target; only a call that got no answer at all is.
  const atRest: (Buffer | null)[] = [];
  const errors: Record<string, number> = {};
  const restSession = openConnection(address);
  try {
    for (const [i, request] of requests.entries()) {
      const res = await call(restSession, request, timeoutMs);
      if (!res.answered) {
        throw new ConformanceError("unreachable", `${options.address}: Hello at rest failed for ${JSON.stringify(BODIES[i])}: ${statusText(res.code, res.details)}`);
      }
      atRest.push(res.code === 0 && res.reply ? res.reply : null);
      if (res.code !== 0) errors[statusName(res.code)] = (errors[statusName(res.code)] ?? 0) + 1;
    }
  } finally {
    restSession.destroy();
  }

  const concurrency = share(options.concurrency, threads);
  const connections = share(options.connections, threads);
  const rates = options.rate === undefined ? undefined : share(options.rate, threads);
  const specs: DriveSpec[] = concurrency.map((c, i) => ({
    address,
    requests,
    bodies: BODIES,
    atRest,
    concurrency: c,
    connections: connections[i] as number,
    // A share of 0 calls a second (a rate below the thread count) would never start: it gets one.
    ...(rates && { rate: Math.max(1, rates[i] as number) }),
    timeoutMs,
    durationMs: options.durationMs,
  }));
  const progress = new SharedArrayBuffer(8 * threads);
  const counters = new Int32Array(progress);
  const t0 = performance.now();
  const timer = setInterval(() => {
    let requestsDone = 0;
    let errors = 0;
    for (let i = 0; i < threads; i++) {
      requestsDone += Atomics.load(counters, 2 * i);
      errors += Atomics.load(counters, 2 * i + 1);
    }
    const elapsedMs = performance.now() - t0;
    options.onProgress?.({ elapsedMs, requests: requestsDone, errors, requestsPerSecond: (requestsDone / elapsedMs) * 1000 });
  }, 1000);
  let results: DriveResult[];
  try {
    results =
      threads === 1
        ? [await drive(specs[0] as DriveSpec, () => options.signal?.aborted === true, counters)]
        : await driveInWorkers(specs, options.signal, progress);
  } finally {
    clearInterval(timer);
  }
  // The longest driver's own time: threads that took a moment to start did not drive in it.
  const durationMs = Math.max(...results.map((r) => r.elapsedMs));

  const histogram = newHistogram();
  let done = 0;
  let compared = 0;
  let mismatches = 0;
  let example: string | undefined;
  for (const r of results) {
    histogram.add(r.histogram);
    done += r.requests;
    compared += r.compared;
    mismatches += r.mismatches;
    example ??= r.example;
    for (const [name, n] of Object.entries(r.errors)) errors[name] = (errors[name] ?? 0) + n;
  }
  const ms = (us: number) => Math.round(us) / 1000;
  return {
    target: options.address,
    durationMs: Math.round(durationMs),
    concurrency: options.concurrency,
    connections: options.connections,
    threads,
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
}
