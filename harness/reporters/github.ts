// GitHub Actions: an ::error or ::warning line per failed check, and a job summary in $GITHUB_STEP_SUMMARY when it
// is set. Every line this writes begins with the product's own command; the target's text is inert data inside it.
import { appendFile } from "node:fs/promises";
import type { CheckResult, Reporter, RunReport } from "../report.js";
import {
  forAnnotationData,
  forAnnotationProperty,
  forMarkdown as md,
  forTerminal as t,
} from "../_internals/neutralise.js";
import { gateWords, scopeWords, selectionWords, verdictReason } from "./_internals/verdict-words.js";

export interface GithubReporterOptions {
  /** Where annotations go: the job's stdout. */
  write(text: string): void;
  /** Where a summary that cannot be written is said. */
  warn(text: string): void;
  /** $GITHUB_STEP_SUMMARY, when set. */
  summaryFile?: string;
}

/** Bound on appending the job summary. */
const SUMMARY_TIMEOUT_MS = 10_000;

function annotation(r: CheckResult): string {
  const level = r.gating ? "error" : "warning";
  // Each piece neutralised to one line first, then joined by real line feeds that the runner's escape carries.
  const text = [
    t(r.message),
    ...(r.counterexample !== undefined ? [`counterexample: ${t(r.counterexample)}`] : []),
    ...(r.replay !== undefined ? [`replay: ${t(r.replay)}`] : []),
  ].join("\n");
  return `::${level} title=${forAnnotationProperty(`${r.id} [${r.severity} ${r.spec}]`)}::${forAnnotationData(text)}\n`;
}

/** The job summary in Markdown: the verdict, what was judged, and a row per check that did not pass. */
export function toJobSummary(report: RunReport): string {
  const rows = report.checks
    .filter((r) => r.status !== "pass")
    .map((r) => `| \`${r.id}\` | ${r.severity} | ${r.status}${r.gating ? " (gating)" : ""} | ${md(r.message)} |`);
  const lines = [
    `### example-conformance: ${report.verdict}`,
    "",
    `${md(verdictReason(report))} (seed ${report.seed})`,
    "",
    `- judged: ${md(scopeWords(report))}`,
    `- gating: ${md(gateWords(report))}`,
    `- selection: ${md(selectionWords(report))}`,
    ...report.waivers.map((w) => `- waived \`${w.id}\`: ${md(w.reason)}`),
    ...report.unjudged.map((u) => `- not judged \`${u.id}\`: ${md(u.reason)}`),
    "",
  ];
  if (rows.length > 0) lines.push("| check | severity | status | why |", "|---|---|---|---|", ...rows, "");
  return `${lines.join("\n")}\n`;
}

export function createGithubReporter(options: GithubReporterOptions | ((text: string) => void)): Reporter {
  const o: GithubReporterOptions = typeof options === "function" ? { write: options, warn: () => undefined } : options;
  return {
    onCheckResult(r) {
      if (r.status === "fail" || r.status === "error") o.write(annotation(r));
    },
    async onRunEnd(report) {
      if (o.summaryFile === undefined || o.summaryFile === "") return;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          appendFile(o.summaryFile, toJobSummary(report)),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no answer within ${SUMMARY_TIMEOUT_MS / 1000} s`)),
              SUMMARY_TIMEOUT_MS,
            );
            timer.unref();
          }),
        ]);
      } catch (err) {
        o.warn(
          `example-conformance: GITHUB_STEP_SUMMARY ${t(o.summaryFile)}: cannot write the job summary: ` +
            `${t(err instanceof Error ? err.message : String(err))}\n`,
        );
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
