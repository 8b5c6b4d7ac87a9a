// The JSON reporter: the run report as one file, for machines.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Reporter, RunReport } from "../report.js";

export function toJson(report: RunReport): string {
  const { suiteVersion, contractSha256, target, seed, startedAt, durationMs, exitCode } = report;
  const checks = report.checks.map((r) => ({
    id: r.id,
    severity: r.severity,
    profile: r.profile,
    spec: r.spec,
    status: r.status,
    gating: r.gating,
    message: r.message,
    replay: r.replay,
    durationMs: r.durationMs,
    ...(r.counterexample !== undefined && { counterexample: r.counterexample }),
    ...(r.details && { details: r.details }),
    ...(r.note && { note: r.note }),
  }));
  const containerLog = report.containerLog && { containerLog: report.containerLog };
  return `${JSON.stringify({ suiteVersion, contractSha256, target, seed, startedAt, durationMs, exitCode, checks, ...containerLog }, null, 2)}\n`;
}

export function createJsonReporter(file: string): Reporter {
  return {
    async onRunEnd(report) {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, toJson(report));
    },
  };
}
