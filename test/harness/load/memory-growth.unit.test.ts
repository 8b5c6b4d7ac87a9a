// How a load run's memory growth is read (harness/load/memory-growth.ts): the second half's highest sample less the
// first half's, so that V8's climb to its first mark-compact and the saw-tooth after it read as the plateau they are,
// and a creep does not. The series are resident sets measured on this machine (every 5th second's sample) of `load
// --connect` over 64 HTTP/1.1 connections to the reference.
import { describe, expect, it } from "vitest";
import { memoryGrowth } from "../../../harness/load/memory-growth.js";

/** 300 s: young generation doubled by 10 s, old-space garbage piled up to the first mark-compact at about 62 s. */
const PLATEAU_300S = [
  81.5, 95.3, 97.5, 99.1, 100.5, 102, 102.6, 103.8, 104.6, 105.3, 106.1, 107.1, 106.3, 106.3, 106.3, 106.3, 106.3,
  106.4, 100.8, 100.8, 100.8, 100.8, 100.8, 100.8, 100.8, 101.3, 100.8, 100.8, 101.1, 101.1, 101.1, 101.1, 101.1, 101.1,
  101.8, 101.8, 102, 102.7, 102.8, 103.1, 103.1, 103.2, 102.8, 102.8, 103, 103, 103, 103, 103, 103, 103, 103, 103, 103,
  103, 102.8, 102.8, 102.8, 102.8, 102.8,
];
/** The first 60 s of such a run, the young generation doubled at 25 s: it ends before the first mark-compact. */
const CLIMB_60S = [75, 81.9, 82.1, 81.6, 93.1, 94.4, 95.1, 96, 98, 99.5, 101, 105];

const series = (rssMiB: number[]) => ({ rssMiB, heapUsedMiB: rssMiB.map(() => 20) });

describe("memoryGrowth", () => {
  it("reads a run that plateaus as flat: its second half reaches no higher than its first", () => {
    const g = memoryGrowth(series(PLATEAU_300S));
    expect(g.rss).toBe(-3.9);
    expect(g.heapUsed).toBe(0);
  });

  it("reads a creep as the rise of its second half: 0.23 MiB a second over 120 s grows about 14 MiB", () => {
    const creep = Array.from({ length: 121 }, (_, s) => 90 + 0.23 * s);
    expect(memoryGrowth(series(creep)).rss).toBe(14);
  });

  it("sees the climb in a 60 s run, which ends before V8's first mark-compact (why the bench runs 120 s)", () => {
    expect(memoryGrowth(series(CLIMB_60S)).rss).toBe(10.6);
  });

  it("reads each series apart: a heap that saw-tooths below its first peak is flat", () => {
    const heap = [12, 30, 18, 35, 9, 24, 33, 10, 22, 31];
    expect(memoryGrowth({ rssMiB: heap.map(() => 100), heapUsedMiB: heap })).toEqual({ rss: 0, heapUsed: -2 });
  });

  it("says 0 with fewer than two samples (a run under a second)", () => {
    expect(memoryGrowth({ rssMiB: [80], heapUsedMiB: [12] })).toEqual({ rss: 0, heapUsed: 0 });
    expect(memoryGrowth({ rssMiB: [], heapUsedMiB: [] })).toEqual({ rss: 0, heapUsed: 0 });
  });
});
