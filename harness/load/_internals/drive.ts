// The load loop itself: calls kept in flight until a deadline, counted and timed. It runs
// in the CLI's thread, or in each worker thread of a --threads run.
import { build as buildHistogram, type Histogram } from "hdr-histogram-js";
import type { ParsedAddress } from "../../targets/address.js";
import { Status, statusName } from "../../protocols/rpc.js";
import { call, openConnection } from "./h2-rest-call.js";
import { rawGrpcCaller } from "./raw-grpc-caller.js";
import { resourceCaller, type Mix } from "./resource-caller.js";

type ResourceCaller = ReturnType<typeof resourceCaller>;
import {
  callResultOf,
  httpRpcCall,
  httpRpcRequest,
  openPool,
  type HttpRpcLoadProtocol,
  type HttpRpcRequest,
  type HttpWire,
} from "./http-rpc-call.js";
import { h2RpcCaller } from "./h2-rpc-call.js";
import { rawH1Caller } from "./raw-h1-caller.js";
import { MAX_LOAD_REPLY_BYTES } from "../../wire/bounds.js";
import { tlsConnectOptions } from "../../wire/tls.js";

/** The HTTP version a Connect or gRPC-Web run speaks. */
export type HttpVersion = "1.1" | "2";

export type { CallResult } from "./call-result.js";
import type { CallResult } from "./call-result.js";

/** A refusal that sheds load: the server said it has no room for the call now, not that the call failed. */
export const isShed = (r: CallResult): boolean => r.answered && r.code === Status.RESOURCE_EXHAUSTED;

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
  /**
   * Connect or gRPC-Web at this base URL, instead of gRPC at address: over HTTP/2 ("2": h2 by ALPN over TLS, h2c
   * otherwise) on `connections` sessions, or over HTTP/1.1 on as many keep-alive connections as calls in flight.
   */
  http?: { protocol: HttpRpcLoadProtocol; baseUrl: string; version: HttpVersion };
  /** HTTP resources: a mix of operations on messages the run creates in this collection, instead of Hello. */
  resources?: { collectionUrl: string; mix: Mix };
  /** Connect, gRPC-Web and HTTP resources: TLS, authority, metadata or API key on every exchange. */
  wire?: HttpWire;
}

/** How a driver makes call number k's slot w send request i: one way per protocol. */
interface Caller {
  /** Slot w's k-th call, which sends distinct request i. */
  call(w: number, i: number, k: number): Promise<CallResult>;
  close(): void | Promise<void>;
}

/**
 * gRPC under load: the raw HTTP/2 client (`harness/wire/raw-h2-client.ts`), each distinct request's bytes as they are.
 */
function grpcCaller(spec: DriveSpec): Caller & { sweep(now: number): void; counts: { reconnections: number } } {
  const raw = rawGrpcCaller(spec.address, spec.connections, spec.concurrency, spec.timeoutMs);
  const bodies = spec.requests.map((r) => Buffer.from(r.buffer, r.byteOffset, r.byteLength));
  return { call: (w, i) => raw.call(w, bodies[i] as Buffer), sweep: raw.sweep, close: raw.close, counts: raw.counts };
}

/**
 * Connect or gRPC-Web: over HTTP/2 sessions, or over HTTP/1.1 with a connection for each call in flight (the raw
 * HTTP/1.1 client; the replies at rest, `atRest`, through the pool, a client apart).
 */
