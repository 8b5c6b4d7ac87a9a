// Runs the checks of one run side by side within a bound, honouring what each declares about sharing the targets.
import type { Area, Sharing } from "./check.js";
import { createLimiter } from "./limiter.js";

export interface Schedulable {
  area: Area;
  sharing?: Sharing;
  /** A "serial" item that may run side by side with the independent ones next to it in its lane (check.ts). */
  independent?: boolean;
}

const settled = (p: Promise<unknown>): Promise<void> =>
  p.then(
    () => undefined,
    () => undefined,
  );

/**
 * The HTTP lane beside the history phase: the history checks judge replies over time, and data other checks store may
 * legally change a reply (harness/check.ts, Sharing), so a result reached beside a lane that stores data stands only
 * when `stands` says so (a pass: stored data can add differences between replies, not take them away); when any does
 * not, every history item is run again (`again`) once the lane has ended, beside each other only, as without it.
 */
export interface Overlap<C, T> {
  /** The area whose "serial" items, one lane, run beside the history items. */
  lane: Area;
  /** Whether a history item's result, reached beside the lane, stands. */
  stands(result: T): boolean;
  /** Runs a history item again, with the lane ended; its result is the item's. */
  again(item: C): Promise<T>;
}

/**
 * Starts `run` for every item and returns its promises in the order given, in three phases:
 * 1. "alone" items, one at a time with nothing beside them;
 * 2. "history" items, side by side with each other (at most `limit` at once) and nothing else; with `overlap` and a
 *    limit above 1, the lane it names runs beside them too, from its first item to its last, and their results are
 *    judged as Overlap says before any other item starts;
 * 3. the rest, at most `limit` at once, "serial" items one after another within their area, each going ahead of the
 *    shared items waiting (with a limit above 1), since a lane's checks cannot overlap one another; independent ones
 *    next to each other in it side by side (with a limit above 1), never beside one that is not.
 * Each phase starts when every item of the one before has settled. A rejection is the caller's to handle through
 * the promise returned for that item; it never stops the others.
 */
export function schedule<C extends Schedulable, T>(
  items: readonly C[],
  limit: number,
  run: (item: C) => Promise<T>,
  overlap?: Overlap<C, T>,
): Promise<T>[] {
  const turn = createLimiter(limit);
  // Alone and history first: what they measure (how replies vary, whether calls are counted) is then measured with
  // no other check's data or calls beside it, and the checks that run later reuse it.
  const early = new Map<C, Promise<T>>();
  let before: Promise<void> = Promise.resolve();
  for (const item of items) {
    if (item.sharing !== "alone") continue;
    const p = before.then(() => run(item));
    early.set(item, p);
    before = settled(p);
  }
  const afterAlone = before;
  const history = items.filter((item) => item.sharing === "history");
  const lane = overlap && items.filter((item) => item.sharing === "serial" && item.area === overlap.lane);
  const beside = limit > 1 && history.length > 0 && lane !== undefined && lane.length > 0 ? overlap : undefined;
  const laneEnded = beside && lane ? runLane(lane, early, afterAlone, turn, run) : undefined;
  const first = history.map((item) => afterAlone.then(() => turn(() => run(item))));
  const final = beside && laneEnded ? judged(history, first, beside, laneEnded, turn) : first;
  history.forEach((item, i) => early.set(item, final[i] as Promise<T>));
  before = Promise.all([afterAlone, ...final.map(settled)]).then(() => undefined);
  if (limit > 1) runLanes(items, early, before, turn, run);
  const lanes = new Map<Area, Promise<void>>();
  return items.map((item) => {
    const mine = early.get(item);
    if (mine) return mine;
    const after = item.sharing === "serial" ? (lanes.get(item.area) ?? before) : before;
    const p = after.then(() => turn(() => run(item)));
    if (item.sharing === "serial") lanes.set(item.area, settled(p));
    return p;
  });
}

/**
 * The history items' results reached beside the lane when every one stands; else each run again once the lane has
 * ended (and every first run has settled), side by side within the limit.
 */
function judged<C, T>(
  history: readonly C[],
  first: readonly Promise<T>[],
  overlap: Overlap<C, T>,
  laneEnded: Promise<void>,
  turn: ReturnType<typeof createLimiter>,
): Promise<T>[] {
  const allStand = Promise.all(
    first.map((p) =>
      p.then(
        (result) => overlap.stands(result),
        () => false,
      ),
    ),
  ).then((stood) => stood.every(Boolean));
  return history.map((item, i) =>
    allStand.then((stand) =>
      stand ? (first[i] as Promise<T>) : laneEnded.then(() => turn(() => overlap.again(item))),
    ),
  );
}

/**
 * With room for more than one: each area's "serial" items as one task that holds one place from its first item to
 * its last and goes ahead of the shared items waiting. A lane cannot overlap itself, so it is the run's long pole
 * (the HTTP checks through a slow link); one after another, each of its items waiting for a place again behind the
 * shared ones would add up. Each item's promise goes into `early`, settled as that item ends.
 */
function runLanes<C extends Schedulable, T>(
  items: readonly C[],
  early: Map<C, Promise<T>>,
  before: Promise<void>,
  turn: ReturnType<typeof createLimiter>,
  run: (item: C) => Promise<T>,
): void {
  const lanes = new Map<Area, C[]>();
  for (const item of items)
    if (item.sharing === "serial" && !early.has(item)) lanes.set(item.area, [...(lanes.get(item.area) ?? []), item]);
  for (const lane of lanes.values()) void runLane(lane, early, before, turn, run);
}

/**
 * One lane as one task (see runLanes), started after `before`; resolves when its last item has settled. Independent
 * items next to each other run side by side: the first in the lane's place, each other in a place of its own (ahead
 * of the shared items waiting), and the lane goes on once all of them have settled.
 */
function runLane<C extends Schedulable, T>(
  lane: readonly C[],
  early: Map<C, Promise<T>>,
  before: Promise<void>,
  turn: ReturnType<typeof createLimiter>,
  run: (item: C) => Promise<T>,
): Promise<void> {
  const ends = lane.map(() => {
    let settle!: { resolve: (v: T) => void; reject: (e: unknown) => void };
    const promise = new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
    return { promise, ...settle };
  });
  lane.forEach((item, i) => early.set(item, ends[i]!.promise));
  // The lane's task never rejects: each item's outcome goes to its own promise.
  return before.then(() =>
    turn(
      async () => {
        const settle = (i: number) =>
          Promise.resolve()
            .then(() => run(lane[i] as C))
            .then(ends[i]!.resolve, ends[i]!.reject);
        for (let i = 0; i < lane.length; ) {
          let next = i + 1;
          if (lane[i]!.independent) while (next < lane.length && lane[next]!.independent) next++;
          const group = Array.from({ length: next - i }, (_, k) => i + k);
          await Promise.all(group.map((j) => (j === i ? settle(j) : turn(() => settle(j), { first: true }))));
          i = next;
        }
      },
      { first: true },
    ),
  );
}
