// The GitHub job summary of a run: Markdown from the JSON report, with every string from the target made inert.
import type { CheckStatus, RunReport } from "../report.js";

const NOT_PASSED: readonly CheckStatus[] = ["fail", "error", "expected-fail"];
const MAX_ROWS = 100;
const MAX_TEXT = 300;

/**
 * Text a target controls, fit for one Markdown table cell: no control or direction-changing characters, no line
 * breaks, no HTML, and no Markdown syntax (links, images, emphasis, code, table pipes).
 */
export function markdownText(text: string): string {
  const flat = text.replace(/[\p{Cc}\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]+/gu, " ").trim();
  const short = flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT)}…` : flat;
  return short
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\`*_{}[\]()#+\-.!|~:@]/g, (c) => `\\${c}`);
}

export function renderJobSummary(report: RunReport): string {
  const count = (status: CheckStatus) => report.checks.filter((c) => c.status === status).length;
  const verdict = report.checks.length === 0 ? "no check ran" : report.exitCode === 0 ? "conformant" : "not conformant";
  const targets = (["grpc", "http", "image"] as const)
    .flatMap((k) => (report.target[k] !== undefined ? [`${k} ${markdownText(report.target[k] ?? "")}`] : []))
    .join(", ");
  const lines = [
    `## example-conformance: ${verdict}`,
    "",
    `Target: ${targets || "the built-in reference server"}; seed ${report.seed}; suite ${markdownText(report.suiteVersion)}.`,
    "",
    `${count("pass")} passed, ${count("fail")} failed, ${count("error")} errors, ${count("skip")} skipped, ${count("expected-fail")} expected failures.`,
  ];
  const shown = report.checks.filter((c) => NOT_PASSED.includes(c.status));
  if (shown.length > 0) {
    lines.push("", "| check | severity | status | gates | message |", "|---|---|---|---|---|");
    for (const c of shown.slice(0, MAX_ROWS)) {
      lines.push(`| ${markdownText(c.id)} | ${c.severity} | ${c.status} | ${c.gating ? "yes" : "no"} | ${markdownText(c.message)} |`);
    }
    if (shown.length > MAX_ROWS) lines.push("", `… and ${shown.length - MAX_ROWS} more in the JSON report.`);
  }
  return `${lines.join("\n")}\n`;
}
