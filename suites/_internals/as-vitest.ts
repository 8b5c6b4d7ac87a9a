// Runs catalogue checks as vitest tests, for vitest's own reporters: a failing gating check fails its test,
// a skip is a vitest skip with its reason, a failure that does not gate is an annotation.
import { afterAll, beforeAll, describe, it } from "vitest";
import type { CheckDefinition } from "../../harness/check.js";
import { gates } from "../../harness/runner.js";
import { runCheck, type Session } from "../../harness/session.js";

export interface OpenedTarget {
  session: Session;
  /** Stops what was started for the run (the built-in reference server). */
  stop?: () => Promise<void>;
}

export function describeChecks(
  title: string,
  checks: readonly CheckDefinition[],
  open: () => Promise<OpenedTarget>,
): void {
  const strict = process.env.EXAMPLE_STRICT === "1";
  let opened: OpenedTarget | undefined;
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(async () => {
    await opened?.session.close();
    await opened?.stop?.();
  });
  describe(title, () => {
    for (const check of checks) {
      it(`${check.id} [${check.severity} ${check.profile}]`, async (t) => {
        if (!opened) throw new Error("the target was not opened");
        const outcome = await runCheck(check, opened.session.context(), 60_000);
        if (outcome.status === "skip") t.skip(outcome.message);
        if (outcome.status === "pass") return;
        const text = [
          outcome.message,
          outcome.counterexample && `counterexample: ${outcome.counterexample}`,
          ...(outcome.details ?? []),
        ]
          .filter(Boolean)
          .join("\n");
        if (gates(check, { strict })) throw new Error(text);
        await t.annotate(`not gating (${check.severity}, ${check.profile} profile): ${text}`, "warning");
      });
    }
  });
}

export const envSeed = (): number => Number(process.env.EXAMPLE_SEED ?? 1);
