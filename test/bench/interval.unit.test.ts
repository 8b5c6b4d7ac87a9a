// The bench's statistics (test/bench/interval.ts): a confidence interval over per-round figures and the status of a
// target read from it. Pure: known inputs, known answers.
import { describe, expect, it } from "vitest";
import { meanInterval, ratioInterval, targetStatus, tQuantile975 } from "./interval.js";

/** A fixed sequence of noise in [-1, 1) (a linear congruential generator): the same rounds on every run. */
function noise(count: number, seed = 7): number[] {
  const out: number[] = [];
  let s = seed;
  for (let i = 0; i < count; i++) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    out.push((s / 2 ** 31) * 2 - 1);
  }
  return out;
}

describe("tQuantile975", () => {
  it("is the t-distribution's two-sided 95 % point: the table's values, and the normal's far out", () => {
    expect(tQuantile975(1)).toBeCloseTo(12.706, 3);
    expect(tQuantile975(4)).toBeCloseTo(2.776, 3);
    expect(tQuantile975(19)).toBeCloseTo(2.093, 3);
    expect(tQuantile975(40)).toBeCloseTo(2.021, 3);
    expect(tQuantile975(120)).toBeCloseTo(1.98, 3);
    expect(tQuantile975(1e9)).toBeCloseTo(1.96, 3);
  });
});

describe("meanInterval", () => {
  it("gives identical rounds a zero-width interval at their value", () => {
    const i = meanInterval([1.1, 1.1, 1.1, 1.1, 1.1]);
    expect(i).toMatchObject({ mean: 1.1, n: 5, level: 0.95 });
    expect(i.low).toBeCloseTo(1.1, 12);
    expect(i.high).toBeCloseTo(1.1, 12);
    expect(targetStatus(i, { atLeast: 0.95 })).toBe("met");
  });

  it("is the mean plus or minus t times the standard error", () => {
    // mean 2, sample standard deviation 1, n 4: half-width 3.182 / 2.
    const a = Math.sqrt(1.5);
    const i = meanInterval([2 - a, 2, 2, 2 + a]);
    expect(i.mean).toBeCloseTo(2, 6);
    expect(i.high! - i.mean!).toBeCloseTo(3.182 / 2, 3);
    expect(i.mean! - i.low!).toBeCloseTo(3.182 / 2, 3);
  });

  it("has no interval for one round or none: the target is not resolved", () => {
    expect(meanInterval([0.5])).toMatchObject({ mean: 0.5, low: null, high: null, n: 1 });
    expect(meanInterval([])).toMatchObject({ mean: null, low: null, high: null, n: 0 });
    expect(targetStatus(meanInterval([2]), { atLeast: 0.95 })).toBe("not resolved");
  });

  it("resolves a clear 10 % difference over 20 rounds of 5 % noise, either way", () => {
    const e = noise(20);
    const below = meanInterval(e.map((x) => 0.855 * (1 + 0.05 * x)));
    const above = meanInterval(e.map((x) => 1.045 * (1 + 0.05 * x)));
    expect(targetStatus(below, { atLeast: 0.95 })).toBe("not met");
    expect(targetStatus(above, { atLeast: 0.95 })).toBe("met");
    expect(below.high!).toBeLessThan(0.95);
    expect(above.low!).toBeGreaterThanOrEqual(0.95);
  });

  it("leaves 3 rounds of 40 % noise not resolved, though their mean is well clear of the target", () => {
    const i = meanInterval([1.1 * 0.6, 1.1 * 1.4, 1.1 * 1.2]);
    expect(i.mean!).toBeGreaterThan(0.95);
    expect(targetStatus(i, { atLeast: 0.95 })).toBe("not resolved");
  });
});

describe("ratioInterval", () => {
  it("is the geometric mean's interval: a ratio's and its inverse's bounds are each other's inverses", () => {
    const rounds = [0.8, 0.9, 1.1, 0.95, 1.02];
    const i = ratioInterval(rounds);
    const inverse = ratioInterval(rounds.map((x) => 1 / x));
    expect(i.mean! * inverse.mean!).toBeCloseTo(1, 12);
    expect(i.low! * inverse.high!).toBeCloseTo(1, 12);
    expect(i.high! * inverse.low!).toBeCloseTo(1, 12);
    expect(i.mean!).toBeCloseTo(Math.exp(rounds.reduce((a, x) => a + Math.log(x), 0) / rounds.length), 12);
  });

  it("never reaches zero or below, however noisy the rounds", () => {
    const i = ratioInterval([0.2, 3, 0.5]);
    expect(i.low!).toBeGreaterThan(0);
    expect(targetStatus(i, { atLeast: 0.95 })).toBe("not resolved");
  });

  it("gives identical rounds a zero-width interval, and one round none", () => {
    const i = ratioInterval([0.97, 0.97, 0.97]);
    expect(i.low!).toBeCloseTo(0.97, 12);
    expect(i.high!).toBeCloseTo(0.97, 12);
    expect(ratioInterval([0.97])).toMatchObject({ low: null, high: null, n: 1 });
    expect(ratioInterval([])).toMatchObject({ mean: null, n: 0 });
  });

  it("resolves a clear 10 % difference over 20 rounds of 5 % noise, and not 3 rounds of 40 %", () => {
    const e = noise(20, 11);
    expect(targetStatus(ratioInterval(e.map((x) => 0.855 * (1 + 0.05 * x))), { atLeast: 0.95 })).toBe("not met");
    expect(targetStatus(ratioInterval(e.map((x) => 1.045 * (1 + 0.05 * x))), { atLeast: 0.95 })).toBe("met");
    expect(targetStatus(ratioInterval([1.1 * 0.6, 1.1 * 1.4, 1.1 * 1.2]), { atLeast: 0.95 })).toBe("not resolved");
  });
});

describe("targetStatus", () => {
  const at = (low: number, high: number) => ({ mean: (low + high) / 2, low, high, n: 10, level: 0.95 as const });

  it("meets 'at least' by the lower bound and misses it by the upper", () => {
    expect(targetStatus(at(0.95, 1.2), { atLeast: 0.95 })).toBe("met");
    expect(targetStatus(at(0.9, 0.9499), { atLeast: 0.95 })).toBe("not met");
    expect(targetStatus(at(0.94, 0.96), { atLeast: 0.95 })).toBe("not resolved");
  });

  it("meets 'at most' by the upper bound and misses it by the lower", () => {
    expect(targetStatus(at(0.8, 1), { atMost: 1 })).toBe("met");
    expect(targetStatus(at(1.01, 1.3), { atMost: 1 })).toBe("not met");
    expect(targetStatus(at(0.9, 1.1), { atMost: 1 })).toBe("not resolved");
  });

  it("meets 'below' only strictly under it, and misses it from the bound up", () => {
    expect(targetStatus(at(800, 999), { below: 1000 })).toBe("met");
    expect(targetStatus(at(900, 1000), { below: 1000 })).toBe("not resolved");
    expect(targetStatus(at(1000, 1300), { below: 1000 })).toBe("not met");
  });
});
