// contract.lint: the contract passes buf lint with the product's rules.
import { lintContract } from "../../harness/buf/buf.js";
import { cachedLint } from "../../harness/buf/lint-cache.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";

export const contractLint: CheckDefinition = {
  id: "contract.lint",
  title: "the contract passes buf lint (STANDARD less the spec's fixed names, plus GO_PACKAGE_DEFINED)",
  severity: "MUST",
  area: "contract",
  profile: "contract",
  spec: "§2, §9",
  async run(ctx) {
    const run = await cachedLint(ctx.contractDir, "text", () => lintContract({ dir: ctx.contractDir, format: "text" }));
    if (run.exitCode === 0) return pass("buf lint found no violation");
    const lines = run.output.trim().split("\n");
    return fail(`buf lint found ${lines.length} violation(s)`, {
      details: [...lines, `reproduce: npx example-conformance lint ${ctx.contractDir}`],
    });
  },
};
