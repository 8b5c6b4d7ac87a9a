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
  /**
   * The same sample run again at a second catalogue seed (`npm run mutation -- --second-seed N`, issue 44 item 4),
   * when one was: a mutant detected at one seed and not at the other is a verdict the seed decides.
   */
  secondSeed?: SecondSeedRun;
}

/** How a mutant fared at one seed (Stryker's status, as the counts name it). */
export type Verdict = "killed" | "timeout" | "survived" | "noCoverage";

/** A mutant detected (killed or timed out) at one seed and not (survived or not covered) at the other. */
export interface SeedDependentMutant extends UndetectedMutant {
  /** Its verdict at the results' seed (catalogueSeed). */
  first: Verdict;
  /** Its verdict at the second seed. */
  second: Verdict;
}

export interface SecondSeedRun {
  /** The catalogue's seed of this run. */
  seed: number;
  date: string;
  durationS?: number;
  concurrency: number;
  counts: MutationCounts;
  score: number;
  /** Every mutant whose verdict differs between the seeds, in the results' order (file, then source order). */
  differing: SeedDependentMutant[];
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
const KEY: Record<string, Verdict> = {
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

/** A mutant of a report, named as a review names it (unit, mutator, code, replacement, and its place among those). */
interface NamedMutant {
  file: string;
  m: StrykerMutant;
  name: Pick<UndetectedMutant, "unit" | "mutator" | "original" | "replacement" | "occurrence">;
}

/** The report's mutants, file by file in name order, each in source order, named. */
function namedMutants(report: StrykerReport, unitOf: UnitOf): NamedMutant[] {
  const all: NamedMutant[] = [];
  for (const [file, { source, mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
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
    for (const { m, name, key } of named) {
      const nth = (seen.get(key) ?? 0) + 1;
      seen.set(key, nth);
      all.push({ file, m, name: { ...name, ...((total.get(key) ?? 0) > 1 && { occurrence: nth }) } });
    }
  }
  return all;
}

const undetected = ({ file, m, name }: NamedMutant): UndetectedMutant => ({
  file,
  unit: name.unit,
  line: m.location.start.line,
  column: m.location.start.column,
  mutator: name.mutator,
  original: name.original,
  replacement: name.replacement,
  ...(name.occurrence !== undefined && { occurrence: name.occurrence }),
});

/**
 * Condenses Stryker's report; `meta` is what the report does not say (the date, the sample, the seeds, the time);
 * `unitOf` names each undetected mutant's code unit (scripts/mutation-sample.js's, passed by scripts/mutation.js).
 */
export function summariseMutation(
  report: StrykerReport,
  meta: Omit<MutationResults, "counts" | "files" | "score" | "survived" | "noCoverage" | "secondSeed">,
  unitOf: UnitOf = (file) => file,
): MutationResults {
  const counts = emptyCounts();
  const files: Record<string, MutationCounts> = {};
  const survived: UndetectedMutant[] = [];
  const noCoverage: UndetectedMutant[] = [];
  for (const mutant of namedMutants(report, unitOf)) {
    const own = (files[mutant.file] ??= emptyCounts());
    const key = KEY[mutant.m.status] ?? "invalid";
    for (const c of [counts, own]) {
      c.total++;
      c[key]++;
    }
    if (key === "survived") survived.push(undetected(mutant));
    else if (key === "noCoverage") noCoverage.push(undetected(mutant));
  }
  return { ...meta, counts, files, score: mutationScore(counts), survived, noCoverage };
}

/**
 * What a run records: its own summary, or, when it tested nothing anew (`tested` false: Stryker reused every verdict
 * of the recorded run of the same catalogue, seeds and sample, and they came out the same), that summary with the
 * recorded run's duration and second seed's comparison, which still hold; a reusing run measured neither.
 */
export function carriedOver(
  previous: MutationResults | undefined,
  fresh: MutationResults,
  tested: boolean,
): MutationResults {
  const same =
    previous !== undefined &&
    !tested &&
    previous.catalogueDigest === fresh.catalogueDigest &&
    previous.catalogueSeed === fresh.catalogueSeed &&
    JSON.stringify(previous.sample) === JSON.stringify(fresh.sample) &&
    JSON.stringify([previous.counts, previous.survived, previous.noCoverage]) ===
      JSON.stringify([fresh.counts, fresh.survived, fresh.noCoverage]);
  if (!same) return fresh;
  const { durationS, secondSeed } = previous;
  return { ...fresh, ...(durationS !== undefined && { durationS }), ...(secondSeed !== undefined && { secondSeed }) };
}

/**
 * The mutants detected (killed or timed out) at one catalogue seed and not (survived or not covered) at the other,
 * from two runs of one sample over the same code: each named as a review names it, with its verdict at each seed.
 * A mutant that did not run at either (a compile or runtime error of its own) is left out, as the score leaves it.
 */
export function compareSeeds(first: StrykerReport, second: StrykerReport, unitOf: UnitOf): SeedDependentMutant[] {
  const key = ({ file, name }: NamedMutant) => JSON.stringify([file, name]);
  const atSecond = new Map(namedMutants(second, unitOf).map((n) => [key(n), KEY[n.m.status]]));
  const detected = (verdict: string) => verdict === "killed" || verdict === "timeout";
  const differing: SeedDependentMutant[] = [];
  for (const mutant of namedMutants(first, unitOf)) {
    const [one, two] = [KEY[mutant.m.status], atSecond.get(key(mutant))];
    if (one === undefined || two === undefined || detected(one) === detected(two)) continue;
    differing.push({ ...undetected(mutant), first: one, second: two });
  }
  return differing;
}

/** The second seed's run of the recorded sample, condensed: its counts and score, and the verdicts that differ. */
export function secondSeedRun(
  first: StrykerReport,
  second: StrykerReport,
  meta: { seed: number; date: string; durationS?: number; concurrency: number; unitOf: UnitOf },
): SecondSeedRun {
  const { unitOf, ...run } = meta;
  const counts = emptyCounts();
  for (const { m } of namedMutants(second, unitOf)) {
    counts.total++;
    counts[KEY[m.status] ?? "invalid"]++;
  }
  return { ...run, counts, score: mutationScore(counts), differing: compareSeeds(first, second, unitOf) };
}
