// The JUnit reporter: one testsuite per area, one testcase per check, for CI systems that read JUnit XML.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { createRequire } from "node:module";
import type { Builder } from "junit-report-builder";
import type { Reporter, RunReport } from "../report.js";

let junit: Builder | undefined;
/**
 * Loaded on first use: most runs write no JUnit file, and importing the package's 17,000-line bundle cost every
 * start of the CLI about 0.15 s (--cpu-prof). Its types declare an ES default export, but its CommonJS
 * module.exports is the builder itself.
 */
const loadJunit = (): Builder => (junit ??= createRequire(import.meta.url)("junit-report-builder") as Builder);

export function toJunit(report: RunReport): string {
  const builder = loadJunit().newBuilder();
  const areas = [...new Set(report.checks.map((c) => c.area))];
  for (const area of areas) {
    const suite = builder
      .testSuite()
      .name(`example-conformance ${area}`)
      .timestamp(report.startedAt)
      .property("seed", String(report.seed))
      .property("suiteVersion", report.suiteVersion)
      .property("contractSha256", report.contractSha256);
    if (report.target.grpc) suite.property("grpcTarget", report.target.grpc);
    for (const r of report.checks.filter((c) => c.area === area)) {
      const tc = suite
        .testCase()
        .className(`example-conformance.${r.area}.${r.profile}`)
        .name(`${r.id} [${r.severity}]`)
        .time(r.durationMs / 1000);
      const body = [r.message, ...(r.counterexample !== undefined ? [`counterexample: ${r.counterexample}`] : []), ...(r.details ?? []), `replay: ${r.replay}`].join("\n");
      if (r.status === "fail" && r.gating) tc.failure(r.message, r.severity).standardOutput(body);
      else if (r.status === "error" && r.gating) tc.error(r.message, "error", body);
      else if (r.status === "skip") tc.skipped().standardOutput(r.message);
      else if (r.status !== "pass") tc.standardOutput(`${r.status} (not gating): ${body}${r.note ? `\n${r.note}` : ""}`);
      else tc.standardOutput(r.note ? `${r.message}\n${r.note}` : r.message);
    }
  }
  return builder.build();
}

export function createJunitReporter(file: string): Reporter {
  return {
    async onRunEnd(report) {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, toJunit(report));
    },
  };
}
