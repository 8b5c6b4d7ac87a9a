// The scheduler: a bound on checks in flight, serial checks one at a time within their area, alone checks first with
// nothing beside them, history checks next beside each other only, results in the order given.
import { describe, expect, it } from "vitest";
import type { Area, Sharing } from "../../harness/check.js";
import { createLimiter } from "../../harness/limiter.js";
import { schedule } from "../../harness/scheduler.js";

interface Item {
  name: string;
  area: Area;
  sharing?: Sharing;
  independent?: boolean;
}

/**
 * Runs the items with a short pause each and records every start and end in order; with `overlap`, its `again` runs
 * an item the same way under the name with a star, and `stands` is asked of each history result.
 */
async function trace(items: Item[], limit: number, overlap?: { stands: (result: string) => boolean; lane?: Area }) {
  const events: string[] = [];
  const running = new Set<string>();
  const overlaps = new Map<string, Set<string>>();
  let peak = 0;
  const step = async (name: string) => {
    events.push(`start ${name}`);
    for (const other of running) {
      overlaps.set(name, (overlaps.get(name) ?? new Set()).add(other));
      overlaps.set(other, (overlaps.get(other) ?? new Set()).add(name));
    }
    running.add(name);
    peak = Math.max(peak, running.size);
    await new Promise((r) => setTimeout(r, 5));
    running.delete(name);
    events.push(`end ${name}`);
    return name;
  };
  const results = await Promise.all(
    schedule(
      items,
      limit,
      (item) => step(item.name),
      overlap && { lane: overlap.lane ?? "http", stands: overlap.stands, again: (item) => step(`${item.name}*`) },
    ),
  );
  return { events, overlaps, peak, results };
}

const grpc = (name: string, sharing?: Sharing): Item => ({ name, area: "grpc", ...(sharing && { sharing }) });
const http = (name: string, sharing: Sharing = "serial"): Item => ({ name, area: "http", sharing });
/** A serial HTTP check that says it is independent (check.ts). */
const free = (name: string): Item => ({ ...http(name), independent: true });

