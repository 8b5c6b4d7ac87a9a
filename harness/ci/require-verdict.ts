// Entry the GitHub Action runs after a check that exited 0 (REPORT REQUIRE): a partial verdict is never silently
// green. It prints a ::warning naming every gating check not judged and why, says in the job summary whether the
// step failed for it, and exits 1 when `require: conformant` (the default) asked for more than partial.
import { appendFileSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import type { RunReport, Unjudged } from "../report.js";
import { forAnnotationData, forAnnotationProperty, forMarkdown as md, forTerminal as t } from "../reporters/_internals/neutralise.js";
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
  const lines = [`partial: ${verdictReason(report)}; ${gate}`, ...report.unjudged.map((u) => `${u.id}: ${why(u)}`)].map(t);
  return `::warning title=${forAnnotationProperty("example-conformance: partial verdict")}::${forAnnotationData(lines.join("\n"))}\n`;
}

/** What the job summary adds: whether the step failed for the partial verdict, and what was not judged. */
export function partialSummary(report: RunReport, required: RequireLevel): string {
  const head =
    required === "conformant"
      ? "**The step failed: the verdict is partial and `require: conformant` asks for every gating check judged.** Give what each needs below, or set `require: partial` to accept it."
      : "**Accepted as partial (`require: partial`): not every gating check was judged.**";
  return `${[head, "", ...report.unjudged.map((u) => `- \`${u.id}\`: ${md(why(u))}`)].join("\n")}\n\n`;
}

const [file, required] = process.argv.slice(2);
// Run as the Action's entry only, never when imported.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href && file !== undefined && required !== undefined) {
  if (!(REQUIRE_LEVELS as readonly string[]).includes(required)) {
    process.stderr.write(`example-conformance: require ${t(required)}: expected conformant or partial\n`);
    process.exitCode = 2;
  } else {
    const report = JSON.parse(readFileSync(file, "utf8")) as RunReport;
    if (report.verdict === "partial") {
      const level = required as RequireLevel;
      process.stdout.write(partialWarning(report, level));
      const summary = process.env.GITHUB_STEP_SUMMARY;
      if (summary) appendFileSync(summary, partialSummary(report, level));
      if (level === "conformant") process.exitCode = 1;
    }
  }
}
