// The sample `npm run mutation` draws (scripts/mutation-sample.js): by code unit, so that a change of a file's lines
// leaves it as it was, and a review (bench/mutation-equivalent.json) names its mutant so that it outlives a line move.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../common/paths.js";
import {
  codeUnits,
  DEFAULT_SAMPLE_SEED,
  DEFAULT_SHARE,
  MUTATION_FILES,
  mutationSample,
  sampleFromEnv,
  unitOf,
} from "../../scripts/mutation-sample.js";
import { MUTATION_META } from "../helpers/mutation-meta.js";
import { mutationPage, type EquivalentMutant } from "../mutation/mutation-page.js";
import { type MutationResults, summariseMutation, type UndetectedMutant } from "../mutation/mutation-results.js";

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A copy of the mutated files, each changed by `edit`. */
function copyOf(edit: (file: string, source: string) => string): string {
  const root = mkdtempSync(join(tmpdir(), "mutation-sample-"));
  roots.push(root);
  for (const file of MUTATION_FILES) {
    cpSync(join(PACKAGE_ROOT, file), join(root, file));
    writeFileSync(join(root, file), edit(file, readFileSync(join(PACKAGE_ROOT, file), "utf8")));
  }
  return root;
}

/**
 * The code a mutate range covers, whatever its form: "file:first-last" (lines) or "file:line:column-line:column"
 * (columns 0-based, the end exclusive), read from the files under root.
 */
function covered(root: string, range: string): string {
  const m = /^(.*?):(\d+)(?::(\d+))?-(\d+)(?::(\d+))?$/.exec(range);
  if (m === null) throw new Error(`not a range: ${range}`);
  const [, file = "", first, firstColumn, last, lastColumn] = m;
  const lines = readFileSync(join(root, file), "utf8")
    .split("\n")
    .slice(Number(first) - 1, Number(last));
  if (lastColumn !== undefined) lines[lines.length - 1] = (lines.at(-1) ?? "").slice(0, Number(lastColumn));
  if (firstColumn !== undefined) lines[0] = (lines[0] ?? "").slice(Number(firstColumn));
  return `${file}\n${lines.join("\n")}`;
}

/** Three comment lines above the first function declared past the middle of the file (the top when there is none). */
function linesAboveAFunction(_file: string, source: string): string {
  const lines = source.split("\n");
  const at = lines.findIndex((l, i) => i > lines.length / 2 && /^(export )?(async )?function /.test(l));
  lines.splice(Math.max(at, 0), 0, "// a comment", "// reflowed over", "// three lines");
  return lines.join("\n");
}

describe("the mutation sample", () => {
  const same = copyOf((_f, s) => s);
  const moved = copyOf(linesAboveAFunction);

  it("draws the same code when lines are inserted above a function", () => {
    for (const share of [DEFAULT_SHARE, 0.3]) {
      const before = mutationSample({ share, seed: DEFAULT_SAMPLE_SEED, root: same });
      const after = mutationSample({ share, seed: DEFAULT_SAMPLE_SEED, root: moved });
      // The ranges move with the lines (the test would prove nothing otherwise), the code they cover does not.
      expect(after).not.toEqual(before);
      expect(after.map((r) => covered(moved, r))).toEqual(before.map((r) => covered(same, r)));
    }
  });

  it("draws another sample at another seed or share, a larger share taking in the smaller's", () => {
    const base = mutationSample({ root: same });
    expect(mutationSample({ seed: DEFAULT_SAMPLE_SEED + 1, root: same })).not.toEqual(base);
    const larger = mutationSample({ share: 0.3, root: same });
    expect(larger).not.toEqual(base);
    expect(larger).toEqual(expect.arrayContaining(base));
    expect(mutationSample({ share: 1, root: same }).length).toBeGreaterThan(larger.length);
  });

  it("takes the share and the seed from the environment, and refuses what is neither", () => {
    expect(sampleFromEnv({})).toEqual({ share: DEFAULT_SHARE, seed: DEFAULT_SAMPLE_SEED });
    expect(sampleFromEnv({ EXAMPLE_CONFORMANCE_MUTATION_SAMPLE: "all" })).toBe("all");
    expect(
      sampleFromEnv({ EXAMPLE_CONFORMANCE_MUTATION_SAMPLE: "0.5", EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED: "7" }),
    ).toEqual({ share: 0.5, seed: 7 });
    expect(() => sampleFromEnv({ EXAMPLE_CONFORMANCE_MUTATION_SAMPLE: "2" })).toThrow(/share in \(0, 1\]/);
    expect(() => sampleFromEnv({ EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED: "x" })).toThrow(/integer/);
  });
});

const SOURCE = `import { x } from "./x.js";

export interface Shape {
  a: number;
}

export const LIMIT = 4 * 1024;

/** Doc. */
export function first(a: number): number {
  return a > LIMIT ? 1 : 2;
}

class Store {
  private count = 0;
  get size(): number {
    return this.count;
  }
  put(v: string): void {
    this.count += v.length;
  }
}

const arrow = (s: string) => s.trim();

export function long(n: number): number[] {
  const out: number[] = [];
${Array.from({ length: 40 }, (_, i) => `  if (n > ${i}) out.push(n * ${i} + 1);`).join("\n")}
  return out;
}
`;

const keys = (source: string) => codeUnits("f.ts", source).map((u) => u.key);

