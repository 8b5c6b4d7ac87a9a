// Issue 44 item 4: a mutant detected at one catalogue seed and not at another is named (scripts/mutation.js
// --second-seed): the comparison of two runs of one sample (test/mutation/mutation-results.ts) and its section of
// docs/mutation.md (test/mutation/mutation-page.ts).
import { describe, expect, it } from "vitest";
import { unitOf } from "../../scripts/mutation-sample.js";
import { MUTATION_META } from "../helpers/mutation-meta.js";
import { mutationPage, reviewTally } from "../mutation/mutation-page.js";
import {
  carriedOver,
  compareSeeds,
  type MutationResults,
  type StrykerReport,
  secondSeedRun,
  summariseMutation,
} from "../mutation/mutation-results.js";

// Two functions; each mutant is named by its unit, mutator, code and replacement, as a review is.
const source =
  "export function first(a: number): boolean {\n  return a > 10;\n}\n" +
  'export function second(b: string): string {\n  return b === "" ? "x" : b + "";\n}\n';
const at = (line: number, column: number, length: number) => ({
  start: { line, column },
  end: { line, column: column + length },
});
/** A report of the same five mutants, each with the status given. */
const report = (statuses: readonly string[]): StrykerReport => ({
  files: {
    "f.ts": {
      source,
      mutants: [
        { mutatorName: "ConditionalExpression", replacement: "true", location: at(2, 10, 6) },
        { mutatorName: "EqualityOperator", replacement: "a >= 10", location: at(2, 10, 6) },
        { mutatorName: "StringLiteral", replacement: '"Stryker was here!"', location: at(5, 16, 2) },
        { mutatorName: "StringLiteral", replacement: '"Stryker was here!"', location: at(5, 31, 2) },
        { mutatorName: "ConditionalExpression", replacement: "false", location: at(5, 10, 8) },
      ].map((m, i) => ({ ...m, status: statuses[i] ?? "" })),
    },
  },
});
const meta = { ...MUTATION_META, sample: { share: 0.06, seed: 44, units: 2 } };

describe("the verdicts of two catalogue seeds compared", () => {
  it("lists a mutant killed at one seed and survived at the other, with both verdicts, and no mutant of equal verdicts", () => {
    const one = report(["Killed", "Survived", "Killed", "Timeout", "Killed"]);
    const two = report(["Survived", "Survived", "Killed", "Killed", "Killed"]);
    expect(compareSeeds(one, two, unitOf)).toEqual([
      {
        file: "f.ts",
        unit: "f.ts#first",
        line: 2,
        column: 10,
        mutator: "ConditionalExpression",
        original: "a > 10",
        replacement: "true",
        first: "killed",
        second: "survived",
      },
    ]);
    expect(compareSeeds(one, one, unitOf)).toEqual([]);
  });

  it("counts a timeout as detected and a mutant not covered as not, and tells a unit's mutants of one name apart", () => {
    const one = report(["Killed", "Killed", "Survived", "Timeout", "NoCoverage"]);
    const two = report(["Killed", "Killed", "Survived", "Survived", "Killed"]);
    expect(
      compareSeeds(one, two, unitOf).map((m) => [m.unit, m.line, m.column, m.occurrence, m.first, m.second]),
    ).toEqual([
      ["f.ts#second", 5, 10, undefined, "noCoverage", "killed"],
      ["f.ts#second", 5, 31, 2, "timeout", "survived"],
    ]);
    // The two "" of second(), one survived and one killed at both seeds: each compared with itself, not its twin.
    const mixed = report(["Killed", "Killed", "Survived", "Killed", "Killed"]);
    expect(compareSeeds(mixed, mixed, unitOf)).toEqual([]);
  });

  it("leaves out a mutant that did not run at either seed (a compile or runtime error of its own)", () => {
    const one = report(["CompileError", "Killed", "Killed", "Killed", "Killed"]);
    const two = report(["Survived", "Killed", "Killed", "Killed", "Killed"]);
    expect(compareSeeds(one, two, unitOf)).toEqual([]);
  });
});

