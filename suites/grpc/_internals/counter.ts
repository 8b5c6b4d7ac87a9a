// Tells a reply that counts calls from one that shows a clock: numbers that move with calls made, not with time,
// found whatever ids, tokens or timestamps stand beside them.
import type { CheckContext } from "../../../harness/check.js";
import { helloReply } from "./calls.js";
import { maskSegments } from "./variation.js";

/** The numbers left once uuids, timestamps and tokens are masked, so that their digits do not shift the count's place. */
const numbers = (s: string): number[] => (maskSegments(s).match(/\d+/g) ?? []).map(Number);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Asks R, then makes K other calls (with or without a pause), then asks R again, for three (K, pause) pairs.
 * A counter of all calls moves by exactly K + 1; a counter of R's own calls by exactly 1 each time; a clock moves
 * with the pause instead. Returns the evidence when some number in the reply tracks the calls made.
 */
export async function findCallCounter(ctx: CheckContext, request = "counter-probe"): Promise<string | undefined> {
  const trials: { k: number; pauseMs: number }[] = [
    { k: 0, pauseMs: 60 },
    { k: 9, pauseMs: 0 },
    { k: 3, pauseMs: 60 },
  ];
  const deltas: number[][] = [];
  for (const { k, pauseMs } of trials) {
    const first = await helloReply(ctx, request);
    for (let i = 0; i < k; i++) await helloReply(ctx, `other-${i}`);
    if (pauseMs > 0) await pause(pauseMs);
    const second = await helloReply(ctx, request);
    if (!first.ok || !second.ok) return undefined;
    const a = numbers(first.message.body);
    const b = numbers(second.message.body);
    if (a.length === 0 || a.length !== b.length) return undefined;
    deltas.push(b.map((n, i) => n - (a[i] as number)));
  }
  const [d0, d9, d3] = deltas as [number[], number[], number[]];
  for (let i = 0; i < d0.length; i++) {
    if (d9[i]! - d0[i]! === 9 && d3[i]! - d0[i]! === 3 && d0[i]! > 0) {
      return `a number in the reply to the same request moved by ${d0[i]}, ${d3[i]} and ${d9[i]} with 0, 3 and 9 other calls between (and by as little after a pause): it counts calls`;
    }
    if (d0[i] === 1 && d3[i] === 1 && d9[i] === 1) {
      return "a number in the reply to the same request moved by exactly 1 each time it was asked, whatever other calls or pauses came between: it counts this request's calls";
    }
  }
  return undefined;
}
