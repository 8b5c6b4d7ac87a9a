// What a load run (or several merged) reports: figures from its histograms, errors apart from shed calls, the
// statelessness comparison, the SLO verdict, and the histograms themselves in HdrHistogram's encoded form.
import type { Histogram } from "hdr-histogram-js";
import { encodeHistogram, latencyAt, latencyFigures, type LatencyFigures } from "./histograms.js";
import { judgeSlo, type SloResult, type SloTerm } from "./slo.js";
import type { MemoryGrowth } from "./memory-growth.js";

/**
 * What a load run tells its reporters (harness/reporters/load-*.ts): its progress about once a second, its report at
 * the end.
 */
export interface LoadReporter {
  onProgress?(progress: { elapsedMs: number; requests: number; errors: number; requestsPerSecond: number }): void;
  onLoadEnd?(report: LoadReport): void | Promise<void>;
}

export interface LoadReport {
  target: string;
  durationMs: number;
  concurrency: number;
  /** Connections the calls went over: for Connect and gRPC-Web over HTTP/1.1, one per call in flight. */
  connections: number;
  /** Connect and gRPC-Web: the HTTP version spoken, "2" (h2 by ALPN over TLS, or h2c by prior knowledge) or "1.1". */
  httpVersion?: "1.1" | "2";
  /** A merged report: every HTTP version its runs spoke (httpVersion too when there is one). */
  httpVersions?: ("1.1" | "2")[];
  threads: number;
  /** The open model's schedule, calls a second; absent for a closed run (as fast as the target answers). */
  rate?: number;
  /** With a rate: calls the schedule put before the end that never started, every slot held by a slower call. */
  unsent?: number;
  requests: number;
  requestsPerSecond: number;
  /** Milliseconds from each call's send to its end. */
  latencyMs: LatencyFigures;
  /**
   * With a rate: milliseconds from each call's scheduled send to its end (coordinated omission corrected): a call
   * that waited for a slot behind a stalled one is charged for the wait.
   */
  correctedLatencyMs?: LatencyFigures;
  /** Calls that did not end OK, by status name, shed calls apart. */
  errors: Record<string, number>;
  /** Calls refused to shed load (RESOURCE_EXHAUSTED; HTTP 429 or 503 with Retry-After), by status: not errors. */
  shed: Record<string, number>;
  /**
   * Connections opened to replace one the server ended (GOAWAY, a maximum age) or that failed; its unprocessed calls
   * were sent again. Not errors.
   */
  reconnections?: number;
  /** Replies under load compared with the reply to the same request at rest. */
  stateless: { distinctRequests: number; compared: number; mismatches: number; example?: string };
  /** Whether the run was stopped early. */
  interrupted: boolean;
  /** Each threshold with its figure; empty without --slo. */
  slo: SloResult[];
  /** HdrHistogram's compressed base64 encoding, of microseconds: `load merge` adds these up. */
  histograms: { unit: "microseconds"; latency: string; corrected?: string };
  /** The files a merged report came from. */
  mergedFrom?: string[];
  /**
   * The load process's memory, sampled once a second through the run and once at its end, in MiB: resident set (all
   * threads) and the main thread's heap in use (the samples are absent from a merged report), and how much each grew
   * from the run's first half to its second (memory-growth.ts); a merged report's is its runs' worst.
   */
  memory?: {
    rssMiB?: number[];
    heapUsedMiB?: number[];
    growthMiB: MemoryGrowth;
    /**
     * The main thread's heap in use just after each of V8's mark-compacts in the run: the live heap, which a structure
     * growing with the calls raises and V8's saw-tooth does not. Absent from a merged report.
     */
    heapAfterMarkCompactMiB?: number[];
    /** A merged report: the file of the run whose resident set grew the most. */
    worstRun?: string;
  };
  /**
   * `load --http`: the mix of operations (weights), and the messages the run created and could not delete at its end.
   */
  mix?: Readonly<Record<string, number>>;
  resources?: { collection: string; created: number; leftBehind: number };
}

/** What a run counted, before its figures are worked out. */
export type LoadTotals = Pick<
  LoadReport,
  | "target"
  | "concurrency"
  | "connections"
  | "httpVersion"
  | "httpVersions"
  | "threads"
  | "rate"
  | "unsent"
  | "requests"
  | "errors"
  | "reconnections"
  | "stateless"
  | "interrupted"
  | "mergedFrom"
  | "memory"
> & {
  /** Unrounded. */
  durationMs: number;
  histogram: Histogram;
  corrected?: Histogram;
  shed?: Record<string, number>;
  slo: readonly SloTerm[];
};

const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);

/** The report of a run from its totals: figures, the SLO judged (latency on corrected figures where there are). */
export function buildLoadReport(t: LoadTotals): LoadReport {
  const shed = t.shed ?? {};
  const requestsPerSecond = t.durationMs > 0 ? Math.round((t.requests / t.durationMs) * 1000) : 0;
  const judged = t.corrected ?? t.histogram;
  const slo = judgeSlo(t.slo, {
    latency: (s) => latencyAt(judged, s),
    latencyKind: t.corrected ? "corrected" : "measured",
    requests: t.requests,
    errors: sum(t.errors),
    shed: sum(shed),
    requestsPerSecond,
  });
  return {
    target: t.target,
    durationMs: Math.round(t.durationMs),
    concurrency: t.concurrency,
    connections: t.connections,
    ...(t.httpVersion !== undefined && { httpVersion: t.httpVersion }),
    ...(t.httpVersions !== undefined && { httpVersions: t.httpVersions }),
    threads: t.threads,
    ...(t.rate !== undefined && { rate: t.rate, unsent: t.unsent ?? 0 }),
    requests: t.requests,
    requestsPerSecond,
    latencyMs: latencyFigures(t.histogram),
    ...(t.corrected && { correctedLatencyMs: latencyFigures(t.corrected) }),
    errors: t.errors,
    shed,
    ...(t.reconnections !== undefined && t.reconnections > 0 && { reconnections: t.reconnections }),
    stateless: t.stateless,
    interrupted: t.interrupted,
    slo,
    histograms: {
      unit: "microseconds",
      latency: encodeHistogram(t.histogram),
      ...(t.corrected && { corrected: encodeHistogram(t.corrected) }),
    },
    ...(t.mergedFrom && { mergedFrom: t.mergedFrom }),
    ...(t.memory && { memory: t.memory }),
  };
}

/**
 * Why a run fails, if it does: errors, a reply under load that differs from the one at rest, nothing compared at
 * all (a run that judged nothing never passes), or a threshold missed. Shed calls alone fail nothing but an SLO
 * on them.
 */
export function loadFailures(r: LoadReport): string[] {
  const why: string[] = [];
  if (Object.keys(r.errors).length > 0) why.push("errors");
  if (r.stateless.mismatches > 0) why.push("replies under load differ from replies at rest");
  if (r.stateless.compared === 0) why.push("statelessness not judged");
  if (r.slo.some((s) => !s.met)) why.push("a threshold missed");
  return why;
}
