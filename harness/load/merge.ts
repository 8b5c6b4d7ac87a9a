// `load merge A.json B.json ...`: runs taken at the same time from several machines, as one set of figures and one
// SLO verdict. Latencies are merged from the runs' whole histograms (percentiles cannot be averaged); calls a second
// are all calls over the longest run's time.
import { readFile, stat } from "node:fs/promises";
import { Ajv } from "ajv";
import { ConformanceError } from "../errors.js";
import { decodeHistogram } from "./histograms.js";
import { buildLoadReport, type LoadReport } from "./load-report.js";
import { memoryGrowth, type MemoryGrowth } from "./memory-growth.js";
import type { SloTerm } from "./slo.js";

const MAX_FILES = 256;
const MAX_FILE_BYTES = 16 << 20;

const count = { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
const counts = { type: "object", maxProperties: 64, additionalProperties: count } as const;
const text = { type: "string", maxLength: 4096 } as const;
const version = { enum: ["1.1", "2"] } as const;
/** MiB: a run of at most 10 minutes has about 600 samples. */
const mib = { type: "number", minimum: -(1 << 20), maximum: 1 << 20 } as const;
const samples = { type: "array", maxItems: 4096, items: mib } as const;
const memory = {
  type: "object",
  properties: {
    rssMiB: samples,
    heapUsedMiB: samples,
    growthMiB: { type: "object", required: ["rss", "heapUsed"], properties: { rss: mib, heapUsed: mib } },
    worstRun: text,
  },
} as const;

/** What merge reads of a report: what it adds up. Anything else in the file is left alone. */
const SCHEMA = {
  type: "object",
  required: [
    "target",
    "durationMs",
    "concurrency",
    "connections",
    "threads",
    "requests",
    "errors",
    "stateless",
    "interrupted",
    "histograms",
  ],
  properties: {
    target: text,
    durationMs: count,
    concurrency: count,
    connections: count,
    httpVersion: version,
    httpVersions: { type: "array", maxItems: 2, items: version },
    threads: count,
    rate: count,
    unsent: count,
    requests: count,
    reconnections: count,
    errors: counts,
    shed: counts,
    stateless: {
      type: "object",
      required: ["distinctRequests", "compared", "mismatches"],
      properties: { distinctRequests: count, compared: count, mismatches: count, example: text },
    },
    interrupted: { type: "boolean" },
    histograms: {
      type: "object",
      required: ["unit", "latency"],
      properties: { unit: { const: "microseconds" }, latency: { type: "string" }, corrected: { type: "string" } },
    },
    memory,
  },
} as const;

const validate = new Ajv({ allErrors: false, strict: false }).compile<
  Pick<
    LoadReport,
    | "target"
    | "durationMs"
    | "concurrency"
    | "connections"
    | "httpVersion"
    | "httpVersions"
    | "threads"
    | "rate"
    | "unsent"
    | "requests"
    | "reconnections"
    | "errors"
    | "shed"
    | "stateless"
    | "interrupted"
    | "histograms"
    | "memory"
  >
>(SCHEMA);

async function readReport(file: string) {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (err) {
    throw new ConformanceError(
      "usage",
      `load merge ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  if (size > MAX_FILE_BYTES)
    throw new ConformanceError(
      "usage",
      `load merge ${file}: ${size} bytes, more than a load report (at most ${MAX_FILE_BYTES})`,
    );
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    throw new ConformanceError(
      "usage",
      `load merge ${file}: not JSON (${err instanceof SyntaxError ? "a syntax error" : String(err)})`,
    );
  }
  if (!validate(value)) {
    const e = validate.errors?.[0];
    throw new ConformanceError(
      "usage",
      `load merge ${file}: not a report of load --json: ${e?.instancePath || "(the document)"} ` +
        `${e?.message ?? "is not valid"}`,
    );
  }
  return value;
}

const add = (into: Record<string, number>, from: Record<string, number> | undefined) => {
  for (const [k, n] of Object.entries(from ?? {})) into[k] = (into[k] ?? 0) + n;
};

type ReadReport = { file: string; report: Awaited<ReturnType<typeof readReport>> };

/** Closed runs (no --rate) and open ones measure latency from different starts: they are not merged. */
function refuseMixedRuns(reports: readonly ReadReport[], open: readonly ReadReport[]): void {
  if (open.length === 0 || open.length === reports.length) return;
  const closed = reports.find((r) => r.report.histograms.corrected === undefined);
  throw new ConformanceError(
    "usage",
    `load merge: ${closed?.file} is a closed run (no --rate) and ${open[0]?.file} an open one: their latencies ` +
      `are measured from different starts and do not add up`,
  );
}

/** The sums a merge starts from. */
const NO_TOTALS = {
  durationMs: 0,
  concurrency: 0,
  connections: 0,
  threads: 0,
  rate: 0,
  unsent: 0,
  requests: 0,
  reconnections: 0,
};

/** One run's statelessness figures added to the merged ones (distinct requests: the largest; the first example). */
function addStateless(into: LoadReport["stateless"], from: LoadReport["stateless"]): void {
  into.distinctRequests = Math.max(into.distinctRequests, from.distinctRequests);
  into.compared += from.compared;
  into.mismatches += from.mismatches;
  if (from.example !== undefined) into.example ??= from.example;
}

/** The HTTP versions the runs spoke, in the order first met: a merged report's are its runs' own. */
function versionsOf(reports: readonly ReadReport[]): Pick<LoadReport, "httpVersion" | "httpVersions"> {
  const versions = new Set<"1.1" | "2">();
  for (const { report: r } of reports) {
    for (const v of r.httpVersions ?? (r.httpVersion === undefined ? [] : [r.httpVersion])) versions.add(v);
  }
  const [only] = versions;
  if (only === undefined) return {};
  return { ...(versions.size === 1 && { httpVersion: only }), httpVersions: [...versions] };
}

/**
 * The runs' worst memory growth, each run's worked out from its samples (a merged report, which has none, gives its
 * own worst), and the file of the run whose resident set grew the most.
 */
function worstMemory(reports: readonly ReadReport[]): Pick<LoadReport, "memory"> {
  let worst: { growthMiB: MemoryGrowth; worstRun: string } | undefined;
  for (const { file, report: r } of reports) {
    const m = r.memory;
    const growth =
      m?.rssMiB !== undefined && m.heapUsedMiB !== undefined
        ? memoryGrowth({ rssMiB: m.rssMiB, heapUsedMiB: m.heapUsedMiB })
        : m?.growthMiB;
    if (growth === undefined) continue;
    const heapUsed = Math.max(worst?.growthMiB.heapUsed ?? growth.heapUsed, growth.heapUsed);
    worst =
      worst === undefined || growth.rss > worst.growthMiB.rss
        ? { growthMiB: { rss: growth.rss, heapUsed }, worstRun: file }
        : { ...worst, growthMiB: { rss: worst.growthMiB.rss, heapUsed } };
  }
  return worst === undefined ? {} : { memory: worst };
}

export async function mergeLoadReports(files: readonly string[], slo: readonly SloTerm[]): Promise<LoadReport> {
  if (files.length === 0)
    throw new ConformanceError("usage", "load merge: name the reports to merge (files written by load --json)");
  if (files.length > MAX_FILES)
    throw new ConformanceError("usage", `load merge: ${files.length} files, at most ${MAX_FILES}`);
  const reports = [];
  for (const file of files) reports.push({ file, report: await readReport(file) });
  const open = reports.filter((r) => r.report.histograms.corrected !== undefined);
  refuseMixedRuns(reports, open);
  const [first] = reports;
  if (!first) throw new ConformanceError("usage", "load merge: nothing to merge");
  const histogram = decodeHistogram(first.report.histograms.latency, `load merge ${first.file}: histograms.latency`);
  const corrected =
    open.length > 0
      ? decodeHistogram(first.report.histograms.corrected, `load merge ${first.file}: histograms.corrected`)
      : undefined;
  const errors: Record<string, number> = {};
  const shed: Record<string, number> = {};
  const stateless = { distinctRequests: 0, compared: 0, mismatches: 0 } as LoadReport["stateless"];
  const targets = new Set<string>();
  let totals = { ...NO_TOTALS };
  for (const [i, { file, report: r }] of reports.entries()) {
    if (i > 0) {
      histogram.add(decodeHistogram(r.histograms.latency, `load merge ${file}: histograms.latency`));
      if (corrected) corrected.add(decodeHistogram(r.histograms.corrected, `load merge ${file}: histograms.corrected`));
    }
    targets.add(r.target);
    totals = {
      durationMs: Math.max(totals.durationMs, r.durationMs),
      concurrency: totals.concurrency + r.concurrency,
      connections: totals.connections + r.connections,
      threads: totals.threads + r.threads,
      rate: totals.rate + (r.rate ?? 0),
      unsent: totals.unsent + (r.unsent ?? 0),
      requests: totals.requests + r.requests,
      reconnections: totals.reconnections + (r.reconnections ?? 0),
    };
    add(errors, r.errors);
    add(shed, r.shed);
    addStateless(stateless, r.stateless);
  }
  const { rate, unsent, ...rest } = totals;
  return buildLoadReport({
    ...rest,
    target: [...targets].join(", "),
    ...(corrected && { rate, unsent }),
    histogram,
    ...(corrected && { corrected }),
    errors,
    shed,
    stateless,
    interrupted: reports.some((r) => r.report.interrupted),
    slo,
    mergedFrom: [...files],
    ...versionsOf(reports),
    ...worstMemory(reports),
  });
}
