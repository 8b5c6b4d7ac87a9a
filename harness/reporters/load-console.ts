// `load`'s console reporter: a progress line a second on stderr while the run goes (redrawn in place on a terminal,
// one line a second in a log), then the figures, the statelessness verdict and the SLO terms on stdout.
import pc from "picocolors";
import { forTerminal as t } from "../_internals/neutralise.js";
import type { LatencyFigures } from "../load/histograms.js";
import type { LoadReport, LoadReporter } from "../load/load-report.js";

export interface LoadConsoleOptions {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Colour on stdout. */
  color: boolean;
  /** stderr is a terminal: the progress line is redrawn in place. */
  live: boolean;
  /** --quiet: no progress line. */
  quiet: boolean;
}

/** The console reporter of a load run (and of `load merge`, which has no progress). */
export function createLoadConsoleReporter(o: LoadConsoleOptions): LoadReporter {
  let drawn = false;
  return {
    onProgress(p) {
      if (o.quiet) return;
      const line =
        `load: ${(p.elapsedMs / 1000).toFixed(0)} s, ${p.requests} calls, ${Math.round(p.requestsPerSecond)}/s, ` +
        `${p.errors} errors`;
      // Redrawn in place on a terminal; in a log (CI, a pipe) one line a second, so a long run shows it is alive.
      o.stderr(o.live ? `\r${line}\x1b[K` : `${line}\n`);
      drawn = true;
    },
    onLoadEnd(report) {
      if (o.live && drawn) o.stderr("\n");
      o.stdout(formatLoadReport(report, o.color));
    },
  };
}

const latencyLine = (label: string, l: LatencyFigures) =>
  `${label}p50 ${l.p50}  p90 ${l.p90}  p99 ${l.p99}  p99.9 ${l["p99.9"]}  max ${l.max}`;
const counted = (counts: Record<string, number>) => {
  const entries = Object.entries(counts);
  return entries.length === 0 ? "none" : entries.map(([k, n]) => `${t(k)} ${n}`).join(", ");
};

/**
 * What an --http run left: "12 messages created, every one deleted at the end"; nothing to say of deleting when none
 * was created.
 */
function createdWords(resources: LoadReport["resources"], c: ReturnType<typeof pc.createColors>): string {
  const created = resources?.created ?? 0;
  if (created === 0) return "no message created, so none to delete";
  const left = resources?.leftBehind ?? 0;
  const made = `${created} message${created === 1 ? "" : "s"} created`;
  if (left > 0) return `${made}, ${c.red(`${left} could not be deleted`)}`;
  return `${made}, ${created === 1 ? "deleted" : "every one deleted"} at the end`;
}

/**
 * A run's shape: "64 in flight over 4 connections, HTTP/2, 2 threads, scheduled at 500/s", what applies of it; a merged
 * report names every HTTP version its runs spoke ("HTTP/1.1 and HTTP/2").
 */
function shapeWords(r: LoadReport): string {
  const versions = r.httpVersions ?? (r.httpVersion !== undefined ? [r.httpVersion] : []);
  const http = versions.length > 0 ? `, ${versions.map((v) => `HTTP/${v}`).join(" and ")}` : "";
  const threads = r.threads > 1 ? `, ${r.threads} threads` : "";
  const rate = r.rate !== undefined ? `, scheduled at ${r.rate}/s` : "";
  return `${r.concurrency} in flight over ${r.connections} connections${http}${threads}${rate}`;
}

/** The figures of a load report as the console shows them. */
export function formatLoadReport(r: LoadReport, color: boolean): string {
  const c = pc.createColors(color);
  const merged = r.mergedFrom ? ` (merged from ${r.mergedFrom.length} runs)` : "";
  const lines = [
    `${r.requests} calls in ${(r.durationMs / 1000).toFixed(1)} s to ${t(r.target)} ` +
      `(${shapeWords(r)})${merged}${r.interrupted ? ", stopped early" : ""}`,
    `requests/s   ${r.requestsPerSecond}`,
    latencyLine(r.correctedLatencyMs ? "latency ms   from send       " : "latency ms   ", r.latencyMs),
    ...(r.correctedLatencyMs ? [latencyLine("latency ms   from schedule   ", r.correctedLatencyMs)] : []),
    ...(r.unsent
      ? [
          c.yellow(
            `unsent       ${r.unsent} calls due before the end never started: every slot was held by a slower call`,
          ),
        ]
      : []),
    `errors       ${counted(r.errors)}`,
    ...(Object.keys(r.shed).length > 0
      ? [`shed         ${counted(r.shed)} (refused to shed load, not counted as errors)`]
      : []),
    ...(r.reconnections
      ? [
          `reconnected  ${r.reconnections} times (the server ended a connection: GOAWAY, or it closed; calls it ` +
            `had not processed were sent again, not counted as errors)`,
        ]
      : []),
    ...(r.mix
      ? [
          `mix          ${Object.entries(r.mix)
            .map(([k, n]) => `${t(k)}=${n}`)
            .join(",")} on ${t(r.resources?.collection ?? "")}: ${createdWords(r.resources, c)}`,
        ]
      : []),
    r.mix
      ? r.stateless.compared === 0
        ? c.red("stateless    not judged: no read of a message the run wrote succeeded")
        : r.stateless.mismatches === 0
          ? c.green(
              `stateless    every one of ${r.stateless.compared} reads returned the message last written, on ` +
                `whichever connection`,
            )
          : c.red(
              `stateless    ${r.stateless.mismatches} of ${r.stateless.compared} reads differ from what was last ` +
                `written; first: ${t(r.stateless.example ?? "")}`,
            )
      : r.stateless.compared === 0
        ? c.red("stateless    not judged: no call succeeded both at rest and under load")
        : r.stateless.mismatches === 0
          ? c.green(
              `stateless    every one of ${r.stateless.compared} replies equals the reply at rest ` +
                `(${r.stateless.distinctRequests} distinct requests)`,
            )
          : c.red(
              `stateless    ${r.stateless.mismatches} of ${r.stateless.compared} replies differ from the reply ` +
                `at rest; first: ${t(r.stateless.example ?? "")}`,
            ),
    ...r.slo.map((s) => {
      const line =
        `slo          ${s.term.padEnd(16)} ${s.figure}${s.unit === "/s" ? "/s" : ` ${s.unit}`} (${s.of}) against ` +
        `${s.threshold}${s.unit === "/s" ? "/s" : ` ${s.unit}`}: ${s.met ? "met" : "missed"}`;
      return s.met ? c.green(line) : c.red(line);
    }),
  ];
  return `${lines.join("\n")}\n`;
}
