// No false failure on HTTP: every correct implementation, on every stack, each with its own legal choices, passes
// every gating HTTP check, a second listener sharing its store as its replica. What does not gate is asserted too.
import { afterAll, describe, expect, it } from "vitest";
import { httpImplementations, type RunningHttpImplementation } from "../fixtures/implementations/http/index.js";
import { checkVerdicts } from "./helpers/cli.js";
import { within } from "./helpers/within.js";
import { skipIfMissing } from "./helpers/toolchain.js";

/** Checks with nothing to judge by a server's choice: Koa takes no API key. */
const SKIPPED: Record<string, string[]> = { flask: [], express: [], koa: ["http.auth.api-key"], go: [] };

const START_MS = 240_000; // a cold Go build
const CHECK_MS = 120_000;

const falseFailures = new Map<string, string[]>();
afterAll(() => {
  const wrong = [...falseFailures.values()].filter((ids) => ids.length > 0).length;
  if (falseFailures.size > 0)
    console.log(
      `HTTP false failures on correct implementations: ${wrong}/${falseFailures.size} ` +
        `(${[...falseFailures.keys()].join(", ")})`,
    );
});

describe.each(httpImplementations)("the $name HTTP implementation ($stack)", (impl) => {
  it("passes every gating HTTP check, its replica included, and fails exactly its known non-gating checks", async (t) => {
    await skipIfMissing(impl, (why) => t.skip(why));
    const key = impl.takesApiKey ? "implementation-key" : undefined;
    let running: RunningHttpImplementation | undefined;
    try {
      running = await within(
        `starting ${impl.name}`,
        START_MS,
        impl.start({ ports: 2, ...(key !== undefined && { apiKey: key }) }),
      );
      const [primary, replica] = running.urls as [string, string];
      const run = await within(
        `checking ${impl.name}`,
        CHECK_MS,
        checkVerdicts([
          "--http",
          primary,
          "--http-replica",
          replica,
          ...impl.checkArgs,
          ...(key !== undefined ? ["--api-key", key] : []),
          "--only",
          "http.*",
        ]),
      );
      const gating = run.report.checks.filter((c) => c.gating).map((c) => `${c.id}: ${c.message}`);
      falseFailures.set(impl.name, gating);
      expect(gating).toEqual([]);
      expect(run.code).toBe(0);
      const notGating = run.report.checks
        .filter((c) => c.status === "fail" && !c.gating)
        .map((c) => c.id)
        .sort();
      expect(notGating).toEqual([...impl.shouldFindings].sort());
      // Nothing else was left unjudged for want of a choice the server made.
      expect(run.report.checks.filter((c) => c.status === "skip").map((c) => c.id)).toEqual(SKIPPED[impl.name]);
    } finally {
      await running?.close();
    }
  });
});
