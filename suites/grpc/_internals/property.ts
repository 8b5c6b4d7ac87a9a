// Runs a fast-check property inside a check: the run's seed and case count, a failure that replays, a bound on
// time that holds while shrinking too, and the input that made the server stop kept as the cause.
import fc from "fast-check";
import type { CheckContext, CheckOutcome } from "../../../harness/check.js";
import { helloReply } from "./calls.js";

export interface PropertyOptions<T> {
  examples?: T[];
  maxRuns?: number;
}

/** Whether the target still answers a known-good request on a new connection. */
async function alive(ctx: CheckContext): Promise<boolean> {
  try {
    return (await helloReply(ctx, "still there?", { channel: "fresh" })).ok;
  } catch {
    return false;
  }
}

/**
 * Checks `predicate` (which throws to fail) over `arbitrary`. When a case fails and the server then no longer
 * answers a known-good request, that case is the cause: the property stops there, unshrunk, since every case
 * after it would fail against a dead server and shrinking would only find an artefact.
 */
export async function checkProperty<T>(
  ctx: CheckContext,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  describe: (counterexample: T) => string,
  options: PropertyOptions<T> = {},
): Promise<CheckOutcome & { status: "pass" | "fail" | "error" }> {
  let stopped: { value: T; reason: string } | undefined;
  // Only a target that answered before the property can stop answering during it.
  const answeredBefore = await alive(ctx);
  const property = fc.asyncProperty(arbitrary, async (value) => {
    // The server stopped answering: nothing more can be learnt, and each call would wait out its timeout.
    if (stopped || ctx.signal.aborted) return;
    try {
      await predicate(value);
    } catch (err) {
      if (answeredBefore && !(await alive(ctx))) stopped = { value, reason: err instanceof Error ? err.message : String(err) };
      throw err;
    }
  });
  // The whole property, shrinking included, within half the check's own bound, so it ends with a verdict.
  const bound = Math.max(1000, ctx.timeoutMs * 4);
  const details = await fc.check(property, {
    seed: ctx.seed,
    numRuns: Math.min(ctx.runs, options.maxRuns ?? Number.MAX_SAFE_INTEGER),
    ...(ctx.path !== undefined && { path: ctx.path }),
    endOnFailure: ctx.path !== undefined,
    ...(options.examples && { examples: options.examples.map((e) => [e] as [T]) }),
    interruptAfterTimeLimit: bound,
    // Interrupted before any failure: a pass over fewer cases, said so below. After one: still a failure.
    markInterruptAsFailure: false,
    // A stateful defect can fail many cases; shrinking is worth a bounded number of extra calls, no more.
    maxSkipsPerRun: 10,
  });
  if (stopped) {
    return {
      status: "fail",
      message: `the server stopped answering after this input: ${stopped.reason}`,
      counterexample: describe(stopped.value),
      details: [`after it, a known-good request on a new connection got no reply; the input is reported as sent, not shrunk`],
    };
  }
  if (!details.failed) {
    const note = details.interrupted ? ` (stopped at the time bound of ${bound} ms after ${details.numRuns} cases)` : "";
    return { status: "pass", message: `${details.numRuns} cases held${note}` };
  }
  if (!details.counterexample) {
    return { status: "error", message: `the property could not run: ${String(details.errorInstance ?? "unknown error")}` };
  }
  const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const counterexample = details.counterexample[0];
  return {
    status: "fail",
    message: reason,
    counterexample: describe(counterexample),
    ...(details.counterexamplePath !== null && { path: details.counterexamplePath }),
    details: [`failed after ${details.numRuns} case(s), shrunk ${details.numShrinks} time(s)${details.interrupted ? ", shrinking stopped at the time bound" : ""}`],
  };
}
