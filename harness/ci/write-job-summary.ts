// The job summary of a check the GitHub Action ran (harness/ci/action.ts): the summary of its JSON report appended
// to $GITHUB_STEP_SUMMARY (or printed), the same summary the github reporter writes; when the run ended before any
// report, one line.
import { appendFileSync, readFileSync } from "node:fs";
import type { RunReport } from "../report.js";
import { toJobSummary } from "../reporters/github.js";

export function writeJobSummary(file: string, verdict: string): void {
  let summary: string;
  try {
    summary = toJobSummary(JSON.parse(readFileSync(file, "utf8")) as RunReport);
  } catch {
    // Usage errors and unreachable targets end before a report is written; the step's log has the one-line reason.
    summary =
      `### example-conformance: ${verdict.replace(/[^a-z-]/g, "")}\n\nThe run ended before writing a report; the ` +
      `step's log says why.\n`;
  }
  const target = process.env.GITHUB_STEP_SUMMARY;
  if (target) appendFileSync(target, summary);
  else process.stdout.write(summary);
}
