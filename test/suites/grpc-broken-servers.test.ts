// Every broken gRPC server fails exactly the checks it declares under `example-conformance check --strict`, and
// every gRPC check is failed by one of them.
import { afterAll, describe, expect, it } from "vitest";
import { brokenGrpcServers } from "../../fixtures/broken-servers/grpc/index.js";
import { contractChecks, grpcChecks } from "../../suites/index.js";
import { checkVerdicts, cli } from "../helpers/cli.js";
import { skipIfMissing } from "../helpers/toolchain.js";

/**
 * The bound on one call: under check's 5 s, so that the servers that never answer cost less, and well above what a
 * call takes on a loaded machine (at 1.5 s, a run at load 18 failed calls of correct checks past it).
 */
const CALL_BOUND = "3s";

const verdicts = new Map<string, string[]>();
afterAll(() => {
  const caught = [...verdicts.values()].filter((ids) => ids.length > 0).length;
  console.log(
    `gRPC defects caught: ${caught}/${brokenGrpcServers.length} ` +
      `(${Math.round((100 * caught) / brokenGrpcServers.length)}%)`,
  );
});

describe.each(brokenGrpcServers)("broken gRPC server $name", (broken) => {
  it(
    `fails exactly [${broken.mustFail.join(", ")}]: ${broken.defect}`,
    async (t) => {
      await skipIfMissing(broken, (why) => t.skip(why));
      const started = await broken.start();
      try {
        if (broken.refusedBeforeChecks) {
          // Not gRPC at all: exit 3 and one line before any check, never a list of failures.
          const run = await cli(["check", "--grpc", started.address, "--timeout", CALL_BOUND]);
          expect(run.code).toBe(3);
          expect(run.stderr.trim().split("\n")).toHaveLength(1);
          expect(run.stderr).toMatch(broken.refusedBeforeChecks);
          verdicts.set(broken.name, ["refused"]);
          return;
        }
        // The contract checks read files, not the target: left out, they would only repeat the same pass.
        const run = await checkVerdicts([
          "--grpc",
          started.address,
          ...(started.replicas ?? []).flatMap((r) => ["--replica", r]),
          "--timeout",
          CALL_BOUND,
          "--skip",
          [...contractChecks.map((c) => c.id), ...(broken.skip ?? [])].join(","),
          "--seed",
          "11",
          "--runs",
          "25",
          "--strict",
          ...(broken.oneAtATime ? ["--concurrency", "1"] : []),
        ]);
        verdicts.set(broken.name, run.failed);
        expect(run.failed).toEqual([...broken.mustFail].sort());
        expect(run.code).toBe(1);
        // Where declared, the message names the cause.
        for (const [id, cause] of Object.entries(broken.because ?? {})) {
          expect(run.report.checks.find((c) => c.id === id)?.message, id).toMatch(cause);
        }
        // Every failure says how to see it again.
        for (const c of run.report.checks.filter((x) => x.status === "fail")) {
          expect(c.replay).toMatch(
            new RegExp(
              `^npx example-conformance check --grpc ${started.address} .*--only ${c.id.replace(/\./g, "\\.")} ` +
                `--seed 11`,
            ),
          );
        }
      } finally {
        await started.close();
      }
      // A server on another stack may need building first (a cold Go build compiles grpc-go).
    },
    broken.missing ? 300_000 : undefined,
  );
});

describe("coverage of the catalogue", () => {
  it("has a broken server for every gRPC check", () => {
    const declared = new Set(brokenGrpcServers.flatMap((b) => b.mustFail));
    const uncovered = grpcChecks.map((c) => c.id).filter((id) => !declared.has(id));
    expect(uncovered).toEqual([]);
  });
});
