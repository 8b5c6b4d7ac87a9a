// Hostile targets never crash or hang the harness: each run ends by itself with a verdict (exit 1) or exit 3, prints
// no stack trace, and leaves no connection open behind it.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hostileTargets, type HostileServer } from "../../fixtures/hostile-targets/index.js";
import { ConformanceError } from "../../harness/errors.js";
import { runConformance } from "../../harness/runner.js";
import type { RunReport } from "../../harness/report.js";
import { grpcChecks } from "../../suites/index.js";
import { runCliProcess as runCli } from "../helpers/cli-process.js";
import { selfSignedCert } from "../helpers/tls.js";

const material = selfSignedCert();
const out = mkdtempSync(join(tmpdir(), "hostile-"));
const outcomes: string[] = [];
afterAll(() =>
  console.log(`hostile targets survived: ${outcomes.length}/${hostileTargets.length}\n  ${outcomes.join("\n  ")}`),
);

async function connectionsDrain(server: HostileServer): Promise<number> {
  // The server sees a close a moment after the client sends it: poll a little, bounded.
  for (let i = 0; i < 40 && server.openConnections() > 0; i++) await new Promise((r) => setTimeout(r, 50));
  return server.openConnections();
}

const args = (address: string, extra: string[]) => [
  "check",
  "--grpc",
  address,
  "--timeout",
  "1s",
  "--skip",
  "contract.shape,contract.go-package,contract.lint",
  "--seed",
  "1",
  "--runs",
  "5",
  ...extra,
];

describe.each(hostileTargets)("a target that $behaviour", (target) => {
  it(
    `${target.name}: the CLI process ends by itself with exit ${target.exitCodes.join(" or ")}, one clear line or ` +
      `a report, no stack trace`,
    async () => {
      const server = await target.start(material);
      try {
        const json = join(out, `${target.name}.json`);
        const run = await runCli([...args(server.address, target.flags?.(material) ?? []), "--report-json", json]);
        expect(run.signal, "the harness hung and was killed by the backstop").toBeNull();
        expect(target.exitCodes).toContain(run.code);
        expect(run.stderr).not.toMatch(/^\s+at /m);
        expect(run.stderr).not.toMatch(/Unhandled|TypeError|RangeError|node:internal/);
        if (run.code === 3) {
          expect(run.stderr).toMatch(
            new RegExp(`^example-conformance: .*${server.address.replace(/\./g, "\\.")}.*\\n$`),
          );
          expect(run.stderr).toMatch(target.says);
        } else {
          const report = JSON.parse(readFileSync(json, "utf8")) as RunReport;
          // Nothing was served, so no check may claim a pass.
          expect(report.checks.filter((c) => c.status === "pass").map((c) => c.id)).toEqual([]);
          expect(report.checks.filter((c) => c.status === "fail" || c.status === "error").length).toBeGreaterThan(0);
          expect(report.checks.map((c) => c.message).join("\n")).toMatch(target.says);
        }
        outcomes.push(`${target.name}: exit ${run.code} in ${run.ms} ms`);
      } finally {
        await server.close();
      }
    },
  );

  it(`${target.name}: a run in process throws nothing unexpected and leaves no connection open`, async () => {
    const server = await target.start(material);
    try {
      const tls = target.flags ? { tls: { caFile: material.certFile } } : {};
      let report: RunReport | undefined;
      try {
        report = await runConformance({
          grpc: { address: server.address, timeoutMs: 1000, ...tls },
          checks: grpcChecks,
          seed: 1,
          runs: 5,
        });
      } catch (err) {
        // The only thing a run may throw at a hostile target: unreachable, with the address.
        expect(err).toBeInstanceOf(ConformanceError);
        expect((err as ConformanceError).code).toBe("unreachable");
      }
      if (report) expect(report.exitCode).toBe(1);
      expect(await connectionsDrain(server)).toBe(0);
    } finally {
      await server.close();
    }
  });
});
