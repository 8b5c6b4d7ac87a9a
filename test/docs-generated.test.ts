// The pages written from measured results, never by hand: docs/performance.md from bench/results.json (`npm run
// bench`), docs/reliability.md from test/reference-server/reliability-results.json (`npm run soak`), docs/mutation.md
// from bench/mutation-results.json and bench/mutation-equivalent.json (`npm run mutation`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../common/paths.js";
import { ratioInterval, targetStatus } from "./bench/interval.js";
import { performancePage, type BenchResults } from "./helpers/performance-page.js";
import { reliabilityPage } from "./helpers/reliability-page.js";
import { RELIABILITY_RESULTS, type ReliabilityResults } from "./helpers/reliability-results.js";
import { codeUnits, MUTATION_FILES } from "../scripts/mutation-sample.js";
import { mutationPage, sameMutant, type EquivalentMutant } from "./mutation/mutation-page.js";
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
    const page = performancePage({
      ...results,
      table: "",
      targets: [],
      caveats: [],
      roundTrips: { rttMs: 9_999_998 },
      ...(results.referenceCost && { referenceCost: { ...results.referenceCost, lines: [] } }),
    });
    const prose = page
      .split("\n")
      .filter((line) => !/^(Measured|Node|Load average) /.test(line))
      .join("\n")
      .replace(/`[^`]*`/g, "")
      .replace(/\]\([^)]*\)/g, "]")
      .replace(/9999998|4999999/g, "")
      .replace(/HTTP\/(2|1\.1)|\bp(50|99)\b/g, "");
    expect(prose.match(/[^\n]{0,30}\d[^\n]{0,30}/g) ?? []).toEqual([]);
  });
});

describe("docs/performance.md's section on one call's cost", () => {
  const results = JSON.parse(read("bench", "results.json")) as BenchResults;

  it("shows bench/reference-cost.js's last recorded run, each line of its summary, and says so when there is none", () => {
    const referenceCost = {
      date: "2026-01-02T03:04:05.000Z",
      loadAverageAtStart: [0.5, 0.4, 0.3],
      rounds: 9,
      lines: ["reference: per call 50.0 µs CPU", "plain: per call 48.0 µs CPU"],
    };
    const page = performancePage({ ...results, referenceCost });
    expect(page).toContain("## One call's cost: the reference against plain grpc-js");
    expect(page).toContain("Measured 2026-01-02 at 03:04 UTC");
    for (const line of referenceCost.lines) expect(page.split("\n")).toContain(`- ${line}`);
    const { referenceCost: _, ...without } = results;
    expect(performancePage(without)).toContain("No run of it is recorded.");
  });
});

describe("bench/results.json's targets", () => {
  const results = JSON.parse(read("bench", "results.json")) as BenchResults & {
    ratios: Record<string, { rounds: number[]; mean: number; low: number; high: number; n: number }>;
  };
  const page = read("docs", "performance.md");

  it("keeps every round of each ratio, and the interval is the one its rounds give", () => {
    expect(Object.keys(results.ratios).length).toBeGreaterThan(0);
    for (const [name, r] of Object.entries(results.ratios)) {
      expect(r.rounds, name).toHaveLength(results.rounds);
      const again = ratioInterval(r.rounds);
      // The rounds are stored to 3 places, as are the bounds: within 1 % (a few rounds' wide t multiplies the
      // rounding).
      for (const k of ["mean", "low", "high"] as const)
        expect(Math.abs(r[k] - (again[k] ?? NaN)), `${name} ${k}`).toBeLessThan(Math.max(0.002, 0.01 * r[k]));
    }
  });

  it("calls each target met, not met or not resolved by its interval, and the page shows each with its interval", () => {
    const targets = results.targets ?? [];
    expect(targets.filter((t) => t.goal).length).toBeGreaterThan(0);
    for (const t of targets) {
      if (t.goal && t.interval)
        expect(t.status, t.id).toBe(
          t.id === "workers2ToWorkers1" && results.machine.cores < 4
            ? "not resolved"
            : targetStatus(t.interval, t.goal),
        );
      const row = page.split("\n").find((l) => l.startsWith(`| ${t.target} |`)) ?? "";
      expect(row, t.id).toContain(`**${t.status}**`);
      if (t.interval?.low != null) expect(row, t.id).toContain(`interval ${t.interval.low} to ${t.interval.high}`);
    }
  });
});

describe("the performance page's run", () => {
  const results = JSON.parse(read("bench", "results.json")) as BenchResults;
  const loadLine = (r: BenchResults) =>
    performancePage(r)
      .split("\n")
      .find((l) => l.startsWith("Load average ")) ?? "";

  it("says the load average at the start and the end, and that the figures are not quiet when the machine was busy", () => {
    const busy = loadLine({
      ...results,
      machine: { ...results.machine, cores: 2 },
      loadAverageAtStart: [9.5, 8, 7],
      loadAverageAtEnd: [0.2, 1, 2],
    });
    expect(busy).toContain(
      "9.5, 8, 7 at the start and 0.2, 1, 2 at the end (the bench's own work counted in it), on 2 cores",
    );
    expect(busy).toMatch(/busy .* not quiet .* no status of this run settles a target/);
    const quiet = loadLine({
      ...results,
      machine: { ...results.machine, cores: 2 },
      loadAverageAtStart: [0.3, 0.5, 0.6],
      loadAverageAtEnd: [0.9, 0.6, 0.6],
    });
    expect(quiet).toContain("0.3, 0.5, 0.6 at the start");
    expect(quiet).not.toMatch(/busy/);
    // The bench's own server and generator fill the cores: a high figure at the end alone is its own work.
    expect(
      loadLine({
        ...results,
        machine: { ...results.machine, cores: 2 },
        loadAverageAtStart: [0.3, 0.5, 0.6],
        loadAverageAtEnd: [2.6, 1.6, 0.9],
      }),
    ).not.toMatch(/busy/);
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
      const line =
        reliabilityPage({ measured: { [key]: entry } })
          .split("\n")
          .find((l) => l.includes(entry.date.slice(0, 10))) ?? "";
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

  it("keeps reviews that name a unit of today's code holding the code they review, and counts those left unexplained", () => {
    const r = results();
    const units = new Map<string, string>();
    for (const file of MUTATION_FILES) {
      const source = read(file);
      const lines = source.split("\n");
      for (const u of codeUnits(file, source)) {
        const text = [lines[u.start.line - 1]?.slice(u.start.column), ...lines.slice(u.start.line, u.end.line)];
        units.set(u.key, text.join("\n").replace(/\s+/g, " "));
      }
    }
    const seen = new Set<string>();
    for (const e of equivalents()) {
      const name = `${e.unit} ${e.mutator} ${e.original} -> ${e.replacement}${e.occurrence ? ` #${e.occurrence}` : ""}`;
      // A review outlives a move of its lines; one whose unit or code is gone is stale and is taken out.
      expect(units.has(e.unit), `${name}: no such unit today`).toBe(true);
      if (!e.original.endsWith("…")) expect(units.get(e.unit), `${name}: its code is gone`).toContain(e.original);
      expect(seen.has(name), `${name}: reviewed twice`).toBe(false);
      seen.add(name);
      expect(e.why.trim(), name).not.toBe("");
      expect(["equivalent", "open", "unreached", "killed"], name).toContain(e.kind);
    }
    const counted = r.counts.killed + r.counts.timeout + r.counts.survived + r.counts.noCoverage + r.counts.invalid;
    expect(counted).toBe(r.counts.total);
    expect(r.survived.length).toBe(r.counts.survived);
    const undetected = [...r.survived, ...r.noCoverage];
    const left = undetected.filter((m) => !equivalents().some((e) => sameMutant(e, m))).length;
    expect(read("docs", "mutation.md")).toContain(`, and ${left} are not explained yet;`);
  });
});
