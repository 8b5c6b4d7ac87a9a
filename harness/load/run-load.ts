// A load run on Hello: many calls in flight over a few connections for a bounded time, with latency percentiles,
// errors by status, and a statelessness check under concurrency (every reply equals the one at rest).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { decodeFromCompressedBase64 } from "hdr-histogram-js";
import { ConformanceError } from "../errors.js";
import { resolveHttpTarget } from "../run-config.js";
import { encodeMessage } from "../../contract/message.js";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import { parseAddress } from "../targets/address.js";
import { loadTls, type TlsOptions } from "../targets/connection.js";
import type { ApiKeyPlacement } from "../targets/http-target.js";
import { metadataHeaders } from "../protocols/http-rpc.js";
import { probeReachable } from "../targets/rpc-probes.js";
import { statusName, statusText } from "../protocols/rpc.js";
import { encodeFrames } from "../protocols/grpc/index.js";
import { buildLoadReport, type LoadReport } from "./load-report.js";
export type { LoadReport } from "./load-report.js";
import type { SloTerm } from "./slo.js";
import { drive, isShed, newHistogram, restCaller, type DriveResult, type DriveSpec } from "./_internals/drive.js";
import type { WorkerInput } from "./load-worker.js";
import type { HttpRpcLoadProtocol, HttpWire } from "./_internals/http-rpc-call.js";
import { probeResourceCredentials } from "./_internals/resource-credentials.js";
import { DEFAULT_MIX, type Mix } from "./_internals/resource-caller.js";

