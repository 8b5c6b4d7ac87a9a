// bench/mutation-results.json: what one `npm run mutation` found, condensed from Stryker's JSON report
// (reports/mutation/mutation.json, mutation-testing-report-schema): the counts, Stryker's score, and each mutant the
// catalogue did not detect with its file, line and change. docs/mutation.md is rendered from it (mutation-page.ts).

/** A mutant the catalogue did not detect: where, which mutator, the code it changed and what it put there. */
export interface UndetectedMutant {
  file: string;
  /**
   * The key of the code unit it lies in (scripts/mutation-sample.js: "reference-server/http/routes.ts#etagOf"), the
   * file alone when it lies in none: with the mutator, the code and the replacement, what a review is matched by, so
   * that a review outlives a move of the lines.
   */
  unit: string;
  line: number;
  column: number;
  mutator: string;
  original: string;
  replacement: string;
  /**
   * Its place, from 1 in source order, among the unit's mutants of the same mutator, code and replacement, when the
   * unit holds more than one.
   */
  occurrence?: number;
}

export interface MutationCounts {
  total: number;
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  /** Mutants that did not run (compile or runtime errors of the mutant itself, ignored): not in the score. */
  invalid: number;
}

export interface MutationResults {
  date: string;
  node: string;
  stryker: string;
  /** The code mutated: the share of the files' code units drawn, the seed of the draw, how many units. */
  sample: { share: number | "all"; seed: number; units: number };
  /** The seed the catalogue ran at (--seed). */
  catalogueSeed: number;
  /**
   * SHA-256 of the catalogue's sources (suites/, harness/) the run tested: another forces a whole run of the sample.
   */
  catalogueDigest: string;
  /** Wall time of the Stryker run, when the run measured it. */
  durationS?: number;
  concurrency: number;
  counts: MutationCounts;
  /** Per file, the same counts. */
  files: Record<string, MutationCounts>;
  /** Stryker's score: detected (killed or timed out) over detected, survived and not covered; percent, one decimal. */
  score: number;
  survived: UndetectedMutant[];
  noCoverage: UndetectedMutant[];
}

interface StrykerMutant {
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}

/** Stryker's JSON report, the parts read here. */
export interface StrykerReport {
  files: Record<string, { source: string; mutants: StrykerMutant[] }>;
}

const MAX_TEXT = 160;
const oneLine = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT - 1)}…` : flat;
};

/** The source text a mutant's location spans (lines and columns 1-based, the end column exclusive). */
function spanned(source: string, m: StrykerMutant): string {
  const lines = source.split("\n");
  const { start, end } = m.location;
  if (start.line === end.line) return lines[start.line - 1]?.slice(start.column - 1, end.column - 1) ?? "";
  return [
    lines[start.line - 1]?.slice(start.column - 1) ?? "",
    ...lines.slice(start.line, end.line - 1),
    lines[end.line - 1]?.slice(0, end.column - 1) ?? "",
  ].join("\n");
}

const emptyCounts = (): MutationCounts => ({ total: 0, killed: 0, timeout: 0, survived: 0, noCoverage: 0, invalid: 0 });
const KEY: Record<string, keyof MutationCounts> = {
  Killed: "killed",
  Timeout: "timeout",
  Survived: "survived",
  NoCoverage: "noCoverage",
};

/** The score of some counts, in percent with one decimal (0 when nothing was judged). */
export function mutationScore(c: MutationCounts): number {
  const judged = c.killed + c.timeout + c.survived + c.noCoverage;
  return judged === 0 ? 0 : Math.round(((c.killed + c.timeout) / judged) * 1000) / 10;
}

/** The key of the code unit a mutant lies in, from the file's source as the run mutated it. */
export type UnitOf = (file: string, source: string, location: StrykerMutant["location"]) => string;

/**
 * Condenses Stryker's report; `meta` is what the report does not say (the date, the sample, the seeds, the time);
 * `unitOf` names each undetected mutant's code unit (scripts/mutation-sample.js's, passed by scripts/mutation.js).
 */
export function summariseMutation(
  report: StrykerReport,
  meta: Omit<MutationResults, "counts" | "files" | "score" | "survived" | "noCoverage">,
  unitOf: UnitOf = (file) => file,
): MutationResults {
  const counts = emptyCounts();
  const files: Record<string, MutationCounts> = {};
  const survived: UndetectedMutant[] = [];
  const noCoverage: UndetectedMutant[] = [];
  for (const [file, { source, mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
    const own = (files[file] = emptyCounts());
    const sorted = [...mutants].sort(
      (a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column,
    );
    // Every mutant's name (unit, mutator, code, replacement), in source order: where a unit holds two of one name
    // (two "" in one function, each to "Stryker was here!"), each is told apart by its place among them.
    const named = sorted.map((m) => {
      const name = {
        unit: unitOf(file, source, m.location),
        mutator: m.mutatorName,
        original: oneLine(spanned(source, m)),
        replacement: oneLine(m.replacement ?? ""),
      };
      return { m, name, key: JSON.stringify(name) };
    });
    const total = new Map<string, number>();
    for (const { key } of named) total.set(key, (total.get(key) ?? 0) + 1);
    const seen = new Map<string, number>();
    for (const { m, name, key: nameKey } of named) {
      const nth = (seen.get(nameKey) ?? 0) + 1;
      seen.set(nameKey, nth);
      const key = KEY[m.status] ?? "invalid";
      for (const c of [counts, own]) {
        c.total++;
        c[key]++;
      }
      if (key !== "survived" && key !== "noCoverage") continue;
      const entry: UndetectedMutant = {
        file,
        unit: name.unit,
        line: m.location.start.line,
        column: m.location.start.column,
        mutator: name.mutator,
        original: name.original,
        replacement: name.replacement,
        ...((total.get(nameKey) ?? 0) > 1 && { occurrence: nth }),
      };
      (key === "survived" ? survived : noCoverage).push(entry);
    }
  }
  return { ...meta, counts, files, score: mutationScore(counts), survived, noCoverage };
}
