// The house's shape, read from the source with the TypeScript compiler: no import circle, the engine never reaches
// for the checks, a protocol is reached only through its public file, and no function runs past a screen.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../common/paths.js";
import { circles, functionLengths, importGraph, PRODUCT_DIRS, productFiles } from "./architecture-source.js";

const graph = importGraph();
const arrows = [...graph].flatMap(([from, tos]) => tos.map((to) => ({ from, to })));

/** The composition roots: the only files of harness/ that import the catalogue, to hand it to the engine. */
const COMPOSITION_ROOTS = ["harness/cli/catalogue.ts", "harness/api/run-conformance.ts"];

/** Functions allowed past the rule, each with the issue that will split it (none now: every one has been split). */
const KNOWN_LONG = new Map<string, number>([]);

/** A function counted whole, the functions nested in it included, is at most this long (issue 42 item 6). */
const MAX_WHOLE_LINES = 80;
/** Functions past that, each at its length, to be split by job (none now: every one has been split). */
const KNOWN_LONG_WHOLE = new Map<string, number>([]);
const MAX_OWN_LINES = 60;

describe("the import graph", () => {
  it("reads the product's imports (the graph is not empty)", () => {
    expect(graph.size).toBeGreaterThan(150);
    expect(arrows.length).toBeGreaterThan(500);
  });

  it("has no circle", () => {
    expect(circles(graph).map((c) => c.join(" -> "))).toEqual([]);
  });

  it("has no arrow from harness/ to suites/ but from the composition roots", () => {
    const up = arrows.filter(
      ({ from, to }) => from.startsWith("harness/") && to.startsWith("suites/") && !COMPOSITION_ROOTS.includes(from),
    );
    expect(up.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it("reaches a protocol's folder only through its index.ts", () => {
    const folder = (f: string) => /^harness\/protocols\/([^/]+)\//.exec(f)?.[1];
    const inside = arrows.filter(
      ({ from, to }) =>
        folder(to) !== undefined && folder(from) !== folder(to) && !to.endsWith(`/${folder(to)}/index.ts`),
    );
    expect(inside.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });
});

describe("function lengths", () => {
  const all = productFiles(["harness", "suites", "reference-server", "proto"]).flatMap(functionLengths);

  it("measures every function (a file of the engine is read)", () => {
    expect(all.length).toBeGreaterThan(1000);
    expect(all.find((f) => f.file === "harness/limiter.ts" && f.name === "createLimiter")?.own).toBeGreaterThan(5);
  });

  it(`keeps every product function within ${MAX_OWN_LINES} lines of its own (nested functions counted apart)`, () => {
    const long = all.filter((f) => f.own > MAX_OWN_LINES && (KNOWN_LONG.get(`${f.file} ${f.name}`) ?? 0) < f.own);
    expect(long.map((f) => `${f.file}:${f.line} ${f.name}: ${f.own} lines`)).toEqual([]);
  });

  it("lists as known only functions that are still long", () => {
    for (const key of KNOWN_LONG.keys())
      expect(
        all.some((f) => `${f.file} ${f.name}` === key && f.own > MAX_OWN_LINES),
        key,
      ).toBe(true);
  });

  it(
    `keeps every product function within ${MAX_WHOLE_LINES} lines counted whole (nested functions included), but ` +
      `for the known ones, which do not grow`,
    () => {
      const long = all.filter(
        (f) => f.whole > MAX_WHOLE_LINES && (KNOWN_LONG_WHOLE.get(`${f.file} ${f.name}`) ?? 0) < f.whole,
      );
      expect(long.map((f) => `${f.file}:${f.line} ${f.name}: ${f.whole} lines whole`)).toEqual([]);
    },
  );

  it("lists as known long whole only functions that still are", () => {
    for (const key of KNOWN_LONG_WHOLE.keys())
      expect(
        all.some((f) => `${f.file} ${f.name}` === key && f.whole > MAX_WHOLE_LINES),
        key,
      ).toBe(true);
  });
});

describe("line length", () => {
  it("keeps every product line within 120 characters, comments and strings included (issue 42 item 5)", () => {
    const files = productFiles([...PRODUCT_DIRS, "fixtures"]).filter((f) => !f.includes("node_modules"));
    expect(files.length).toBeGreaterThan(150);
    const long = files.flatMap((f) =>
      readFileSync(join(PACKAGE_ROOT, f), "utf8")
        .split("\n")
        .flatMap((line, i) => (line.length > 120 ? [`${f}:${i + 1}: ${line.length} characters`] : [])),
    );
    expect(long).toEqual([]);
  });
});
