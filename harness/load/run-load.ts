// A load run on Hello: many calls in flight over a few connections for a bounded time, with latency percentiles,
// errors by status, and a statelessness check under concurrency (every reply equals the one at rest).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { decodeFromCompressedBase64 } from "hdr-histogram-js";
import { ConformanceError } from "../errors.js";
import { LOAD_HTTP, resolveLoadOptions, type LoadOptions, type ResolvedLoad } from "../run-config.js";
import { encodeMessage } from "../../common/message.js";
import { PACKAGE_ROOT } from "../../common/paths.js";
import { loadTls } from "../targets/connection.js";
import { metadataHeaders } from "../protocols/http-rpc.js";
import { probeReachable } from "../targets/rpc-probes.js";
import { statusName, statusText } from "../protocols/rpc.js";
import { encodeFrames } from "../protocols/grpc/index.js";
import { buildLoadReport, type LoadReport } from "./load-report.js";
export type { LoadReport } from "./load-report.js";
export type { LoadOptions, LoadProgress } from "../run-config.js";
import {
  drive,
  isShed,
  newHistogram,
  restCaller,
  type DriveResult,
  type DriveSpec,
  type HttpVersion,
} from "./_internals/drive.js";
import { tlsAlpnChoice } from "../wire/http2.js";
import type { WorkerInput } from "./load-worker.js";
import type { HttpWire } from "./_internals/http-rpc-call.js";
import { probeResourceCredentials } from "./_internals/resource-credentials.js";
import { loadTransportOf } from "./load-transport.js";
import { memoryGrowth } from "./memory-growth.js";
import { memorySampler, type MemoryRecord } from "./_internals/memory-sampler.js";

/** Distinct requests, each sent many times under load; their replies at rest are the reference. */
const BODIES = Array.from({ length: 16 }, (_, i) => (i === 0 ? "" : `load ${i} ${"é".repeat(i % 4)}`));

const WORKER_FILE = join(PACKAGE_ROOT, "dist", "harness", "load", "load-worker.js");

/** What every exchange of an HTTP run carries: TLS material (read once), the authority, metadata or the API key. */
function httpWire(options: ResolvedLoad, placement = options.apiKeyIn): HttpWire {
  const key = options.apiKey;
  const headers: Record<string, string> = options.protocol === LOAD_HTTP ? {} : metadataHeaders(options.metadata ?? {});
  if (key !== undefined && placement.in === "header")
    headers[placement.name.toLowerCase()] = placement.scheme !== undefined ? `${placement.scheme} ${key}` : key;
  return {
    ...(options.tls && { tls: loadTls(options.tls) }),
    ...(options.authority !== undefined && { authority: options.authority }),
    headers,
    ...(key !== undefined &&
      placement.in === "query" && { query: `${encodeURIComponent(placement.name)}=${encodeURIComponent(key)}` }),
  };
}

/** Splits n into parts as even as possible, the larger ones first. */
function share(n: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(n / parts) + (i < n % parts ? 1 : 0));
}

interface WorkerResult extends Omit<DriveResult, "histogram" | "corrected"> {
  histogram: string;
  corrected?: string;
}

/** Runs the drivers in worker threads and hands back each one's result, its histogram decoded. */
function driveInWorkers(
  specs: DriveSpec[],
  signal: AbortSignal | undefined,
  progress: SharedArrayBuffer,
): Promise<DriveResult[]> {
  if (!existsSync(WORKER_FILE)) {
    return Promise.reject(
      new ConformanceError(
        "internal",
        `--threads needs the compiled harness (${WORKER_FILE} is missing): run npm run build`,
      ),
    );
  }
  return Promise.all(
    specs.map(
      (spec, index) =>
        new Promise<DriveResult>((resolve, reject) => {
          const worker = new Worker(WORKER_FILE, { workerData: { spec, progress, index } satisfies WorkerInput });
          const stop = () => worker.postMessage("stop");
          signal?.addEventListener("abort", stop, { once: true });
          worker.once("message", ({ histogram, corrected, ...m }: WorkerResult) => {
            signal?.removeEventListener("abort", stop);
            resolve({
              ...m,
              histogram: decodeFromCompressedBase64(histogram),
              ...(corrected !== undefined && { corrected: decodeFromCompressedBase64(corrected) }),
            });
          });
          worker.once("error", (err) =>
            reject(new ConformanceError("internal", `load worker ${index + 1}: ${err.message}`, { cause: err })),
          );
          worker.once("exit", (code) =>
            reject(new ConformanceError("internal", `load worker ${index + 1} exited (${code}) without a result`)),
          );
        }),
    ),
  );
}

