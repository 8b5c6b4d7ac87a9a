// Entry the GitHub Action runs (REPORT [VERDICT]): appends the job summary of a JSON report to $GITHUB_STEP_SUMMARY
// (or prints it), the same summary the github reporter writes; when the run ended before any report, one line.
import { appendFileSync, readFileSync } from "node:fs";
import type { RunReport } from "../report.js";
import { toJobSummary } from "../reporters/github.js";

const [file, verdict = "error"] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write("write-job-summary: expected the JSON report's path\n");
  process.exitCode = 2;
} else {
  let summary: string;
  try {
    summary = toJobSummary(JSON.parse(readFileSync(file, "utf8")) as RunReport);
  } catch {
    // Usage errors and unreachable targets end before a report is written; the step's log has the one-line reason.
    summary = `### example-conformance: ${verdict.replace(/[^a-z-]/g, "")}\n\nThe run ended before writing a report; the step's log says why.\n`;
  }
  const target = process.env.GITHUB_STEP_SUMMARY;
  if (target) appendFileSync(target, summary);
  else process.stdout.write(summary);
}