function httpRpcCaller(
  spec: DriveSpec,
  how: NonNullable<DriveSpec["http"]>,
  atRest = false,
): Caller & { readonly reconnections: number } {
  const base = new URL(how.baseUrl);
  const requests = spec.requests.map((r) => httpRpcRequest(how.protocol, base, r.subarray(5)));
  if (how.version === "2") {
    const target = { address: spec.address, tls: base.protocol === "https:", wire: spec.wire ?? {} };
    const h2 = h2RpcCaller(target, spec.connections, how.protocol, requests, spec.timeoutMs);
    return {
      call: (w, i) => h2.call(w, i),
      close: () => h2.close(),
      get reconnections() {
        return h2.reconnections;
      },
    };
  }
  // HTTP/1.1 carries one call at a time on a connection: as many keep-alive connections as calls in flight, on the
  // raw HTTP/1.1 client, or through the pool (undici) for the replies at rest and for a request it cannot write.
  const wire = spec.wire ?? {};
  const tls = base.protocol === "https:" ? tlsConnectOptions({ material: wire.tls, serverName: wire.authority }) : {};
  const raw = atRest
    ? undefined
    : rawH1Caller({ origin: base, tls }, wire, requests, spec.concurrency, spec.timeoutMs, MAX_LOAD_REPLY_BYTES);
  if (raw !== undefined)
    return {
      call: async (w, i) => callResultOf(how.protocol, await raw.call(w, i), spec.timeoutMs),
      close: () => raw.close(),
      reconnections: 0,
    };
  const pool = openPool(base, spec.concurrency, spec.wire);
  return {
    call: (_w, i) => httpRpcCall(how.protocol, base, pool, requests[i] as HttpRpcRequest, spec.timeoutMs, spec.wire),
    close: () => pool.close(),
    reconnections: 0,
  };
}

/**
 * A caller for calls made one at a time (the replies at rest), on a connection of its own; for gRPC, replaced for
 * the next call when the server ends it (`reconnections`, as a drive's: not errors).
 */
export function restCaller(spec: DriveSpec): Caller & { readonly reconnections: number } {
  if (spec.http) return httpRpcCaller({ ...spec, concurrency: 1, connections: 1 }, spec.http, true);
  const connection = openConnection(spec.address);
  return {
    call: (_w, i) => call(connection, Buffer.from(spec.requests[i] as Uint8Array), spec.timeoutMs),
    close: () => connection.close(),
    get reconnections() {
      return connection.reconnections;
    },
  };
}

export interface DriveResult {
  /** Microseconds from each call's send to its end. */
  histogram: Histogram;
  /**
   * With a rate (the open model): microseconds from each call's scheduled send to its end, so that a server that
   * stalls is charged for the calls that waited behind the stall (coordinated omission corrected).
   */
  corrected?: Histogram;
  /** With a rate: calls due before the end that never started, every slot held by a slower call. */
  unsent: number;
  /** From the first call started to the last one ended: a worker thread's start-up is not part of it. */
  elapsedMs: number;
  requests: number;
  failed: number;
  errors: Record<string, number>;
  /** Calls refused to shed load (RESOURCE_EXHAUSTED), by status name: counted apart from errors. */
  shed: Record<string, number>;
  compared: number;
  mismatches: number;
  example?: string;
  /** HTTP resources: messages created, and those the run could not delete at its end. */
  resources?: { created: number; leftBehind: number };
  /** gRPC: connections opened to replace one the server ended (GOAWAY) or that failed. Not errors. */
  reconnections: number;
}

/** How often a driver looks for calls past their deadline. */
const SWEEP_MS = 50;

export const newHistogram = (): Histogram =>
  buildHistogram({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 10 * 60 * 1_000_000,
    numberOfSignificantValueDigits: 3,
  });

/** The driver's caller for its spec, with the gRPC, HTTP and resource callers' own handles (sweep, counts, finish). */
function callersOf(spec: DriveSpec) {
  const grpc = spec.http || spec.resources ? undefined : grpcCaller(spec);
  const r = spec.resources;
  const resources =
    r && resourceCaller(r.collectionUrl, r.mix, spec.concurrency, spec.connections, spec.timeoutMs, spec.wire);
  const http = spec.http && !spec.resources ? httpRpcCaller(spec, spec.http) : undefined;
  const caller: Caller = grpc ??
    http ?? { call: (w, _i, k) => (resources as ResourceCaller).call(w, k), close: () => undefined };
  return { caller, grpc, http, resources };
}

/**
 * Keeps spec.concurrency calls in flight until spec.durationMs has passed or stopped() says so. progress[0] and
 * progress[1] count calls and failures as they end: a shared array when the driver is a worker thread.
 */
