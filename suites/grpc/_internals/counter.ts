// Tells a reply that counts calls from one that shows a clock: numbers that move with calls made, not with time,
// found whatever ids, tokens or timestamps stand beside them.
import type { CheckContext } from "../../../harness/check.js";
import { helloReply } from "./calls.js";
import { exclusively } from "./exclusive.js";
import { maskSegments } from "./variation.js";

/**
 * The numbers left once uuids, timestamps and tokens are masked, word by word: a short random id whose digits come
 * in more or fewer groups from one reply to the next shifts no number in another word.
 */
const numbersByWord = (s: string): number[][] =>
  maskSegments(s)
    .split(/\s+/)
    .map((w) => (w.match(/\d+/g) ?? []).map(Number));

/** Changes of the numbers in words that hold as many numbers in both replies, keyed by word and place. */
function deltas(first: string, second: string): Map<string, number> | undefined {
  const a = numbersByWord(first);
  const b = numbersByWord(second);
  if (a.length !== b.length) return undefined;
  const moved = new Map<string, number>();
  a.forEach((ns, w) => {
    const ms = b[w]!;
    if (ns.length === ms.length) ns.forEach((n, i) => moved.set(`${w}:${i}`, ms[i]! - n));
  });
  return moved.size > 0 ? moved : undefined;
}
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Asks R, then makes K other calls (with or without a pause), then asks R again, for three (K, pause) pairs.
 * A counter of all calls moves by exactly K + 1; a counter of R's own calls by exactly 1 each time; a clock moves
 * with the pause instead. Returns the evidence when some number in the reply tracks the calls made.
 */
export function findCallCounter(ctx: CheckContext, request = "counter-probe"): Promise<string | undefined> {
  // "K other calls" means K: no call of another check may come between.
  return exclusively(ctx, () => countCalls(ctx, request));
}

async function countCalls(ctx: CheckContext, request: string): Promise<string | undefined> {
  const trials: { k: number; pauseMs: number }[] = [
    { k: 0, pauseMs: 60 },
    { k: 9, pauseMs: 0 },
    { k: 3, pauseMs: 60 },
  ];
  const moves: Map<string, number>[] = [];
  for (const { k, pauseMs } of trials) {
    const first = await helloReply(ctx, request);
    for (let i = 0; i < k; i++) await helloReply(ctx, `other-${i}`);
    if (pauseMs > 0) await pause(pauseMs);
    const second = await helloReply(ctx, request);
    if (!first.ok || !second.ok) return undefined;
    const moved = deltas(first.message.body, second.message.body);
    if (!moved) return undefined;
    moves.push(moved);
  }
  const [m0, m9, m3] = moves as [Map<string, number>, Map<string, number>, Map<string, number>];
  for (const [place, d0] of m0) {
    const d9 = m9.get(place);
    const d3 = m3.get(place);
    if (d9 === undefined || d3 === undefined) continue;
    if (d9 - d0 === 9 && d3 - d0 === 3 && d0 > 0) {
      return (
        `a number in the reply to the same request moved by ${d0}, ${d3} and ${d9} with 0, 3 and 9 other calls ` +
        `between (and by as little after a pause): it counts calls`
      );
    }
    if (d0 === 1 && d3 === 1 && d9 === 1) {
      return (
        "a number in the reply to the same request moved by exactly 1 each time it was asked, whatever other calls " +
        "or pauses came between: it counts this request's calls"
      );
    }
  }
  return undefined;
}
