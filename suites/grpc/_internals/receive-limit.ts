// The target's own receive limit, found by growing the body: the specification leaves limits open ("not shown"),
// so no check assumes one; each asks this instead, and keeps its sizes under what it finds.
import type { CheckContext } from "../../../harness/check.js";
import { encodeMessage } from "../../../common/message.js";
import { createLimiter } from "../../../harness/limiter.js";
import { droppedBeforeAnswer, Status } from "../../../harness/protocols/rpc.js";
import { ConformanceError } from "../../../harness/errors.js";
import { asReply, hello } from "./calls.js";
import { stillServing } from "./still-serving.js";

const KiB = 1024;
/**
 * The largest body probed: gRPC's usual default receive limit. A target that serves it has no limit this run can see.
 */
export const PROBE_BOUND = 4 * 1024 * KiB;
/** Bodies tried, smallest first; 60 KiB sits just under a 64 KiB limit, 250 KiB under 256 KiB. */
export const PROBE_SIZES: readonly number[] = [
  KiB,
  16 * KiB,
  60 * KiB,
  120 * KiB,
  250 * KiB,
  500 * KiB,
  1024 * KiB,
  2048 * KiB,
  PROBE_BOUND,
];

export interface SizeAnswer {
  /** Body bytes (ASCII, so also UTF-8 bytes). */
  size: number;
  served: boolean;
  /** For a body not served: the status (RESOURCE_EXHAUSTED for a limit), or what went wrong. */
  code?: number;
  reason?: string;
}

export interface ReceiveLimit {
  /** Every size tried, smallest first. */
  answers: SizeAnswer[];
  /** The largest body served below the first one refused (0 when none was). */
  largestServed: number;
  /** The first body refused, when one was: the limit lies between largestServed and it. */
  firstRefused?: SizeAnswer;
  /** Sizes not answered within the run's timeout: neither served nor refused (see limitFrom). */
  unanswered: number[];
  /** One line for reports: the limit found, or that none was under the bound. */
  summary: string;
}

const kib = (n: number) =>
  n % (KiB * KiB) === 0 ? `${n / KiB / KiB} MiB` : n % KiB === 0 ? `${n / KiB} KiB` : `${n} bytes`;
export { kib as sizeText };

/** The probe under way: each size's answer as it comes, and the whole once every size has answered. */
interface Probe {
  sizes: readonly Promise<SizeAnswer>[];
  whole: Promise<ReceiveLimit>;
}

/**
 * Sends bodies from 1 KiB to 4 MiB and records each answer (once a run). Every size is tried, even past the first
 * refusal, so that a refusal below a size the target then serves shows: that is no limit.
 */
export async function receiveLimit(ctx: CheckContext): Promise<ReceiveLimit> {
  return (await probe(ctx)).whole;
}

function probe(ctx: CheckContext): Promise<Probe> {
  let memo = ctx.memo.get("receive-limit") as Promise<Probe> | undefined;
  if (!memo) {
    // Each size is its own question, asked side by side (within --concurrency) on a connection of its own: over a
    // slow link one connection's flow-control window would make the large bodies wait on each other. A size whose
    // own connection got no answer at all (a legal cap on connections, say) is asked again on the run's connection.
    // A body the target refuses at its length prefix costs a round trip, not its upload: the call ends when the
    // server ends the stream (harness/protocols/grpc/raw-h2.ts, grpc-js).
    const ask = async (size: number, channel: "fresh" | "shared"): Promise<SizeAnswer | undefined> => {
      // A refusal is what the probe asks about: never waited out, even with a pushback (backpressure.ts).
      const result = await hello(ctx, encodeMessage("x".repeat(size)), { channel, refusalJudged: true });
      if (channel === "fresh" && droppedBeforeAnswer(result)) return undefined;
      const reply = asReply(result);
      return reply.ok ? { size, served: true } : { size, served: false, code: result.code, reason: reply.reason };
    };
    const turn = createLimiter(ctx.parallelism);
    const sizes = PROBE_SIZES.map((size) =>
      turn(async () => (await ask(size, "fresh")) ?? ((await ask(size, "shared")) as SizeAnswer)),
    );
    const whole = Promise.all(sizes).then((answers) => judge(ctx, answers));
    // A check that reads only bodyBytesAllowed may never await the whole: its failure is still its awaiters'.
    whole.catch(() => undefined);
    // Held in a promise, as every memo is; it never rejects (its parts do, to those who await them).
    memo = Promise.resolve({ sizes, whole });
    ctx.memo.set("receive-limit", memo);
  }
  return memo;
}

