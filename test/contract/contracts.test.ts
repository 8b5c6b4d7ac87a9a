// Every bad contract trips exactly the lint and breaking rules it declares, and fails exactly its checks. One at a
// time: each buf run starts buf and its plugin eight times, and five side by side on a loaded machine ran past the
// test bound.
import { describe, expect, it } from "vitest";
import { breakingContract, lintContract } from "../../harness/contract/buf.js";
import { runConformance } from "../../harness/api/run-conformance.js";
import { badContracts } from "../../fixtures/contracts/index.js";

function ruleIds(jsonLines: string): string[] {
  const ids = jsonLines
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => (JSON.parse(l) as { type: string }).type);
  return [...new Set(ids)].sort();
}

describe.each(badContracts)("fixtures/contracts/$name", (c) => {
  it("has at least one expectation", () => {
    expect(c.lint.length + c.breaking.length).toBeGreaterThan(0);
  });

  it(`lint reports exactly [${c.lint.join(", ")}]`, async () => {
    const run = await lintContract({ dir: c.dir, format: "json" });
    expect(ruleIds(run.output)).toEqual([...c.lint].sort());
    expect(run.exitCode).toBe(c.lint.length > 0 ? 1 : 0);
  });

  it(`breaking against the shipped contract reports exactly [${c.breaking.join(", ")}]`, async () => {
    const run = await breakingContract({ dir: c.dir, format: "json" });
    expect(ruleIds(run.output)).toEqual([...c.breaking].sort());
    expect(run.exitCode).toBe(c.breaking.length > 0 ? 1 : 0);
  });

  it(`check fails exactly [${c.failsChecks.join(", ")}] among the contract checks`, async () => {
    const report = await runConformance({ contract: c.dir, only: ["contract.*"], seed: 1 });
    const failed = report.checks
      .filter((r) => r.status === "fail")
      .map((r) => r.id)
      .sort();
    expect(failed).toEqual([...c.failsChecks].sort());
    expect(report.exitCode).toBe(1);
  });
});