/**
 * A load run: its options resolved and checked once (run-config.ts), then run; a mistake in them rejects, as any
 * failure does.
 */
export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  return runResolvedLoad(resolveLoadOptions(options));
}

/**
 * A load run whose options are resolved already (the CLI resolves them before it opens its report file): its caller
 * chosen by its protocol's module.
 */
export async function runResolvedLoad(options: ResolvedLoad): Promise<LoadReport> {
  if (options.protocol === LOAD_HTTP) return runResourceLoad(options);
  const transport = loadTransportOf(options.protocol);
  const { address, url } = options.endpoint;
  const wire = transport.kind === "http-rpc" ? httpWire(options) : undefined;
  const http =
    transport.kind === "http-rpc"
      ? {
          protocol: transport.framing,
          baseUrl: (url as URL).href,
          version: await httpVersionOf(options, wire as HttpWire),
        }
      : undefined;
  if (transport.kind === "raw-h2") await probeReachable({ address: options.address, timeoutMs: options.timeoutMs });
  const requests = BODIES.map((b) => Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage(b) }])));
  const base = {
    address,
    requests,
    bodies: BODIES,
    timeoutMs: options.timeoutMs,
    durationMs: options.durationMs,
    ...(http && { http }),
    ...(wire && { wire }),
  };
  const rest = await callsAtRest(options, base);
  const specs = driverSpecs(options, options.threads, { ...base, atRest: rest.atRest });
  const results = await runDrivers(specs, options);
  const used = http && {
    httpVersion: http.version,
    connections: http.version === "2" ? options.connections : options.concurrency,
  };
  return report(
    options,
    options.threads,
    results,
    { errors: rest.errors, shed: rest.shed, distinctRequests: requests.length },
    used,
  );
}

/**
 * The HTTP version a Connect or gRPC-Web run speaks: over TLS what the server picks by ALPN, offered h2 and
 * http/1.1; over cleartext HTTP/2 (h2c) only by prior knowledge, when asked (--http2-prior-knowledge), else HTTP/1.1.
 * A TLS connection that fails here is left to the run's HTTP/1.1 calls at rest, which name why.
 */
async function httpVersionOf(options: ResolvedLoad, wire: HttpWire): Promise<HttpVersion> {
  if (options.endpoint.url?.protocol !== "https:") return options.http2PriorKnowledge === true ? "2" : "1.1";
  const target = { address: options.endpoint.address, tls: wire.tls ?? {}, authority: wire.authority };
  return tlsAlpnChoice(target, options.timeoutMs).then(
    (alpn) => (alpn === "h2" ? "2" : "1.1"),
    () => "1.1",
  );
}

/**
 * At rest: one call at a time on a connection of its own, each request's reply recorded. A call the server answers
 * with an error is a finding of the run (its status counted under load), not an unreachable target; only a call that
 * got no answer at all is.
 */
async function callsAtRest(
  options: ResolvedLoad,
  base: Omit<SpecBase, "atRest">,
): Promise<{ atRest: (Buffer | null)[]; errors: Record<string, number>; shed: Record<string, number> }> {
  const atRest: (Buffer | null)[] = [];
  const errors: Record<string, number> = {};
  const shed: Record<string, number> = {};
  const rest = restCaller({ ...base, atRest: [], concurrency: 1, connections: 1 });
  try {
    for (const i of base.requests.keys()) {
      const res = await rest.call(0, i, i);
      if (!res.answered) {
        const h2c =
          options.http2PriorKnowledge === true ? " (--http2-prior-knowledge: does it speak HTTP/2 without TLS?)" : "";
        throw new ConformanceError(
          "unreachable",
          `${options.address}: Hello at rest failed for ${JSON.stringify(BODIES[i])}: ` +
            `${statusText(res.code, res.details)}${h2c}`,
        );
      }
      atRest.push(res.code === 0 && res.reply ? res.reply : null);
      const counts = isShed(res) ? shed : errors;
      if (res.code !== 0) counts[statusName(res.code)] = (counts[statusName(res.code)] ?? 0) + 1;
    }
  } finally {
    rest.close();
  }
  return { atRest, errors, shed };
}

