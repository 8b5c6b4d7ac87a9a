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
 * 3. the rest, at most `limit` at once, "serial" items one after another within their area.
 * Each phase starts when every item of the one before has settled. A rejection is the caller's to handle through
 * the promise returned for that item; it never stops the others.
 */
export function schedule<C extends Schedulable, T>(items: readonly C[], limit: number, run: (item: C) => Promise<T>): Promise<T>[] {
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