export interface LoadOptions {
  /** gRPC: host:port, dns:///host:port or unix:///path; Connect and gRPC-Web: the base URL (http://host:port[/prefix]). */
  address: string;
  /** Default gRPC. */
  protocol?: "grpc" | HttpRpcLoadProtocol | "http";
  /** HTTP resources: the collection's path (default /messages) and the mix of operations (default DEFAULT_MIX). */
  collection?: string;
  mix?: Mix;
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
   * Threads that drive calls, each with its share of the concurrency, connections and rate (default 1). gRPC goes
   * through a raw HTTP/2 client of about 10 µs of CPU a call (node:http2's costs 70-80), so one thread drives
   * grpc-go on a core of its own; more threads use more cores. Needs the compiled harness (dist/).
   */
  threads?: number;
  /** Stops the run early (Ctrl-C), keeping what was measured. */
  signal?: AbortSignal;
  /** Called about once a second. */
  onProgress?: (p: LoadProgress) => void;
  /** Thresholds the run is judged against. */
  slo?: readonly SloTerm[];
  /** Connect, gRPC-Web and HTTP over an https:// URL: the CA to trust and the client certificate (files). */
  tls?: TlsOptions;
  /** Connect, gRPC-Web and HTTP: the Host header and TLS server name. */
  authority?: string;
  /** Connect and gRPC-Web: metadata sent as headers on every call (-bin values base64). */
  metadata?: Readonly<Record<string, string>>;
  /** HTTP resources: the key sent with every request, where apiKeyIn places it (default the X-API-Key header). */
  apiKey?: string;
  apiKeyIn?: ApiKeyPlacement;
}

export interface LoadProgress {
  elapsedMs: number;
  requests: number;
  errors: number;
  requestsPerSecond: number;
}



/** Distinct requests, each sent many times under load; their replies at rest are the reference. */
const BODIES = Array.from({ length: 16 }, (_, i) => (i === 0 ? "" : `load ${i} ${"é".repeat(i % 4)}`));
const MAX_DURATION_MS = 10 * 60_000;

const WORKER_FILE = join(PACKAGE_ROOT, "dist", "harness", "load", "load-worker.js");

/** A Connect, gRPC-Web or HTTP base URL: http://, or https:// for TLS. */
function httpBaseUrl(protocol: HttpRpcLoadProtocol | "http", text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConformanceError("usage", `--${protocol} ${text}: not a URL (http(s)://host:port[/prefix])`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ConformanceError("usage", `--${protocol} ${text}: load over ${protocol} speaks http:// or https://, not ${url.protocol}`);
  return url.href;
}

/** Where the API key goes: as given, else where check puts it (resolved by run-config). */
const keyPlacement = (options: LoadOptions): ApiKeyPlacement => resolveHttpTarget({ baseUrl: options.address, ...(options.apiKeyIn && { apiKeyIn: options.apiKeyIn }) }).apiKeyIn;

/** What every exchange of an HTTP run carries: TLS material (read once), the authority, metadata or the API key. */
function httpWire(options: LoadOptions, protocol: HttpRpcLoadProtocol | "http"): HttpWire {
  const key = options.apiKey;
  const placement = key === undefined ? undefined : keyPlacement(options);
  const headers: Record<string, string> = protocol === "http" ? {} : metadataHeaders(options.metadata ?? {});
  if (key !== undefined && placement?.in === "header") headers[placement.name.toLowerCase()] = placement.scheme !== undefined ? `${placement.scheme} ${key}` : key;
  return {
    ...(options.tls && { tls: loadTls(options.tls) }),
    ...(options.authority !== undefined && { authority: options.authority }),
    headers,
    ...(key !== undefined && placement?.in === "query" && { query: `${encodeURIComponent(placement.name)}=${encodeURIComponent(key)}` }),
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
          worker.once("message", ({ histogram, corrected, ...m }: WorkerResult) => {
            signal?.removeEventListener("abort", stop);
            resolve({ ...m, histogram: decodeFromCompressedBase64(histogram), ...(corrected !== undefined && { corrected: decodeFromCompressedBase64(corrected) }) });
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
  const timeoutMs = options.timeoutMs ?? 5000;
  const protocol = options.protocol ?? "grpc";
  if (protocol === "http") return runResourceLoad(options, threads, timeoutMs);
  const http = protocol === "grpc" ? undefined : { protocol, baseUrl: httpBaseUrl(protocol, options.address) };
  const wire = protocol === "grpc" ? undefined : httpWire(options, protocol);
  const address = http ? parseAddress(new URL(http.baseUrl).host) : parseAddress(options.address);
  if (!http) await probeReachable({ address: options.address, timeoutMs });
  const requests = BODIES.map((b) => Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage(b) }])));

  // At rest: one call at a time on a connection of its own, each request's reply recorded.
  // A call the server answers with an error is a finding of the run (its status counted under load), not an
  // unreachable target; only a call that got no answer at all is.
  const atRest: (Buffer | null)[] = [];
  const errors: Record<string, number> = {};
  const shed: Record<string, number> = {};
  const rest = restCaller({ address, requests, bodies: BODIES, atRest: [], concurrency: 1, connections: 1, timeoutMs, durationMs: options.durationMs, ...(http && { http }), ...(wire && { wire }) });
  try {
    for (const i of requests.keys()) {
      const res = await rest.call(0, i, i);
      if (!res.answered) {
        throw new ConformanceError("unreachable", `${options.address}: Hello at rest failed for ${JSON.stringify(BODIES[i])}: ${statusText(res.code, res.details)}`);
      }
      atRest.push(res.code === 0 && res.reply ? res.reply : null);
      const counts = isShed(res) ? shed : errors;
      if (res.code !== 0) counts[statusName(res.code)] = (counts[statusName(res.code)] ?? 0) + 1;
    }
  } finally {
    rest.close();
  }

  const specs = driverSpecs(options, threads, { address, requests, bodies: BODIES, atRest, timeoutMs, durationMs: options.durationMs, ...(http && { http }), ...(wire && { wire }) });
  const results = await runDrivers(specs, options);
  return report(options, threads, results, { errors, shed, distinctRequests: requests.length });
}

/** `load --http`: no Hello; a mix of resource operations, each read compared with what the run last wrote there. */
async function runResourceLoad(options: LoadOptions, threads: number, timeoutMs: number): Promise<LoadReport> {
  if (threads !== 1) throw new ConformanceError("usage", `--threads ${threads}: only a gRPC run drives from several threads`);
  const base = httpBaseUrl("http", options.address);
  const collectionUrl = new URL((options.collection ?? "/messages").replace(/^\/?/, "/"), base).href;
  const mix = options.mix ?? DEFAULT_MIX;
  const wire = httpWire(options, "http");
  // A target that wants a key not given, or refuses the one given: exit 5 before the run, as check does.
  await probeResourceCredentials(collectionUrl, {
    wire,
    wireFor: (placement) => httpWire({ ...options, apiKeyIn: placement }, "http"),
    timeoutMs,
    keyGiven: options.apiKey !== undefined,
    placement: keyPlacement(options),
  });
  const address = parseAddress(new URL(base).host);
  const specs = driverSpecs(options, 1, { address, requests: [new Uint8Array(5)], bodies: [""], atRest: [null], timeoutMs, durationMs: options.durationMs, resources: { collectionUrl, mix }, wire });
  const results = await runDrivers(specs, options);
  const created = results.reduce((n, r) => n + (r.resources?.created ?? 0), 0);
  const leftBehind = results.reduce((n, r) => n + (r.resources?.leftBehind ?? 0), 0);
  return { ...report(options, 1, results, { errors: {}, shed: {}, distinctRequests: created }), mix, resources: { collection: collectionUrl, created, leftBehind } };
}

type SpecBase = Omit<DriveSpec, "concurrency" | "connections" | "rate">;

/** Each driver's share of the concurrency, connections and rate. */
function driverSpecs(options: LoadOptions, threads: number, base: SpecBase): DriveSpec[] {
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

/** Runs the drivers, in this thread or in worker threads, with the progress line. */
async function runDrivers(specs: DriveSpec[], options: LoadOptions): Promise<DriveResult[]> {
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
  return results;
}

/** The report from the drivers' results, with what the calls at rest counted. */
function report(options: LoadOptions, threads: number, results: DriveResult[], atRest: { errors: Record<string, number>; shed: Record<string, number>; distinctRequests: number }): LoadReport {
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
    connections: options.connections,
    threads,
    ...(options.rate !== undefined && { rate: options.rate, unsent }),
    requests: done,
    histogram,
    ...(corrected && { corrected }),
    errors,
    shed,
    ...(reconnections > 0 && { reconnections }),
    stateless: { distinctRequests: atRest.distinctRequests, compared, mismatches, ...(example !== undefined && { example }) },
    interrupted: options.signal?.aborted === true,
    slo: options.slo ?? [],
  });
}
