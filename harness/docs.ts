// Renders the check catalogue as a Markdown table, for docs/checks.md (a test keeps that file in step).
import type { CheckDefinition } from "./check.js";

const cell = (s: string) => s.replace(/\|/g, "\\|");

export function renderChecksMarkdown(checks: readonly CheckDefinition[]): string {
  const lines = [
    "# The checks",
    "",
    "Generated from the catalogue by `npm run docs`; `npm test` fails when this file is out of step.",
    "",
    "A **contract** check judges what the implementer controls and gates by default; a **protocol** check judges",
    "the gRPC library underneath and gates only with `--profile protocol` or `--strict`. SHOULD failures are warnings",
    "unless `--strict`.",
    "",
    "| ID | Severity | Profile | Spec | What it checks |",
    "|---|---|---|---|---|",
    ...checks.map((c) => `| \`${c.id}\` | ${c.severity} | ${c.profile} | ${cell(c.spec)} | ${cell(c.title)} |`),
    "",
  ];
  return lines.join("\n");
}
