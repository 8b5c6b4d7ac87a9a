// What the GitHub Action (harness/ci/action.ts) runs after a check that exited 0: a partial verdict is never silently
// green. It prints a ::warning naming every gating check not judged and why, says in the job summary whether the
// step failed for it, and exits 1 when `require: conformant` (the default) asked for more than partial.
import { appendFileSync, readFileSync } from "node:fs";
import type { RunReport, Unjudged } from "../report.js";
import {
  forAnnotationData,
  forAnnotationProperty,
  forMarkdown as md,
  forTerminal as t,
} from "../_internals/neutralise.js";
import { verdictReason } from "../reporters/_internals/verdict-words.js";

export const REQUIRE_LEVELS = ["conformant", "partial"] as const;
export type RequireLevel = (typeof REQUIRE_LEVELS)[number];

/** Why one check was not judged, in the words of its kind. */
function why(u: Unjudged): string {
  switch (u.why) {
    case "selection":
      return `not run: ${u.reason}`;
    case "needs":
      return `needs ${u.needs ?? "an input"} to judge: ${u.reason}`;
    case "claimed":
      return `not applicable by claim ${u.claim ?? ""} (declared, not judged)`;
    case "skipped":
      return `could not judge: ${u.reason}`;
  }
}

/** The ::warning line: the verdict's reason, then each gating check not judged with its reason, one a line. */
export function partialWarning(report: RunReport, required: RequireLevel): string {
  const gate = required === "conformant" ? "the step fails (require: conformant)" : "accepted (require: partial)";
  const lines = [`partial: ${verdictReason(report)}; ${gate}`, ...report.unjudged.map((u) => `${u.id}: ${why(u)}`)].map(
    t,
  );
  return (
    `::warning ` +
    `title=${forAnnotationProperty("example-conformance: partial verdict")}::${forAnnotationData(lines.join("\n"))}\n`
  );
}

/** What the job summary adds: whether the step failed for the partial verdict, and what was not judged. */
export function partialSummary(report: RunReport, required: RequireLevel): string {
  const head =
    required === "conformant"
      ? "**The step failed: the verdict is partial and `require: conformant` asks for every gating check judged.** " +
        "Give what each needs below, or set `require: partial` to accept it."
      : "**Accepted as partial (`require: partial`): not every gating check was judged.**";
  return `${[head, "", ...report.unjudged.map((u) => `- \`${u.id}\`: ${md(why(u))}`)].join("\n")}\n\n`;
}

/**
 * After a run that exited 0: a partial report gets its ::warning and its lines in the summary, and 1 when `required`
 * is conformant; any other verdict, 0.
 */
export function requireVerdict(file: string, required: RequireLevel): number {
  const report = JSON.parse(readFileSync(file, "utf8")) as RunReport;
  if (report.verdict !== "partial") return 0;
  process.stdout.write(partialWarning(report, required));
  const summary = process.env.GITHUB_STEP_SUMMARY;
  if (summary) appendFileSync(summary, partialSummary(report, required));
  return required === "conformant" ? 1 : 0;
}