/** The limit the answers show, once all are in. */
async function judge(ctx: CheckContext, answers: SizeAnswer[]): Promise<ReceiveLimit> {
  const limit = limitFrom(answers);
  const firstRefused = limit.firstRefused;
  // A refusal other than RESOURCE_EXHAUSTED (a dropped connection, say) is a limit only if the target is still
  // there: one that died (on another check's input, say) has no limit to report.
  // A target that served no size has nothing to tell apart (the checks judge that on their own).
  const gone =
    firstRefused && !isLimitRefusal(firstRefused) && answers.some((a) => a.served)
      ? await stillServing(ctx)
      : undefined;
  if (firstRefused && gone) {
    throw new ConformanceError(
      "unreachable",
      `no receive limit can be told: a ${kib(firstRefused.size)} body got ${firstRefused.reason}, and ${gone}`,
    );
  }
  return limit;
}

/**
 * What the answers show, the target still being there. A size not answered within the run's timeout
 * (DEADLINE_EXCEEDED: a slow upload through a small window on a busy link, say) is no refusal: it is named in the
 * summary and read as neither served nor a limit, so that a slow answer is never taken for a limit below a size the
 * target then serves.
 */
export function limitFrom(answers: SizeAnswer[]): ReceiveLimit {
  const firstRefused = answers.find((a) => !a.served && !timedOut(a));
  const largestServed = Math.max(
    0,
    ...answers.filter((a) => a.served && (!firstRefused || a.size < firstRefused.size)).map((a) => a.size),
  );
  const unanswered = answers.filter(timedOut).map((a) => a.size);
  const slow = unanswered.map(kib);
  const found = firstRefused
    ? `receive limit between ${kib(largestServed)} (served) and ${kib(firstRefused.size)} (${firstRefused.reason})`
    : `no receive limit up to ${kib(PROBE_BOUND)}`;
  const summary =
    slow.length > 0 ? `${found}; no answer within the timeout for ${slow.join(", ")} (not read as a limit)` : found;
  return { answers, largestServed, ...(firstRefused && { firstRefused }), unanswered, summary };
}

/** The target did not answer this size within the run's timeout. */
const timedOut = (a: SizeAnswer): boolean => !a.served && a.code === Status.DEADLINE_EXCEEDED;

/** bodyBytesAllowed's answer from the whole probe. */
export function allowedOnceAll(limit: ReceiveLimit, bound: number): number {
  return limit.firstRefused ? Math.min(bound, limit.largestServed) : bound;
}

/**
 * What bodyBytesAllowed answers from the sizes answered so far (`answers[i]` for PROBE_SIZES[i], undefined while
 * unanswered): a number once the smaller sizes decide it, whatever the larger ones will say; "whole" where only
 * the whole probe can (a refusal that is no RESOURCE_EXHAUSTED: the target may have died); undefined while open.
 */
export function allowedSoFar(
  answers: readonly (SizeAnswer | undefined)[],
  bound: number,
): number | "whole" | undefined {
  for (let i = 0; i < PROBE_SIZES.length; i++) {
    const a = answers[i];
    if (a === undefined) return undefined;
    // The first size refused: every smaller one was served, so the limit lies just under it.
    if (!a.served) return isLimitRefusal(a) ? Math.min(bound, i > 0 ? (PROBE_SIZES[i - 1] as number) : 0) : "whole";
    // Served at or past the bound: no later answer can lower the bound.
    if (a.size >= bound) return bound;
  }
  return bound;
}

/**
 * The largest body, in UTF-8 bytes, a check may send: under the target's limit and the check's own bound. It
 * resolves as soon as the sizes that decide it have answered (a check that sends 64 KiB waits on no 2 MiB upload),
 * with the value the whole probe gives (test/suites/grpc/receive-limit.test.ts holds that over answers in any order);
 * under --concurrency 1, once the whole probe has.
 */
export async function bodyBytesAllowed(ctx: CheckContext, bound: number): Promise<number> {
  const { sizes, whole } = await probe(ctx);
  // One at a time (--concurrency 1): the check's own calls go out only once the probe has ended, not beside it, so
  // that an input that brings the target down (a body with NUL, say) comes after every size has been answered.
  if (ctx.parallelism <= 1) return allowedOnceAll(await whole, bound);
  const answers: (SizeAnswer | undefined)[] = sizes.map(() => undefined);
  return new Promise<number>((resolve, reject) => {
    const decide = () => {
      const v = allowedSoFar(answers, bound);
      if (v === "whole") whole.then((limit) => resolve(allowedOnceAll(limit, bound)), reject);
      else if (v !== undefined) resolve(v);
    };
    sizes.forEach((p, i) => p.then((a) => ((answers[i] = a), decide()), reject));
  });
}

export const isLimitRefusal = (a: SizeAnswer): boolean => a.code === Status.RESOURCE_EXHAUSTED;
