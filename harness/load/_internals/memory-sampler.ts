// The load process's memory through a run: resident set and heap in use sampled when asked (once a second and at the
// end), and the heap in use just after each of V8's mark-compacts (a gc performance entry of kind major), which is
// the live heap and little garbage: a structure that grows with the calls raises it, V8's saw-tooth does not.
import { constants, PerformanceObserver } from "node:perf_hooks";

export interface MemoryRecord {
  rssMiB: number[];
  heapUsedMiB: number[];
  /** The main thread's heap in use just after each mark-compact of the run (the first MAX_AFTER_GC). */
  heapAfterMarkCompactMiB: number[];
}

const MAX_AFTER_GC = 1000;

const mib = (bytes: number): number => Math.round(bytes / 104_857.6) / 10;

/** A sampler started now: sample() records one sample, stop() ends the count and hands back the record. */
export function memorySampler(): { sample(): void; stop(): MemoryRecord } {
  const record: MemoryRecord = { rssMiB: [], heapUsedMiB: [], heapAfterMarkCompactMiB: [] };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as { detail?: { kind?: number } };
      if (detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      const after = record.heapAfterMarkCompactMiB;
      if (after.length < MAX_AFTER_GC) after.push(mib(process.memoryUsage().heapUsed));
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    sample() {
      const m = process.memoryUsage();
      record.rssMiB.push(mib(m.rss));
      record.heapUsedMiB.push(mib(m.heapUsed));
    },
    stop() {
      observer.disconnect();
      return record;
    },
  };
}
