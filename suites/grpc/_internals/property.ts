// Runs a fast-check property inside a check: the run's seed and case count, and a failure that replays.
import fc from "fast-check";
import type { CheckContext, CheckOutcome } from "../../../harness/check.js";

export async function checkProperty<Ts extends [unknown, ...unknown[]]>(
  ctx: CheckContext,
  property: fc.IAsyncPropertyWithHooks<Ts>,
  describe: (counterexample: Ts) => string,
  options: { examples?: Ts[]; maxRuns?: number } = {},
): Promise<CheckOutcome & { status: "pass" | "fail" | "error" }> {
  const details = await fc.check(property, {
    seed: ctx.seed,
    numRuns: Math.min(ctx.runs, options.maxRuns ?? Number.MAX_SAFE_INTEGER),
    ...(ctx.path !== undefined && { path: ctx.path }),
    endOnFailure: ctx.path !== undefined,
    ...(options.examples && { examples: options.examples }),
    // A stateful defect can fail many cases; shrinking is worth a bounded number of extra calls, no more.
    interruptAfterTimeLimit: Math.max(1000, ctx.timeoutMs * 4),
    markInterruptAsFailure: false,
  });
  if (!details.failed) {
    const note = details.interrupted ? ` (stopped at the time bound after ${details.numRuns} cases)` : "";
    return { status: "pass", message: `${details.numRuns} cases held${note}` };
  }
  if (!details.counterexample) {
    return { status: "error", message: `the property could not run: ${String(details.errorInstance ?? "unknown error")}` };
  }
  const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return {
    status: "fail",
    message: reason,
    counterexample: describe(details.counterexample),
    ...(details.counterexamplePath !== null && { path: details.counterexamplePath }),
    details: [`failed after ${details.numRuns} case(s), shrunk ${details.numShrinks} time(s)`],
  };
}
