// Every broken gRPC server fails exactly the checks it declares, and every gRPC check is failed by one of them.
import { afterAll, describe, expect, it } from "vitest";
import { runConformance } from "../../harness/runner.js";
import { brokenGrpcServers } from "../../fixtures/broken-servers/grpc/index.js";
import { grpcChecks } from "../../suites/index.js";

const RUNS = 25;
const verdicts = new Map<string, string[]>();
afterAll(() => {
  const caught = [...verdicts.values()].filter((ids) => ids.length > 0).length;
  console.log(`defects caught: ${caught}/${brokenGrpcServers.length}`);
});

describe.each(brokenGrpcServers)("broken gRPC server $name", (broken) => {
  it(`fails exactly [${broken.mustFail.join(", ")}]: ${broken.defect}`, async () => {
    const started = await broken.start();
    try {
      const report = await runConformance({
        grpc: { address: started.address, timeoutMs: 1500 },
        ...(started.replicas && { replicas: started.replicas }),
        checks: grpcChecks,
        seed: 11,
        runs: RUNS,
        strict: true,
      });
      const failed = report.checks.filter((c) => c.status === "fail" || c.status === "error").map((c) => c.id).sort();
      verdicts.set(broken.name, failed);
      expect(failed).toEqual([...broken.mustFail].sort());
      expect(report.exitCode).toBe(1);
    } finally {
      await started.close();
    }
  });
});

describe("coverage of the catalogue", () => {
  it("has a broken server for every gRPC check", () => {
    const declared = new Set(brokenGrpcServers.flatMap((b) => b.mustFail));
    const uncovered = grpcChecks.map((c) => c.id).filter((id) => !declared.has(id));
    expect(uncovered).toEqual([]);
  });
});
