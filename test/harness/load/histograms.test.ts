// A load run's latency figures: no percentile is shown above the largest latency recorded, though HdrHistogram
// answers a percentile with the top of its bucket (a run's p99 of 100.223 ms beside its max of 100.191 ms).
import { describe, expect, it } from "vitest";
import { newHistogram } from "../../../harness/load/_internals/drive.js";
import { latencyFigures } from "../../../harness/load/histograms.js";

describe("latencyFigures", () => {
  it("never shows a percentile above the max", () => {
    const h = newHistogram();
    for (const us of [1_200, 2_400, 100_191]) h.recordValue(us);
    const f = latencyFigures(h);
    expect(f.max).toBe(100.191);
    for (const p of [f.p50, f.p90, f.p99, f["p99.9"]]) expect(p).toBeLessThanOrEqual(f.max);
    expect(f.p99).toBe(100.191);
    // Below the top, a percentile is still the histogram's own figure.
    expect(f.p50).toBeGreaterThanOrEqual(2.4);
  });
});
