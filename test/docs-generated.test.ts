// The pages written from measured results, never by hand: docs/performance.md from bench/results.json (`npm run
// bench`), docs/reliability.md from test/reference-server/reliability-results.json (`npm run soak`), docs/mutation.md
// from bench/mutation-results.json and bench/mutation-equivalent.json (`npm run mutation`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../contract/paths.js";
import { performancePage, type BenchResults } from "./helpers/performance-page.js";
import { reliabilityPage } from "./helpers/reliability-page.js";
import { RELIABILITY_RESULTS, type ReliabilityResults } from "./helpers/reliability-results.js";
import { mutationPage, type EquivalentMutant } from "./mutation/mutation-page.js";
import type { MutationResults } from "./mutation/mutation-results.js";

const read = (...path: string[]) => readFileSync(join(PACKAGE_ROOT, ...path), "utf8");

describe("docs/performance.md", () => {
  it("is what the renderer makes of bench/results.json, the last whole `npm run bench`", () => {
    const results = JSON.parse(read("bench", "results.json")) as BenchResults;
    expect(read("docs", "performance.md")).toBe(performancePage(results));
  });

  it("has no figure in its prose but the results file's: the run's lines and the table aside, no digit but in code", () => {
    const results = JSON.parse(read("bench", "results.json")) as BenchResults;
    // A round trip no run measures, so that the figures rendered from it are known and can be taken out.
    const page = performancePage({ ...results, table: "", caveats: [], roundTrips: { rttMs: 9_999_998 } });
    const prose = page
      .split("\n")
      .filter((line) => !/^(Measured|Node) /.test(line))
      .join("\n")
      .replace(/`[^`]*`/g, "")
      .replace(/\]\([^)]*\)/g, "]")
      .replace(/9999998|4999999/g, "")
      .replace(/HTTP\/(2|1\.1)|\bp(50|99)\b/g, "");
    expect(prose.match(/[^\n]{0,30}\d[^\n]{0,30}/g) ?? []).toEqual([]);
  });
});

describe("docs/reliability.md", () => {
  it("is what the renderer makes of test/reference-server/reliability-results.json", () => {
    const results = JSON.parse(readFileSync(RELIABILITY_RESULTS, "utf8")) as ReliabilityResults;
    expect(read("docs", "reliability.md")).toBe(reliabilityPage(results));
  });

  it("says of every figure no run recorded that it was not measured, and prints each recorded one", () => {
    const results = JSON.parse(readFileSync(RELIABILITY_RESULTS, "utf8")) as ReliabilityResults;
    const page = reliabilityPage({ measured: {} });
    expect(page).not.toMatch(/\d+ (?:MiB|ms)\b/);
    for (const [key, entry] of Object.entries(results.measured)) {
      const line = reliabilityPage({ measured: { [key]: entry } }).split("\n").find((l) => l.includes(entry.date.slice(0, 10))) ?? "";
      expect(line, key).not.toMatch(/undefined|NaN/);
      for (const value of Object.values(entry.figures)) expect(line, key).toContain(String(value));
    }
  });
});

describe("docs/mutation.md", () => {
  const results = () => JSON.parse(read("bench", "mutation-results.json")) as MutationResults;
  const equivalents = () => JSON.parse(read("bench", "mutation-equivalent.json")) as EquivalentMutant[];

  it("is what the renderer makes of bench/mutation-results.json and bench/mutation-equivalent.json", () => {
    expect(read("docs", "mutation.md")).toBe(mutationPage(results(), equivalents()));
  });

  it("reviews only mutants that survived the last run, each with its reason, and says how many are left unexplained", () => {
    const r = results();
    for (const e of equivalents()) {
      expect(r.survived.some((m) => m.file === e.file && m.line === e.line && m.column === e.column && m.mutator === e.mutator && m.replacement === e.replacement), `${e.file}:${e.line} ${e.mutator}`).toBe(true);
      expect(e.why.trim(), `${e.file}:${e.line}`).not.toBe("");
      expect(["equivalent", "open", "killed"], `${e.file}:${e.line}`).toContain(e.kind);
    }
    const counted = r.counts.killed + r.counts.timeout + r.counts.survived + r.counts.noCoverage + r.counts.invalid;
    expect(counted).toBe(r.counts.total);
    expect(r.survived.length).toBe(r.counts.survived);
    const left = r.survived.length - equivalents().length;
    expect(read("docs", "mutation.md")).toContain(`, and ${left} are not explained yet;`);
  });
});
