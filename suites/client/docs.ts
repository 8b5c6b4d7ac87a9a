// The client checks and their scenarios as a Markdown section, appended to docs/checks.md by `npm run docs` (a test
// keeps that file in step).
import { SCENARIOS } from "../../harness/client-check/scenarios.js";
import type { ClientCheck } from "./_internals/client-check.js";

const cell = (s: string) => s.replace(/\|/g, "\\|");

export function renderClientChecksMarkdown(checks: readonly ClientCheck[]): string {
  return [
    "## Client checks (`check-client`)",
    "",
    "`example-conformance check-client -- CMD` runs a client under check once per scenario against recording",
    "servers of its own (`harness/client-check/`) and judges what it sends and how it copes; the checks are in",
    "`suites/client/`.",
    "Each is of the contract profile: a MUST failure gates, a SHOULD failure is a warning unless `--strict`.",
    "",
    "| ID | Severity | Scenario | Spec | What it checks |",
    "|---|---|---|---|---|",
    ...checks.map((c) => `| \`${c.id}\` | ${c.severity} | ${c.scenario} | ${cell(c.spec)} | ${cell(c.title)} |`),
    "",
    "| Scenario | The legal server the recording servers play |",
    "|---|---|",
    ...Object.values(SCENARIOS).map((s) => `| ${s.name} | ${cell(s.plays)} |`),
    "",
  ].join("\n");
}
