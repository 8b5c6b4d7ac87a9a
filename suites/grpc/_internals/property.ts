// Runs a fast-check property inside a check: the run's seed and case count, a failure that replays, a bound on
// time that holds while shrinking too, and the input that made the server stop kept as the cause.
import fc from "fast-check";
import type { CheckContext, CheckOutcome } from "../../../harness/check.js";
import { ConformanceError } from "../../../harness/errors.js";
import { suspectsOf } from "../../../harness/targets/guards.js";
import { helloReply, openAhead } from "./calls.js";

export interface PropertyOptions<T> {
  examples?: T[];
  maxRuns?: number;
  /**
   * The calls on fresh connections a case makes: the connections the cases tried side by side will take are opened
   * ahead, within the check's bound on what it has in flight (calls.ts, openAhead).
   */
  fresh?: (value: T) => number;
  /**
   * The calls a case makes one after another: the cases tried side by side start heaviest first (ties in fast-check's
   * order), so that the property does not end on a long case started last while the others' places stand idle.
   */
  weight?: (value: T) => number;
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
  let stopped: { value: T; reason: string; err: unknown } | undefined;
  // Only a target that answered before the property can stop answering during it.
  const answeredBefore = await alive(ctx);
  // The whole property, shrinking included, within a bound of its own, so it ends with a verdict.
  const bound = Math.max(1000, ctx.timeoutMs * 4);
  const numRuns = Math.min(ctx.runs, options.maxRuns ?? Number.MAX_SAFE_INTEGER);
  const examples = options.examples ?? [];
  /** Outcomes already seen, by case: fast-check's own run replays them instead of calling again. */
  const seen = new Map<string, unknown>();
  /** The target had stopped answering before this property could judge a case: no case is to blame. */
  let gone: ConformanceError | undefined;
  const attempt = async (value: T): Promise<unknown> => {
    try {
      await predicate(value);
      return undefined;
    } catch (err) {
      if (err instanceof ConformanceError && err.code === "unreachable" && !stopped) gone ??= err;
      return err ?? new Error("failed");
    }
  };
  /** Shrinking against a target that is gone would only find an artefact ("" fails as well as anything). */
  const goneOutcome = (err: ConformanceError) => ({
    status: "error" as const,
    message: err.message,
    ...suspectsOf(err),
  });
  if (ctx.path === undefined && (ctx.parallelism ?? 1) > 1) {
    // Cases do not depend on each other: those fast-check would try (the same seed) are tried side by side first,
    // heaviest first when weighed. All held: that is the verdict. One failed: fast-check runs as usual below, in its
    // own order, replaying what was seen and shrinking the failure one call after another.
    const cases = [...examples, ...fc.sample(arbitrary, { seed: ctx.seed, numRuns })].slice(0, numRuns);
    const tried = await trySideBySide(ctx, cases, options, bound, attempt);
    for (const [i, err] of tried.outcomes) seen.set(fc.stringify(cases[i]), err);
    const first = [...tried.outcomes].filter(([, err]) => err !== undefined).sort(([a], [b]) => a - b)[0];
    if (first === undefined) {
      const note =
        tried.outcomes.size < cases.length
          ? ` (stopped at the time bound of ${bound} ms after ${tried.outcomes.size} cases)`
          : "";
      return { status: "pass", message: `${tried.outcomes.size} cases held${note}` };
    }
    const [index, err] = first;
    if (gone && !answeredBefore) return goneOutcome(gone);
    if (answeredBefore && !(await alive(ctx)))
      stopped = { value: cases[index] as T, reason: err instanceof Error ? err.message : String(err), err };
  }
  const property = fc.asyncProperty(arbitrary, async (value) => {
    // The server stopped answering: nothing more can be learnt, and each call would wait out its timeout.
    if (stopped || gone || ctx.signal.aborted) return;
    const key = fc.stringify(value);
    const err = seen.has(key) ? seen.get(key) : await attempt(value);
    if (err === undefined) return;
    if (!seen.has(key) && answeredBefore && !(await alive(ctx)))
      stopped = { value, reason: err instanceof Error ? err.message : String(err), err };
    throw err;
  });
  const details = stopped ? undefined : await fc.check(property, checkParameters(ctx, numRuns, examples, bound));
  if (stopped) {
    return {
      status: "fail",
      message: `the server stopped answering after this input: ${stopped.reason}`,
      counterexample: describe(stopped.value),
      details: [
        `after it, a known-good request on a new connection got no reply; the input is reported as sent, not shrunk`,
      ],
      ...suspectsOf(stopped.err),
    };
  }
  if (!details) throw new Error("unreachable: a property either stopped or ran");
  if (gone) return goneOutcome(gone);
  return outcomeOf(details, bound, describe);
}

