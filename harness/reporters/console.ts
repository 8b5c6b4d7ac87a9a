// The console reporter: a line per check while running, then the failures with their replay, then the verdict.
import pc from "picocolors";
import type { CheckResult, Reporter, RunReport } from "../report.js";
import { forTerminal as t } from "./_internals/neutralise.js";
import { gateWords, scopeWords, verdictReason } from "./_internals/verdict-words.js";

export interface ConsoleReporterOptions {
  write(text: string): void;
  color: boolean;
}

const MARKS: Record<CheckResult["status"], string> = {
  pass: "PASS",
  fail: "FAIL",
  skip: "SKIP",
  error: "ERR ",
  "expected-fail": "XFAIL",
};

/** Gating checks left out by --only/--skip named on the console; the reports list them all. */
const NOT_RUN_SHOWN = 10;

export function createConsoleReporter(options: ConsoleReporterOptions): Reporter {
  const c = pc.createColors(options.color);
  const paint = (r: CheckResult): string => {
    const mark = MARKS[r.status];
    if (r.status === "pass") return c.green(mark);
    if (r.status === "skip" || r.status === "expected-fail") return c.yellow(mark);
    return r.gating ? c.red(mark) : c.yellow(mark);
  };
  // Every piece of text below that a target or a user could have written goes through t(): one line, inert.
  return {
    onRunStart({ total, target, seed }) {
      const where = [target.grpc && `grpc ${target.grpc}`, target.http && `http ${target.http}`, `contract ${target.contract}`]
        .filter(Boolean)
        .join(", ");
      options.write(`example-conformance: ${total} checks against ${t(where)} (seed ${seed})\n`);
    },
    onCheckResult(r) {
      const warn = !r.gating && (r.status === "fail" || r.status === "error") ? c.dim(" (not gating)") : "";
      options.write(`${paint(r)} ${r.id} ${c.dim(`[${r.severity} ${r.spec}]`)} ${t(r.message)}${warn}\n`);
      if (r.status === "fail" || r.status === "error") {
        if (r.counterexample !== undefined) options.write(`     counterexample: ${t(r.counterexample)}\n`);
        for (const d of r.details ?? []) options.write(`     ${t(d)}\n`);
        if (r.replay !== undefined) options.write(`     replay: ${t(r.replay)}\n`);
      }
      if (r.note) options.write(`     ${t(r.note)}\n`);
    },
    onRunEnd(report: RunReport) {
      const count = (s: CheckResult["status"]) => report.checks.filter((r) => r.status === s).length;
      const summary = [
        `${count("pass")} passed`,
        `${count("fail")} failed`,
        `${count("skip")} skipped`,
        `${count("error")} errored`,
        `${count("expected-fail")} expected failures`,
      ].join(", ");
      if (report.containerLog) {
        options.write(`\ncontainer log of ${t(report.target.image ?? "the image")} (last ${report.containerLog.length} lines):\n`);
        for (const line of report.containerLog) options.write(`  ${t(line)}\n`);
      }
      options.write(`\n${summary} in ${(report.durationMs / 1000).toFixed(1)} s\n`);
      options.write(`judged: ${t(scopeWords(report))}; gating: ${gateWords(report)}\n`);
      for (const w of report.waivers) options.write(`waived: ${w.id} (${t(w.pattern)}): ${t(w.reason)}\n`);
      const notRun = report.unjudged.filter((u) => u.why === "selection");
      if (notRun.length > 0) {
        const shown = notRun.slice(0, NOT_RUN_SHOWN).map((u) => u.id);
        options.write(`not run: ${shown.join(", ")}${notRun.length > shown.length ? `, and ${notRun.length - shown.length} more (all in the JSON report)` : ""}\n`);
      }
      for (const u of report.unjudged.filter((x) => x.why === "skipped")) options.write(`could not judge: ${u.id}: ${t(u.reason)}\n`);
      const line = `${report.verdict}: ${verdictReason(report)} (seed ${report.seed})\n`;
      const colour = report.verdict === "conformant" ? c.green : report.verdict === "not conformant" ? c.red : c.yellow;
      options.write(colour(line));
    },
  };
}
