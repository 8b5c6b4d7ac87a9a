// The console reporter: a line per check while running, then the failures with their replay, then a summary.
import pc from "picocolors";
import type { CheckResult, Reporter, RunReport } from "../report.js";

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

export function createConsoleReporter(options: ConsoleReporterOptions): Reporter {
  const c = pc.createColors(options.color);
  const paint = (r: CheckResult): string => {
    const mark = MARKS[r.status];
    if (r.status === "pass") return c.green(mark);
    if (r.status === "skip" || r.status === "expected-fail") return c.yellow(mark);
    return r.gating ? c.red(mark) : c.yellow(mark);
  };
  return {
    onRunStart({ total, target, seed }) {
      const where = [target.grpc && `grpc ${target.grpc}`, target.http && `http ${target.http}`, `contract ${target.contract}`]
        .filter(Boolean)
        .join(", ");
      options.write(`example-conformance: ${total} checks against ${where} (seed ${seed})\n`);
    },
    onCheckResult(r) {
      const warn = !r.gating && (r.status === "fail" || r.status === "error") ? c.dim(" (not gating)") : "";
      options.write(`${paint(r)} ${r.id} ${c.dim(`[${r.severity} ${r.spec}]`)} ${r.message}${warn}\n`);
      if (r.status === "fail" || r.status === "error") {
        if (r.counterexample !== undefined) options.write(`     counterexample: ${r.counterexample}\n`);
        for (const d of r.details ?? []) options.write(`     ${d}\n`);
        options.write(`     replay: ${r.replay}\n`);
      }
      if (r.note) options.write(`     ${r.note}\n`);
    },
    onRunEnd(report: RunReport) {
      const count = (s: CheckResult["status"]) => report.checks.filter((r) => r.status === s).length;
      const gating = report.checks.filter((r) => r.gating).length;
      const summary = [
        `${count("pass")} passed`,
        `${count("fail")} failed`,
        `${count("skip")} skipped`,
        `${count("error")} errored`,
        `${count("expected-fail")} expected failures`,
      ].join(", ");
      if (report.containerLog) {
        options.write(`\ncontainer log of ${report.target.image ?? "the image"} (last ${report.containerLog.length} lines):\n`);
        for (const line of report.containerLog) options.write(`  ${line}\n`);
      }
      options.write(`\n${summary} in ${(report.durationMs / 1000).toFixed(1)} s\n`);
      options.write(
        report.exitCode === 0
          ? c.green(`conformant: no gating check failed (seed ${report.seed})\n`)
          : c.red(`not conformant: ${gating} gating check(s) failed (seed ${report.seed})\n`),
      );
    },
  };
}