describe("schedule", () => {
  it("keeps at most the limit in flight, and returns results in the order given", async () => {
    const items = Array.from({ length: 12 }, (_, i) => grpc(`g${i}`));
    const { peak, results } = await trace(items, 3);
    expect(peak).toBe(3);
    expect(results).toEqual(items.map((i) => i.name));
  });

  it("runs one at a time with a limit of 1, in the order given", async () => {
    const items = [grpc("a"), http("b"), grpc("c")];
    const { events } = await trace(items, 1);
    expect(events).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
  });

  it("starts a lane's next serial check ahead of shared checks waiting for room (a lane cannot overlap itself)", async () => {
    const items = [http("h1"), ...Array.from({ length: 6 }, (_, i) => grpc(`g${i}`)), http("h2"), http("h3")];
    const { events } = await trace(items, 2);
    // The lane holds its place from h1 to h3: each of its checks starts as the one before ends, ahead of g1..g5.
    expect(events[events.indexOf("end h1") + 1]).toBe("start h2");
    expect(events[events.indexOf("end h2") + 1]).toBe("start h3");
    expect(events.indexOf("start h1")).toBeLessThan(events.indexOf("start g1"));
  });

  it("runs serial checks of one area one after another, in order, beside the others", async () => {
    const items = [http("h1"), grpc("g1"), http("h2"), grpc("g2"), http("h3")];
    const { events, overlaps } = await trace(items, 8);
    const starts = events.filter((e) => e.startsWith("start h"));
    expect(starts).toEqual(["start h1", "start h2", "start h3"]);
    for (const h of ["h1", "h2", "h3"])
      expect([...(overlaps.get(h) ?? [])].filter((o) => o.startsWith("h"))).toEqual([]);
    // The gRPC checks did run beside them.
    expect(overlaps.get("g1")?.size ?? 0).toBeGreaterThan(0);
  });

  it("runs a lane's independent checks next to each other side by side, never beside the lane's others", async () => {
    const items = [http("h1"), free("f1"), free("f2"), free("f3"), http("h2"), free("f4"), grpc("g1"), free("f5")];
    const { events, overlaps, peak, results } = await trace(items, 3);
    const lane = (name: string) => [...(overlaps.get(name) ?? [])].filter((o) => /^[hf]/.test(o)).sort();
    // f1..f3 side by side (the limit of 3 leaves room for them all), after h1 and before h2.
    expect(lane("f1")).toEqual(["f2", "f3"]);
    expect(events.indexOf("start f1")).toBeGreaterThan(events.indexOf("end h1"));
    for (const f of ["f1", "f2", "f3"]) expect(events.indexOf("start h2")).toBeGreaterThan(events.indexOf(`end ${f}`));
    // A serial check that is not independent has the lane to itself; f4 and f5, apart in the catalogue but next to
    // each other in the lane, side by side.
    expect(lane("h1")).toEqual([]);
    expect(lane("h2")).toEqual([]);
    expect(lane("f4")).toEqual(["f5"]);
    expect(peak).toBeLessThanOrEqual(3);
    expect(results).toEqual(items.map((i) => i.name));
  });

  it("runs independent checks one at a time with a limit of 1, in the order given", async () => {
    const items = [free("f1"), free("f2"), http("h1"), free("f3")];
    const { events } = await trace(items, 1);
    expect(events).toEqual(["start f1", "end f1", "start f2", "end f2", "start h1", "end h1", "start f3", "end f3"]);
  });

  it("runs alone checks first, one at a time, with nothing beside them", async () => {
    const items = [grpc("g1"), grpc("s1", "alone"), http("h1"), grpc("s2", "alone"), grpc("g2"), grpc("y1", "history")];
    const { events, overlaps, results } = await trace(items, 8);
    expect(events.slice(0, 4)).toEqual(["start s1", "end s1", "start s2", "end s2"]);
    expect(overlaps.get("s1")).toBeUndefined();
    expect(overlaps.get("s2")).toBeUndefined();
    expect(results).toEqual(["g1", "s1", "h1", "s2", "g2", "y1"]);
  });

  it("runs history checks after the alone ones, side by side with each other only, before the rest", async () => {
    const items = [
      grpc("g1"),
      grpc("y1", "history"),
      http("h1"),
      grpc("y2", "history"),
      grpc("s1", "alone"),
      grpc("y3", "history"),
    ];
    const { events, overlaps, results } = await trace(items, 8);
    expect(events.slice(0, 2)).toEqual(["start s1", "end s1"]);
    expect(events.slice(2, 5).sort()).toEqual(["start y1", "start y2", "start y3"]);
    expect(events.slice(5, 8).sort()).toEqual(["end y1", "end y2", "end y3"]);
    for (const y of ["y1", "y2", "y3"])
      expect([...(overlaps.get(y) ?? [])].sort()).toEqual(["y1", "y2", "y3"].filter((o) => o !== y));
    expect(results).toEqual(["g1", "y1", "h1", "y2", "s1", "y3"]);
  });

  it("keeps history checks within the limit, one at a time with a limit of 1", async () => {
    const items = [grpc("y1", "history"), grpc("y2", "history"), grpc("y3", "history"), grpc("g1")];
    const { events, peak } = await trace(items, 2);
    expect(peak).toBe(2);
    expect(events.indexOf("start g1")).toBeGreaterThan(
      Math.max(...["y1", "y2", "y3"].map((s) => events.indexOf(`end ${s}`))),
    );
    const serial = await trace(items, 1);
    expect(serial.events).toEqual([
      "start y1",
      "end y1",
      "start y2",
      "end y2",
      "start y3",
      "end y3",
      "start g1",
      "end g1",
    ]);
  });

  it("runs the overlap's lane beside the history checks, and the rest after both when every result stands", async () => {
    const items = [grpc("y1", "history"), http("h1"), grpc("g1"), grpc("y2", "history"), http("h2"), http("h3")];
    const { events, overlaps, peak, results } = await trace(items, 3, { stands: () => true });
    // The lane's first check starts with the history ones, not after them.
    expect(events.slice(0, 3).sort()).toEqual(["start h1", "start y1", "start y2"]);
    expect([...(overlaps.get("h1") ?? [])].filter((o) => o.startsWith("y")).sort()).toEqual(["y1", "y2"]);
    // Nothing else beside the history checks, and the shared check after them.
    for (const y of ["y1", "y2"]) expect([...(overlaps.get(y) ?? [])].every((o) => /^[yh]/.test(o))).toBe(true);
    expect(events.indexOf("start g1")).toBeGreaterThan(Math.max(events.indexOf("end y1"), events.indexOf("end y2")));
    // The lane still one at a time, in order; the bound kept; nothing run again.
    expect(events.filter((e) => e.startsWith("start h"))).toEqual(["start h1", "start h2", "start h3"]);
    for (const h of ["h1", "h2", "h3"])
      expect([...(overlaps.get(h) ?? [])].filter((o) => o.startsWith("h"))).toEqual([]);
    expect(peak).toBeLessThanOrEqual(3);
    expect(results).toEqual(["y1", "h1", "g1", "y2", "h2", "h3"]);
  });

  it("runs every history check again once the lane has ended, beside nothing else, when a result does not stand", async () => {
    const items = [grpc("y1", "history"), http("h1"), grpc("g1"), grpc("y2", "history"), http("h2")];
    const { events, overlaps, results } = await trace(items, 4, { stands: (r) => r !== "y2" });
    expect(overlaps.get("h1")?.size ?? 0).toBeGreaterThan(0);
    const lastOfLane = events.indexOf("end h2");
    for (const y of ["y1*", "y2*"]) {
      expect(events.indexOf(`start ${y}`)).toBeGreaterThan(lastOfLane);
      expect([...(overlaps.get(y) ?? [])].every((o) => o.endsWith("*"))).toBe(true);
      expect(events.indexOf("start g1")).toBeGreaterThan(events.indexOf(`end ${y}`));
    }
    // The results of the history checks are those of their second run; the others' their first.
    expect(results).toEqual(["y1*", "h1", "g1", "y2*", "h2"]);
  });

  it("counts a history check that rejects beside the lane as not standing", async () => {
    const items = [grpc("y1", "history"), http("h1")];
    const again: string[] = [];
    const promises = schedule(
      items,
      2,
      async (item) => {
        if (item.name === "y1") throw new Error("y1 crashed");
        return item.name;
      },
      { lane: "http", stands: () => true, again: async (item) => (again.push(item.name), `${item.name}*`) },
    );
    await expect(promises[0]).resolves.toBe("y1*");
    await expect(promises[1]).resolves.toBe("h1");
    expect(again).toEqual(["y1"]);
  });

  it("keeps the lane after the history checks with a limit of 1, or with no overlap asked", async () => {
    const items = [grpc("y1", "history"), http("h1"), grpc("y2", "history"), http("h2")];
    for (const run of [trace(items, 1, { stands: () => false }), trace(items, 3)]) {
      const { events, results } = await run;
      expect(events.indexOf("start h1")).toBeGreaterThan(Math.max(events.indexOf("end y1"), events.indexOf("end y2")));
      expect(results).toEqual(["y1", "h1", "y2", "h2"]);
    }
  });

  it("goes on past a check that rejects, and hands the rejection to its caller", async () => {
    const ran: string[] = [];
    const promises = schedule([grpc("a", "alone"), http("b"), http("c")], 2, async (item) => {
      ran.push(item.name);
      if (item.name !== "c") throw new Error(`${item.name} failed`);
      return item.name;
    });
    await expect(promises[0]).rejects.toThrow("a failed");
    await expect(promises[1]).rejects.toThrow("b failed");
    await expect(promises[2]).resolves.toBe("c");
    expect(ran).toEqual(["a", "b", "c"]);
  });

  it("refuses a limit that is not a whole number of at least 1", () => {
    expect(() => schedule([], 0, async () => undefined)).toThrow(RangeError);
    expect(() => createLimiter(1.5)).toThrow(RangeError);
  });
});

describe("createLimiter", () => {
  it("serves waiters first come first served", async () => {
    const turn = createLimiter(1);
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3].map((i) => turn(async () => (order.push(i), new Promise((r) => setTimeout(r, 1))))));
    expect(order).toEqual([0, 1, 2, 3]);
  });
});
