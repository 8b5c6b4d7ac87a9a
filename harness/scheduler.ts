// Runs the checks of one run side by side within a bound, honouring what each declares about sharing the targets.
import type { Area, Sharing } from "./check.js";
import { createLimiter } from "./limiter.js";

export interface Schedulable {
  area: Area;
  sharing?: Sharing;
}

/**
 * Starts `run` for every item and returns its promises in the order given: "alone" items first, one at a time with
 * nothing beside them; then the rest, at most `limit` at once, "serial" items one after another within their area.
 * A rejection is the caller's to handle through the promise returned for that item; it never stops the others.
 */
export function schedule<C extends Schedulable, T>(items: readonly C[], limit: number, run: (item: C) => Promise<T>): Promise<T>[] {
  const turn = createLimiter(limit);
  const settled = (p: Promise<unknown>): Promise<void> =>
    p.then(
      () => undefined,
      () => undefined,
    );
  // Alone first: what they measure (how replies vary, whether calls are counted) is then measured undisturbed,
  // and the checks that run later reuse it.
  let before: Promise<void> = Promise.resolve();
  const alone = new Map<C, Promise<T>>();
  for (const item of items) {
    if (item.sharing !== "alone") continue;
    const p = before.then(() => run(item));
    alone.set(item, p);
    before = settled(p);
  }
  const lanes = new Map<Area, Promise<void>>();
  return items.map((item) => {
    const mine = alone.get(item);
    if (mine) return mine;
    const after = item.sharing === "serial" ? (lanes.get(item.area) ?? before) : before;
    const p = after.then(() => turn(() => run(item)));
    if (item.sharing === "serial") lanes.set(item.area, settled(p));
    return p;
  });
}
