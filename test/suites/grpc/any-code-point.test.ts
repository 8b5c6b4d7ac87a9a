// anyCodePoint stands in for fast-check's "binary" string unit: the same cases and the same shrinks at a seed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anyCodePoint } from "../../../suites/grpc/_internals/any-code-point.js";

const strings = (unit: fc.Arbitrary<string> | "binary") =>
  fc.oneof(fc.string({ unit, maxLength: 64 }), fc.string({ unit, minLength: 1024, maxLength: 4096 }));

describe("anyCodePoint", () => {
  it.each([1, 42, 123456])('draws what unit "binary" draws at seed %i', (seed) => {
    expect(fc.sample(strings(anyCodePoint), { seed, numRuns: 300 })).toEqual(
      fc.sample(strings("binary"), { seed, numRuns: 300 }),
    );
  });

  it("shrinks a failure to the same counterexample along the same path", () => {
    const run = (unit: fc.Arbitrary<string> | "binary") =>
      fc.check(
        fc.property(strings(unit), (s) => !/[\u{10000}-\u{10FFFF}]/u.test(s)),
        { seed: 3, numRuns: 200, examples: [["\u{10FFFF}".repeat(3)]] },
      );
    const ours = run(anyCodePoint);
    const theirs = run("binary");
    expect(ours.failed).toBe(true);
    expect([ours.counterexample, ours.counterexamplePath, ours.numShrinks]).toEqual([
      theirs.counterexample,
      theirs.counterexamplePath,
      theirs.numShrinks,
    ]);
  });

  it("refuses to unmap what is not one code point", () => {
    for (const v of ["", "ab", "\ud800", 7]) expect(anyCodePoint.canShrinkWithoutContext(v)).toBe(false);
    expect(anyCodePoint.canShrinkWithoutContext("\u{10FFFF}")).toBe(true);
  });
});