export async function drive(spec: DriveSpec, stopped: () => boolean, progress: Int32Array): Promise<DriveResult> {
  const { caller, grpc, http, resources } = callersOf(spec);
  const atRest = spec.atRest.map((r) => (r === null ? undefined : Buffer.from(r.buffer, r.byteOffset, r.byteLength)));
  const histogram = newHistogram();
  const corrected = spec.rate === undefined ? undefined : newHistogram();
  const result: DriveResult = {
    histogram,
    ...(corrected && { corrected }),
    unsent: 0,
    elapsedMs: 0,
    requests: 0,
    failed: 0,
    errors: {},
    shed: {},
    compared: 0,
    mismatches: 0,
    reconnections: 0,
  };
  let started = 0;
  const t0 = performance.now();
  const end = t0 + spec.durationMs;
  const over = () => stopped() || performance.now() >= end;
  // One sweep cancels the gRPC calls past their deadline: a call is cancelled at most SWEEP_MS after it.
  const sweep = grpc && setInterval(() => grpc.sweep(performance.now()), Math.min(SWEEP_MS, spec.timeoutMs));
  const worker = async (w: number) => {
    for (let k = w; !over(); k += spec.concurrency) {
      let due = 0;
      if (spec.rate !== undefined) {
        // The n-th call of the run is scheduled n / rate seconds in, and starts no earlier.
        due = t0 + (started / spec.rate) * 1000;
        if (due >= end) break;
        started++;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (over()) {
          started--;
          break;
        }
      }
      const i = k % spec.requests.length;
      const callStart = performance.now();
      const res = await caller.call(w, i, k);
      const ended = performance.now();
      histogram.recordValue(Math.max(1, Math.round((ended - callStart) * 1000)));
      // From its scheduled send, or from its start when a timer woke a fraction of a millisecond early: corrected is
      // never shorter than uncorrected.
      corrected?.recordValue(Math.max(1, Math.round((ended - Math.min(due, callStart)) * 1000)));
      tally(result, res, progress, atRest[i], spec.bodies[i]);
    }
  };
  try {
    await Promise.all(Array.from({ length: spec.concurrency }, (_, w) => worker(w)));
  } finally {
    if (sweep) clearInterval(sweep);
    await caller.close();
  }
  // The clean-up after the run is not part of its time.
  const elapsedMs = performance.now() - t0;
  if (resources) addResourceCounts(result, await resources.finish());
  result.elapsedMs = elapsedMs;
  result.reconnections = grpc?.counts.reconnections ?? http?.reconnections ?? 0;
  if (spec.rate !== undefined && !stopped()) {
    // Calls the schedule put before the end: the first at 0, one every 1/rate s.
    const due = Math.ceil((spec.durationMs * spec.rate) / 1000);
    result.unsent = Math.max(0, due - started);
  }
  return result;
}

/**
 * One call's outcome counted: a request, an error or a shed call by its name, or a reply compared with the one at rest.
 */
function tally(
  result: DriveResult,
  res: CallResult,
  progress: Int32Array,
  rest: Buffer | undefined,
  body: unknown,
): void {
  result.requests++;
  Atomics.add(progress, 0, 1);
  if (res.code !== 0) {
    const name = res.label ?? statusName(res.code);
    const counts = isShed(res) ? result.shed : result.errors;
    counts[name] = (counts[name] ?? 0) + 1;
    if (counts === result.errors) {
      result.failed++;
      Atomics.add(progress, 1, 1);
    }
    return;
  }
  if (rest === undefined) return;
  result.compared++;
  if (!res.reply?.equals(rest)) {
    result.mismatches++;
    result.example ??=
      `request ${JSON.stringify(body)}: reply at rest ${rest.toString("hex")}, under load ` +
      `${res.reply?.toString("hex") ?? "none"}`;
  }
}

/** What the resource caller compared and left behind, added to the run's counts. */
function addResourceCounts(
  result: DriveResult,
  counts: Awaited<ReturnType<ReturnType<typeof resourceCaller>["finish"]>>,
): void {
  result.compared += counts.compared;
  result.mismatches += counts.mismatches;
  if (counts.example !== undefined) result.example ??= counts.example;
  result.resources = { created: counts.created, leftBehind: counts.leftBehind };
}