describe("code units", () => {
  it("are named by declaration, class and member, a long function by its statements, never by line", () => {
    const k = keys(SOURCE);
    expect(k.slice(0, 6)).toEqual([
      "f.ts#LIMIT",
      "f.ts#first",
      "f.ts#Store.count",
      "f.ts#Store.size",
      "f.ts#Store.put",
      "f.ts#arrow",
    ]);
    expect(k).toContain("f.ts#long/out");
    expect(k).toContain("f.ts#long/return");
    expect(k.filter((key) => key.startsWith("f.ts#long/if@"))).toHaveLength(40);
    expect(new Set(k).size).toBe(k.length);
    for (const key of k) expect(key).not.toMatch(/\d+-\d+|:\d+/);
  });

  it("keep their keys when lines move, a comment is reflowed, or another function comes or goes", () => {
    const before = keys(SOURCE);
    const reflowed = SOURCE.replace("/** Doc. */", "/**\n * Doc,\n * reflowed.\n */").replace(
      "return a > LIMIT",
      "// why\n  return a >\n    LIMIT",
    );
    expect(keys(reflowed)).toEqual(before);
    const added = SOURCE.replace("class Store", "function added(): number {\n  return 1;\n}\n\nclass Store");
    expect(keys(added).filter((key) => key !== "f.ts#added")).toEqual(before);
    expect(keys(SOURCE.replace(/const arrow = .*\n/, ""))).toEqual(before.filter((key) => key !== "f.ts#arrow"));
  });

  it("name the unit a mutant lies in from its location (columns 1-based, as Stryker's report gives them)", () => {
    const lines = SOURCE.split("\n");
    const line = lines.findIndex((l) => l.includes("this.count += v.length")) + 1;
    const column = (lines[line - 1] ?? "").indexOf("+=") + 1;
    expect(unitOf("f.ts", SOURCE, { start: { line, column }, end: { line, column: column + 2 } })).toBe(
      "f.ts#Store.put",
    );
    expect(unitOf("f.ts", SOURCE, { start: { line: 1, column: 1 }, end: { line: 1, column: 5 } })).toBe("f.ts");
  });
});

describe("a review of a mutant", () => {
  const mutant = (line: number): UndetectedMutant => ({
    file: "f.ts",
    unit: "f.ts#first",
    line,
    column: 10,
    mutator: "ConditionalExpression",
    original: "a > LIMIT",
    replacement: "true",
  });
  const results = (m: UndetectedMutant): MutationResults => ({
    ...MUTATION_META,
    counts: { total: 1, killed: 0, timeout: 0, survived: 1, noCoverage: 0, invalid: 0 },
    files: { "f.ts": { total: 1, killed: 0, timeout: 0, survived: 1, noCoverage: 0, invalid: 0 } },
    score: 0,
    survived: [m],
    noCoverage: [],
  });
  const review: EquivalentMutant = {
    unit: "f.ts#first",
    mutator: "ConditionalExpression",
    original: "a > LIMIT",
    replacement: "true",
    kind: "open",
    why: "the limit is left open",
  };

  it("still applies when the mutant's lines move, and not to another change of the same unit", () => {
    for (const line of [11, 40]) {
      const page = mutationPage(results(mutant(line)), [review]);
      expect(page).toContain(`f.ts:${line}:10 (first)`);
      expect(page).toContain("left open by the spec: the limit is left open");
      expect(page).toContain(", and 0 are not explained yet;");
    }
    const other = mutationPage(results({ ...mutant(11), replacement: "false" }), [review]);
    expect(other).toContain(", and 1 are not explained yet;");
  });
});

describe("mutants of one name in one unit", () => {
  // Two "" in one function, each to "Stryker was here!": one name (unit, mutator, code, replacement), told apart by
  // their place among the unit's mutants of that name, so that each can have its own review.
  const source = 'export function f(a: string): string {\n  const b = a === "" ? "x" : a;\n  return b + "";\n}\n';
  const at = (line: number, column: number) => ({
    start: { line, column },
    end: { line, column: column + 2 },
  });
  const report = {
    files: {
      "f.ts": {
        source,
        mutants: [
          { mutatorName: "StringLiteral", replacement: '"Stryker was here!"', status: "Survived", location: at(3, 14) },
          { mutatorName: "StringLiteral", replacement: '"Stryker was here!"', status: "Survived", location: at(2, 19) },
        ],
      },
    },
  };
  const meta = { ...MUTATION_META, sample: { share: 1, seed: 44, units: 1 } };

  it("are numbered in source order, and a review of one number is of that one alone", () => {
    const results = summariseMutation(report, meta, unitOf);
    expect(results.survived.map((m) => [m.unit, m.line, m.original, m.occurrence])).toEqual([
      ["f.ts#f", 2, '""', 1],
      ["f.ts#f", 3, '""', 2],
    ]);
    const review: EquivalentMutant = {
      unit: "f.ts#f",
      mutator: "StringLiteral",
      original: '""',
      replacement: '"Stryker was here!"',
      occurrence: 2,
      kind: "equivalent",
      why: "the second",
    };
    expect(mutationPage(results, [review])).toContain(", and 1 are not explained yet;");
    const { occurrence: _, ...ofBoth } = review;
    expect(mutationPage(results, [ofBoth])).toContain(", and 0 are not explained yet;");
  });
});
