// The call budget: counts every call, refuses past the limit, and spaces calls out at the rate.
import { describe, expect, it } from "vitest";
import { CallBudget } from "../../../harness/targets/budget.js";

describe("CallBudget", () => {
  it("refuses the call past the budget with a message naming --max-rpcs", async () => {
    const budget = new CallBudget({ maxCalls: 2, rate: Infinity });
    await budget.take();
    await budget.take();
    await expect(budget.take()).rejects.toThrow(/budget of 2 calls is spent \(--max-rpcs\)/);
    expect(budget.used).toBe(2);
  });

  it("spaces calls at the rate (measured, not asserted as a wall-clock limit: only the lower bound)", async () => {
    const budget = new CallBudget({ maxCalls: 10, rate: 100 });
    const t0 = performance.now();
    for (let i = 0; i < 4; i++) await budget.take();
    // Four calls at 100/s: the last starts at least 30 ms after the first.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
  });
});