describe("what a run records when it tested nothing anew", () => {
  const recorded = {
    ...summariseMutation(
      report(["Killed", "Survived", "Killed", "Timeout", "Killed"]),
      { ...MUTATION_META, durationS: 240 },
      unitOf,
    ),
    secondSeed: secondSeedRun(report(["Killed"]), report(["Killed"]), {
      seed: 2,
      date: "2026-11-27T01:00:00.000Z",
      concurrency: 2,
      unitOf,
    }),
  };
  const rerun = (statuses: readonly string[], meta = {}) =>
    summariseMutation(report(statuses), { ...MUTATION_META, durationS: 3, ...meta }, unitOf);

  it("keeps the recorded run's duration and second seed when every verdict was reused and came out the same", () => {
    const kept = carriedOver(recorded, rerun(["Killed", "Survived", "Killed", "Timeout", "Killed"]), false);
    expect(kept.durationS).toBe(240);
    expect(kept.secondSeed).toEqual(recorded.secondSeed);
  });

  it("records its own when it tested anew, when a verdict changed, or when the catalogue did", () => {
    const same = ["Killed", "Survived", "Killed", "Timeout", "Killed"];
    for (const [fresh, tested] of [
      [rerun(same), true],
      [rerun(["Killed", "Killed", "Killed", "Timeout", "Killed"]), false],
      [rerun(same, { catalogueDigest: "1" }), false],
      [rerun(same, { catalogueSeed: 2 }), false],
    ] as const) {
      const out = carriedOver(recorded, fresh, tested);
      expect(out.durationS).toBe(3);
      expect(out.secondSeed).toBeUndefined();
    }
    expect(carriedOver(undefined, rerun(same), false).durationS).toBe(3);
  });
});

describe("docs/mutation.md's section on the seed", () => {
  const recorded = (second?: MutationResults["secondSeed"]): MutationResults => ({
    ...summariseMutation(report(["Killed", "Survived", "Killed", "Timeout", "Killed"]), meta, unitOf),
    ...(second && { secondSeed: second }),
  });
  const section = (page: string) => page.slice(page.indexOf("## Verdicts that depend on the seed"));

  it("says which seed the score is from", () => {
    expect(mutationPage(recorded(), [])).toContain("Score 80 % at the catalogue's seed 1:");
  });

  it("names each mutant whose verdict depends on the seed, with both verdicts, or says there is none", () => {
    const one = report(["Killed", "Survived", "Killed", "Timeout", "Killed"]);
    const flips = secondSeedRun(one, report(["Survived", "Survived", "Killed", "Timeout", "Killed"]), {
      seed: 2,
      date: "2026-11-27T01:00:00.000Z",
      durationS: 600,
      concurrency: 2,
      unitOf,
    });
    expect(flips.score).toBe(60);
    const page = section(mutationPage(recorded(flips), []));
    expect(page).toContain("The same sample at the catalogue's seed 2 (2026-11-27, in 10 min): score 60 %");
    expect(page).toContain("| f.ts:2:10 (first) | ConditionalExpression | `a > 10` | `true` | killed | survived |");
    expect(page).not.toContain("a >= 10");

    const same = secondSeedRun(one, one, { seed: 2, date: "2026-11-27T01:00:00.000Z", concurrency: 2, unitOf });
    expect(section(mutationPage(recorded(same), []))).toContain(
      "None: every mutant's verdict is the same at seeds 1 and 2.",
    );
  });

  it("says when no second seed was run against the results", () => {
    expect(section(mutationPage(recorded(), []))).toContain("No second seed was run");
  });
});

describe("the share of the mutants not reviewed as equivalent that a run detected, as its last line prints it", () => {
  it("counts killed and timed out as detected, takes out equivalent and open reviews, adds those killed since", () => {
    const results = summariseMutation(
      report(["Killed", "Survived", "Survived", "NoCoverage", "Timeout"]),
      meta,
      unitOf,
    );
    const reviews = [
      { unit: "f.ts#first", mutator: "EqualityOperator", original: "a > 10", replacement: "a >= 10" },
      { unit: "f.ts#second", mutator: "StringLiteral", original: '""', replacement: '"Stryker was here!"' },
    ];
    const tally = reviewTally(results, [
      { ...(reviews[0] as (typeof reviews)[0]), kind: "open", why: "left open" },
      { ...(reviews[1] as (typeof reviews)[0]), occurrence: 1, kind: "killed", why: "a sharper check" },
    ]);
    // 5 mutants: 2 detected, 1 reviewed open (out of the share), 1 killed since, 1 not explained (the second "").
    expect(tally).toEqual({
      undetected: 3,
      same: 0,
      open: 1,
      unreached: 0,
      killedSince: 1,
      unexplained: 1,
      detected: 2,
      share: 75,
    });
    expect(reviewTally(results, []).share).toBe(40);
    // Reached by no request of a run against one server: named apart, out of the share like open.
    const unreached = reviewTally(results, [
      { ...(reviews[0] as (typeof reviews)[0]), kind: "unreached", why: "TLS only" },
      { ...(reviews[1] as (typeof reviews)[0]), occurrence: 1, kind: "killed", why: "a sharper check" },
    ]);
    expect(unreached).toMatchObject({ open: 0, unreached: 1, share: 75 });
    expect(
      mutationPage(results, [{ ...(reviews[0] as (typeof reviews)[0]), kind: "unreached", why: "TLS only" }]),
    ).toContain("not reached by a run against one server: TLS only");
  });
});