/** `load --http`: no Hello; a mix of resource operations, each read compared with what the run last wrote there. */
async function runResourceLoad(options: ResolvedLoad): Promise<LoadReport> {
  const base = options.endpoint.url as URL;
  const collectionUrl = new URL((options.collection as string).replace(/^\/?/, "/"), base).href;
  const mix = options.mix as NonNullable<ResolvedLoad["mix"]>;
  const wire = httpWire(options);
  // A target that wants a key not given, or refuses the one given: exit 5 before the run, as check does.
  await probeResourceCredentials(collectionUrl, {
    wire,
    wireFor: (placement) => httpWire(options, placement),
    timeoutMs: options.timeoutMs,
    keyGiven: options.apiKey !== undefined,
    placement: options.apiKeyIn,
  });
  const { address } = options.endpoint;
  const specs = driverSpecs(options, 1, {
    address,
    requests: [new Uint8Array(5)],
    bodies: [""],
    atRest: [null],
    timeoutMs: options.timeoutMs,
    durationMs: options.durationMs,
    resources: { collectionUrl, mix },
    wire,
  });
  const results = await runDrivers(specs, options);
  const created = results.reduce((n, r) => n + (r.resources?.created ?? 0), 0);
  const leftBehind = results.reduce((n, r) => n + (r.resources?.leftBehind ?? 0), 0);
  return {
    ...report(options, 1, results, { errors: {}, shed: {}, distinctRequests: created }),
    mix,
    resources: { collection: collectionUrl, created, leftBehind },
  };
}

type SpecBase = Omit<DriveSpec, "concurrency" | "connections" | "rate">;

/** Each driver's share of the concurrency, connections and rate. */
function driverSpecs(options: ResolvedLoad, threads: number, base: SpecBase): DriveSpec[] {
  const concurrency = share(options.concurrency, threads);
  const connections = share(options.connections, threads);
  const rates = options.rate === undefined ? undefined : share(options.rate, threads);
  return concurrency.map((c, i) => ({
    ...base,
    concurrency: c,
    connections: connections[i] as number,
    // A share of 0 calls a second (a rate below the thread count) would never start: it gets one.
    ...(rates && { rate: Math.max(1, rates[i] as number) }),
  }));
}

/** Runs the drivers, in this thread or in worker threads, with the progress line and the memory sampled. */
async function runDrivers(
  specs: DriveSpec[],
  options: ResolvedLoad,
): Promise<DriveResult[] & { memory: MemoryRecord }> {
  const memory = memorySampler();
  const threads = specs.length;
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
    memory.sample();
    options.onProgress?.({
      elapsedMs,
      requests: requestsDone,
      errors,
      requestsPerSecond: (requestsDone / elapsedMs) * 1000,
    });
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
  memory.sample();
  return Object.assign(results, { memory: memory.stop() });
}

/** The report from the drivers' results, with what the calls at rest counted. */
function report(
  options: ResolvedLoad,
  threads: number,
  results: DriveResult[] & { memory: MemoryRecord },
  atRest: { errors: Record<string, number>; shed: Record<string, number>; distinctRequests: number },
  used?: { httpVersion: HttpVersion; connections: number },
): LoadReport {
  const errors = { ...atRest.errors };
  const shed = { ...atRest.shed };
  // The longest driver's own time: threads that took a moment to start did not drive in it.
  const durationMs = Math.max(...results.map((r) => r.elapsedMs));

  const histogram = newHistogram();
  const corrected = options.rate === undefined ? undefined : newHistogram();
  let done = 0;
  let unsent = 0;
  let compared = 0;
  let mismatches = 0;
  let example: string | undefined;
  let reconnections = 0;
  for (const r of results) {
    reconnections += r.reconnections;
    histogram.add(r.histogram);
    if (r.corrected) corrected?.add(r.corrected);
    done += r.requests;
    unsent += r.unsent;
    compared += r.compared;
    mismatches += r.mismatches;
    example ??= r.example;
    for (const [name, n] of Object.entries(r.errors)) errors[name] = (errors[name] ?? 0) + n;
    for (const [name, n] of Object.entries(r.shed)) shed[name] = (shed[name] ?? 0) + n;
  }
  return buildLoadReport({
    target: options.address,
    durationMs,
    concurrency: options.concurrency,
    connections: used?.connections ?? options.connections,
    ...(used && { httpVersion: used.httpVersion }),
    threads,
    ...(options.rate !== undefined && { rate: options.rate, unsent }),
    requests: done,
    histogram,
    ...(corrected && { corrected }),
    errors,
    shed,
    ...(reconnections > 0 && { reconnections }),
    stateless: {
      distinctRequests: atRest.distinctRequests,
      compared,
      mismatches,
      ...(example !== undefined && { example }),
    },
    interrupted: options.signal?.aborted === true,
    slo: options.slo ?? [],
    memory: { ...results.memory, growthMiB: memoryGrowth(results.memory) },
  });
}
