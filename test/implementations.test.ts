// No false failure: every correct implementation, on every stack, passes every gating check, with a second
// instance as its replica. What does not gate is asserted too, so that a change in either shows.
import { afterAll, describe, expect, it } from "vitest";
import {
  implementations,
  NOT_GATING,
  type Implementation,
  type RunningImplementation,
} from "../fixtures/implementations/index.js";
import { contractChecks } from "../suites/index.js";
import { checkVerdicts, cli } from "./helpers/cli.js";
import { skipIfMissing } from "./helpers/toolchain.js";
import { within } from "./helpers/within.js";

/**
 * What a variant fails beyond its stack's list: a reply that carries a clock varies by itself, which the SHOULD
 * check grpc.stateless.deterministic reports (and nothing gates on).
 */
const VARIANT_NOT_GATING: Record<string, string[]> = {
  "go-clock": ["grpc.stateless.deterministic"],
  "python-clock": ["grpc.stateless.deterministic"],
};

/** The receive limit a variant chose, as the run must report it: found by probing, not assumed. */
const LIMIT_FOUND: Record<string, RegExp> = {
  "go-limit-256k": /^receive limit between 250 KiB \(served\) and 500 KiB \(status 8 RESOURCE_EXHAUSTED/,
  "python-limit-64k": /^receive limit between 60 KiB \(served\) and 120 KiB \(status 8 RESOURCE_EXHAUSTED/,
};

/** A variant ("go-clock") fails what its stack ("go") fails, and what its choice adds. */
function notGating(impl: Implementation): string[] {
  const stack = impl.name.split("-")[0] ?? impl.name;
  return [...(NOT_GATING[stack] ?? []), ...(VARIANT_NOT_GATING[impl.name] ?? [])].sort();
}

/** Bounds on each phase, so that a slow machine fails with the phase named rather than the whole test timing out. */
const START_MS = 240_000; // a cold Go build compiles grpc-go from source
const CHECK_MS = 120_000;

const falseFailures = new Map<string, string[]>();
afterAll(() => {
  const tried = falseFailures.size;
  const wrong = [...falseFailures.values()].filter((ids) => ids.length > 0).length;
  if (tried > 0)
    console.log(
      `false failures on correct implementations: ${wrong}/${tried} (${[...falseFailures.keys()].join(", ")})`,
    );
});

describe.each(implementations)("the $name implementation ($stack), replying $reply", (impl) => {
  it(
    "passes every gating check, its replica included, and fails exactly its known non-gating checks",
    async (t) => {
      await skipIfMissing(impl, (why) => t.skip(why));
      const started: RunningImplementation[] = [];
      try {
        // One at a time, so that a second start that fails still leaves the first to be stopped.
        started.push(await within(`starting ${impl.name}`, START_MS, impl.start()));
        started.push(await within(`starting a second ${impl.name}`, START_MS, impl.start()));
        const [primary, replica] = started as [RunningImplementation, RunningImplementation];
        const run = await within(
          `checking ${impl.name}`,
          CHECK_MS,
          checkVerdicts([
            ...(impl.checkArgs ?? []),
            "--grpc",
            primary.address,
            "--replica",
            replica.address,
            "--skip",
            contractChecks.map((c) => c.id).join(","),
            "--seed",
            "7",
            "--runs",
            "25",
          ]),
        );
        const gating = run.report.checks.filter((c) => c.gating).map((c) => `${c.id}: ${c.message}`);
        falseFailures.set(impl.name, gating);
        expect(gating).toEqual([]);
        expect(run.code).toBe(0);
        expect(run.failed).toEqual(notGating(impl));
        const limit = LIMIT_FOUND[impl.name];
        if (limit) expect(run.report.checks.find((c) => c.id === "grpc.limits.large-message")?.message).toMatch(limit);
        // The replica was really compared, not skipped.
        expect(run.report.checks.find((c) => c.id === "grpc.stateless.replicas")?.status).toBe("pass");
      } finally {
        await Promise.all(started.map((s) => s.close()));
      }
    },
    START_MS * 2 + CHECK_MS + 30_000,
  );

  it.runIf(impl.checkArgs !== undefined)(
    "without its credentials: cannot check, exit 5, no check failed",
    async (t) => {
      await skipIfMissing(impl, (why) => t.skip(why));
      const server = await within(`starting ${impl.name}`, START_MS, impl.start());
      try {
        const run = await within(
          `checking ${impl.name}`,
          CHECK_MS,
          cli(["check", "--grpc", server.address, "--skip", contractChecks.map((c) => c.id).join(",")]),
        );
        expect(run.code).toBe(5);
        expect(run.stderr).toMatch(
          /^example-conformance: cannot check: the target wants credentials \(pass --metadata\): every call got UNAUTHENTICATED\n$/,
        );
        expect(run.stdout).not.toMatch(/FAIL/);
        const wrong = await within(
          `checking ${impl.name}`,
          CHECK_MS,
          cli([
            "check",
            "--grpc",
            server.address,
            "--metadata",
            "x-api-key=wrong",
            "--skip",
            contractChecks.map((c) => c.id).join(","),
          ]),
        );
        expect(wrong.code).toBe(5);
        expect(wrong.stderr).toMatch(/cannot check: the target refused the credentials given \(--metadata x-api-key\)/);
      } finally {
        await server.close();
      }
    },
    START_MS + 2 * CHECK_MS,
  );
});
