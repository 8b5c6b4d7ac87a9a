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
 * What runs beside the history phase. The history checks judge replies over time, and data other checks store may
 * legally change a reply (harness/check.ts, Sharing), so a result reached beside a lane that stores data stands only
 * when `stands` says so (a pass: stored data can add differences between replies, not take them away); when any does
 * not, every history item is run again (`again`) once the lane has ended, beside each other only, as without it.
 * With `shared`, that area's "shared" items (checks that store nothing) run at the phase's start too, beside the lane
 * and whatever the history items start first (the runner has their bodies wait for these items: `besideEnded`); they
 * stand with the history items, and are run again after them, in the order of the run without the overlap, when any
 * history item does not stand. Only with a place left for them beside every history item and the lane: a history
 * body waiting for them holds its place, so with none left they run after the history items, as without `shared`.
 */
export interface Overlap<C, T> {
  /** The area whose "serial" items, one lane, run beside the history items, if any. */
  lane?: Area;
  /** The area whose "shared" items run at the history phase's start, beside it (see above). */
  shared?: { area: Area };
  /**
   * Whether the shared items may run beside the history items, asked as they start: they wait for it, and when it
   * says no (or has not said by the time every history item has ended) they run after the history items instead,
   * as without the overlap. Default yes.
   */
  sharedMay?(): Promise<boolean>;
  /** Told, as the items start, of the promise that settles when every item run beside the history items has ended. */
  besideEnded?(ended: Promise<void>): void;
  /** Whether a history item's result, reached beside the lane, stands. */
  stands(result: T): boolean;
  /** Runs a history item (or a shared item run beside them) again, with the lane ended; its result is the item's. */
  again(item: C): Promise<T>;
}

/**
 * Starts `run` for every item and returns its promises in the order given, in three phases:
 * 1. "alone" items, one at a time with nothing beside them;
 * 2. "history" items, side by side with each other (at most `limit` at once) and nothing else; with `overlap` and a
 *    limit above 1, the lane it names runs beside them too, from its first item to its last, and the shared items
 *    of the area it names once it says they may, and their results are judged as Overlap says before any other item
 *    starts;
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
  const lane = overlap?.lane ? items.filter((item) => item.sharing === "serial" && item.area === overlap.lane) : [];
  // The history items' bodies wait, in their places, for the shared items beside them to end (besideEnded), and the
  // lane holds a place from its first item to its last: the shared items run beside them only with a place left.
  const room = limit - history.length - (lane.length > 0 ? 1 : 0);
  const sharedBeside = overlap !== undefined && room >= 1 ? sharedOf(items, overlap) : [];
  const beside =
    limit > 1 && history.length > 0 && overlap !== undefined && lane.length + sharedBeside.length > 0
      ? overlap
      : undefined;
  const shared = beside ? sharedBeside : [];
  const laneEnded = beside ? runLane(lane, early, afterAlone, turn, run) : undefined;
  const first = history.map((item) => afterAlone.then(() => turn(() => run(item))));
  // The shared items beside them take their places after the history items, which start what they share (the clock
  // probe among it) and then wait for these to end (besideEnded).
  const historyEnded = Promise.all(first.map(settled));
  const may =
    beside && shared.length > 0 ? afterAlone.then(() => sharedMayRun(beside, historyEnded)) : Promise.resolve(false);
  const firstShared = shared.map((item) => may.then((yes) => (yes ? turn(() => run(item)) : (undefined as T))));
  let final = first;
  if (beside && laneEnded) {
    const sharedEnded = Promise.all(firstShared.map(settled)).then(() => undefined);
    beside.besideEnded?.(sharedEnded);
    // With no lane and the shared items not beside them after all, nothing was beside the history items.
    const besideAny = lane.length > 0 ? Promise.resolve(true) : may;
    const judging = judged(history, first, firstShared, beside, besideAny, Promise.all([laneEnded, sharedEnded]), turn);
    final = judging.results;
    const finalEnded = Promise.all(final.map(settled));
    shared.forEach((item, i) =>
      early.set(
        item,
        may.then((yes) =>
          // Not beside them after all: run once, after the history items, as without the overlap.
          !yes
            ? finalEnded.then(() => turn(() => run(item)))
            : judging.allStand.then((stand) =>
                stand ? (firstShared[i] as Promise<T>) : finalEnded.then(() => turn(() => beside.again(item))),
              ),
        ),
      ),
    );
  }
  history.forEach((item, i) => early.set(item, final[i] as Promise<T>));
  const phase = [...history, ...shared].map((item) => settled(early.get(item) as Promise<T>));
  before = Promise.all([afterAlone, ...phase]).then(() => undefined);
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

/** Whether the shared items run beside the history items: the overlap's say, or no once every history item ended. */
function sharedMayRun<C, T>(overlap: Overlap<C, T>, historyEnded: Promise<unknown>): Promise<boolean> {
  const asked = overlap.sharedMay ? overlap.sharedMay().catch(() => false) : Promise.resolve(true);
  return Promise.race([asked, historyEnded.then(() => false)]);
}

/** The "shared" items of the area the overlap runs beside the history items, if it names one. */
const sharedOf = <C extends Schedulable>(items: readonly C[], overlap: Overlap<C, unknown>): C[] =>
  overlap.shared === undefined
    ? []
    : items.filter((item) => (item.sharing ?? "shared") === "shared" && item.area === overlap.shared?.area);

/**
 * The history items' results reached beside the others when every one stands (or nothing ran beside them after
 * all); else each run again once everything beside them has ended (and every first run has settled), side by side
 * within the limit.
 */
function judged<C, T>(
  history: readonly C[],
  first: readonly Promise<T>[],
  beside: readonly Promise<unknown>[],
  overlap: Overlap<C, T>,
  besideAny: Promise<boolean>,
  besideEnded: Promise<unknown>,
  turn: ReturnType<typeof createLimiter>,
): { results: Promise<T>[]; allStand: Promise<boolean> } {
  const stood = first.map((p) =>
    p.then(
      (result) => overlap.stands(result),
      () => false,
    ),
  );
  const allStand = Promise.all([besideAny, ...stood]).then(([any, ...each]) => !any || each.every(Boolean));
  const everyFirst = Promise.all([besideEnded, ...first.map(settled), ...beside.map(settled)]);
  const results = history.map((item, i) =>
    allStand.then((stand) =>
      stand ? (first[i] as Promise<T>) : everyFirst.then(() => turn(() => overlap.again(item))),
    ),
  );
  return { results, allStand };
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