/** fast-check's parameters for one property: the run's seed and replay path, its examples, its time bound. */
function checkParameters<T>(
  ctx: CheckContext,
  numRuns: number,
  examples: readonly T[],
  bound: number,
): fc.Parameters<[T]> {
  return {
    seed: ctx.seed,
    numRuns,
    ...(ctx.path !== undefined && { path: ctx.path }),
    endOnFailure: ctx.path !== undefined,
    ...(examples.length > 0 && { examples: examples.map((e) => [e] as [T]) }),
    interruptAfterTimeLimit: bound,
    // Interrupted before any failure: a pass over fewer cases, said so below. After one: still a failure.
    markInterruptAsFailure: false,
    // A stateful defect can fail many cases; shrinking is worth a bounded number of extra calls, no more.
    maxSkipsPerRun: 10,
  };
}

/**
 * The verdict of fast-check's run: a pass (perhaps over fewer cases, at the bound), the shrunk failure, or why it could
 * not run.
 */
function outcomeOf<T>(
  details: fc.RunDetails<[T]>,
  bound: number,
  describe: (counterexample: T) => string,
): CheckOutcome & { status: "pass" | "fail" | "error" } {
  if (!details.failed) {
    const note = details.interrupted
      ? ` (stopped at the time bound of ${bound} ms after ${details.numRuns} cases)`
      : "";
    return { status: "pass", message: `${details.numRuns} cases held${note}` };
  }
  if (!details.counterexample) {
    return {
      status: "error",
      message: `the property could not run: ${String(details.errorInstance ?? "unknown error")}`,
    };
  }
  const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const counterexample = details.counterexample[0];
  return {
    status: "fail",
    message: reason,
    counterexample: describe(counterexample),
    ...(details.counterexamplePath !== null && { path: details.counterexamplePath }),
    details: [
      `failed after ${details.numRuns} case(s), shrunk ${details.numShrinks} ` +
        `time(s)${details.interrupted ? ", shrinking stopped at the time bound" : ""}`,
    ],
  };
}

/** The indexes of `cases`, heaviest first by `weight` (stable: ties keep their order); in order without one. */
export function heaviestFirst<T>(cases: readonly T[], weight?: (value: T) => number): number[] {
  const order = cases.map((_, i) => i);
  if (!weight) return order;
  const w = cases.map(weight);
  return order.sort((a, b) => (w[b] as number) - (w[a] as number) || a - b);
}

/**
 * Tries `cases` heaviest first by the options' weight (else in order), up to the check's --concurrency at once, until
 * one fails (those under way then finish), the bound passes or the check is aborted, with the fresh connections the
 * options count for them opened ahead meanwhile. Returns each tried case's outcome by index: undefined for a pass,
 * else what it threw.
 */
async function trySideBySide<T>(
  ctx: CheckContext,
  cases: readonly T[],
  options: PropertyOptions<T>,
  boundMs: number,
  attempt: (value: T) => Promise<unknown>,
): Promise<{ outcomes: Map<number, unknown> }> {
  const { fresh, weight } = options;
  const width = ctx.parallelism;
  const signal = ctx.signal;
  const outcomes = new Map<number, unknown>();
  const order = heaviestFirst(cases, weight);
  const until = performance.now() + boundMs;
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && !signal.aborted && next < order.length && performance.now() < until) {
      const i = order[next++] as number;
      const err = await attempt(cases[i] as T);
      outcomes.set(i, err);
      if (err !== undefined) failed = true;
    }
  };
  const ahead = openAhead(ctx, fresh ? cases.reduce((n, c) => n + fresh(c), 0) : 0);
  await Promise.all(Array.from({ length: Math.min(width, cases.length) }, worker)).finally(ahead);
  return { outcomes };
}
