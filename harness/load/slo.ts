// Service-level objectives for a load run (`--slo p99<20ms,errors<0.1%`): parsed once, judged against the figures,
// each term reported with its figure and its threshold side by side.
import { ConformanceError } from "../errors.js";

export type SloMetric = "latency" | "errors" | "shed" | "rps";
export type SloOperator = "<" | "<=" | ">" | ">=";

export interface SloTerm {
  /** As written, for the report. */
  text: string;
  metric: SloMetric;
  /** For latency: the percentile (0-100), or "max" or "mean". */
  statistic?: number | "max" | "mean";
  op: SloOperator;
  /** Milliseconds for latency, a percentage for errors and shed, calls a second for rps. */
  threshold: number;
}

/** The figures an SLO is judged on. */
export interface SloFigures {
  /** Milliseconds at a percentile, or the max or mean. */
  latency(statistic: number | "max" | "mean"): number;
  /** Which latencies those are: "corrected" (from each call's scheduled send) or "measured" (from its send). */
  latencyKind: "corrected" | "measured";
  requests: number;
  errors: number;
  shed: number;
  requestsPerSecond: number;
}

export interface SloResult {
  term: string;
  /** The figure, in the term's unit. */
  figure: number;
  unit: "ms" | "%" | "/s";
  threshold: number;
  met: boolean;
  /** A note on what the figure is (corrected latency, errors of how many calls). */
  of: string;
}

const MAX_SLO_LENGTH = 1024;
const MAX_TERMS = 32;
const TERM =
  /^(p(?:100|\d{1,2}(?:\.\d{1,4})?)|max|mean|errors|shed|rps)\s*(<=|>=|<|>)\s*(\d+(?:\.\d+)?)\s*(ms|us|µs|s|%)?$/;
const LATENCY_UNIT_MS: Readonly<Record<string, number>> = { us: 0.001, µs: 0.001, ms: 1, s: 1000 };

/** Parses `p99<20ms,errors<0.1%,rps>=1000`; `source` names where it came from (--slo, or a file and key). */
export function parseSlo(text: string, source: string): SloTerm[] {
  if (text.length > MAX_SLO_LENGTH)
    throw new ConformanceError(
      "usage",
      `${source}: ${text.length} characters, more than an SLO needs (at most ${MAX_SLO_LENGTH})`,
    );
  const parts = text.split(",").map((p) => p.trim());
  if (parts.length > MAX_TERMS)
    throw new ConformanceError("usage", `${source}: ${parts.length} terms, at most ${MAX_TERMS}`);
  return parts.map((part) => parseTerm(part, source));
}

function parseTerm(part: string, source: string): SloTerm {
  const m = TERM.exec(part);
  const expected = "expected terms like p99<20ms, max<1s, errors<0.1%, shed<5%, rps>=1000, joined by commas";
  if (!m) throw new ConformanceError("usage", `${source}: ${JSON.stringify(part)} is not a threshold: ${expected}`);
  const [, name = "", op = "<", number = "", unit] = m;
  const value = Number(number);
  if (name === "errors" || name === "shed") {
    if (unit !== "%")
      throw new ConformanceError(
        "usage",
        `${source}: ${part}: ${name} is a share of the calls: write it as a percentage (${name}<${number}%)`,
      );
    if (value > 100) throw new ConformanceError("usage", `${source}: ${part}: a percentage is at most 100`);
    return { text: part, metric: name, op: op as SloOperator, threshold: value };
  }
  if (name === "rps") {
    if (unit !== undefined)
      throw new ConformanceError("usage", `${source}: ${part}: rps is calls a second, a plain number (rps>=${number})`);
    return { text: part, metric: "rps", op: op as SloOperator, threshold: value };
  }
  const scale = unit === undefined ? undefined : LATENCY_UNIT_MS[unit];
  if (scale === undefined)
    throw new ConformanceError(
      "usage",
      `${source}: ${part}: a latency needs its unit: us, ms or s (${name}${op}${number}ms)`,
    );
  const statistic = name === "max" || name === "mean" ? name : Number(name.slice(1));
  return { text: part, metric: "latency", statistic, op: op as SloOperator, threshold: value * scale };
}

const holds = (figure: number, op: SloOperator, threshold: number): boolean =>
  op === "<"
    ? figure < threshold
    : op === "<="
      ? figure <= threshold
      : op === ">"
        ? figure > threshold
        : figure >= threshold;

/** Every term judged; a share of no calls at all is not met (a run that made no call proves nothing). */
export function judgeSlo(terms: readonly SloTerm[], f: SloFigures): SloResult[] {
  return terms.map((term) => {
    if (term.metric === "latency") {
      const figure = f.latency(term.statistic ?? "max");
      return {
        term: term.text,
        figure,
        unit: "ms",
        threshold: term.threshold,
        met: f.requests > 0 && holds(figure, term.op, term.threshold),
        of: `${f.latencyKind} latency`,
      };
    }
    if (term.metric === "rps")
      return {
        term: term.text,
        figure: f.requestsPerSecond,
        unit: "/s",
        threshold: term.threshold,
        met: holds(f.requestsPerSecond, term.op, term.threshold),
        of: "calls a second",
      };
    const count = term.metric === "errors" ? f.errors : f.shed;
    const figure = f.requests === 0 ? 0 : Number(((count / f.requests) * 100).toFixed(4));
    return {
      term: term.text,
      figure,
      unit: "%",
      threshold: term.threshold,
      met: f.requests > 0 && holds(figure, term.op, term.threshold),
      of: `${count} of ${f.requests} calls`,
    };
  });
}
