// Runs the checks of one run side by side within a bound, honouring what each declares about sharing the targets.
import type { Area, Sharing } from "./check.js";
import { createLimiter } from "./limiter.js";

export interface Schedulable {
  area: Area;
  sharing?: Sharing;
}

const settled = (p: Promise<unknown>): Promise<void> =>
  p.then(
    () => undefined,
    () => undefined,
  );

/**
 * Starts `run` for every item and returns its promises in the order given, in three phases:
 * 1. "alone" items, one at a time with nothing beside them;
 * 2. "history" items, side by side with each other (at most `limit` at once) and nothing else;
 * 3. the rest, at most `limit` at once, "serial" items one after another within their area, each going ahead of the
 *    shared items waiting (with a limit above 1), since a lane's checks cannot overlap one another.
 * Each phase starts when every item of the one before has settled. A rejection is the caller's to handle through
 * the promise returned for that item; it never stops the others.
 */
export function schedule<C extends Schedulable, T>(
  items: readonly C[],
  limit: number,
  run: (item: C) => Promise<T>,
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
  const history: Promise<void>[] = [];
  for (const item of items) {
    if (item.sharing !== "history") continue;
    const p = afterAlone.then(() => turn(() => run(item)));
    early.set(item, p);
    history.push(settled(p));
  }
  before = Promise.all([afterAlone, ...history]).then(() => undefined);
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
  for (const lane of lanes.values()) {
    const ends = lane.map(() => {
      let settle!: { resolve: (v: T) => void; reject: (e: unknown) => void };
      const promise = new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
      return { promise, ...settle };
    });
    lane.forEach((item, i) => early.set(item, ends[i]!.promise));
    // The lane's task never rejects: each item's outcome goes to its own promise.
    void before.then(() =>
      turn(
        async () => {
          for (const [i, item] of lane.entries())
            await Promise.resolve()
              .then(() => run(item))
              .then(ends[i]!.resolve, ends[i]!.reject);
        },
        { first: true },
      ),
    );
  }
}
