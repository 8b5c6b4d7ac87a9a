// `npm run mutation` (after tsc): runs Stryker (test/mutation/stryker.config.mjs) over the sample of the reference
// server's request handling, then records bench/mutation-results.json from its report and writes docs/mutation.md
// (with bench/mutation-equivalent.json), and prints the score. Incremental: only the mutants whose code changed are
// tested again, unless the catalogue (suites/, harness/) or its seed changed since the results were recorded, when
// every mutant of the sample is (--force). Arguments go to Stryker (`npm run mutation -- --concurrency 1`).
// `npm run mutation -- --second-seed N` then runs the same sample again at the catalogue's seed N and records, beside
// the results, every mutant detected at one seed and not at the other (issue 44 item 4).
//   node scripts/mutation.js --seed-pass N          that second pass alone, against the recorded run
//   node scripts/mutation.js --page                 renders docs/mutation.md again from the JSON files, no run
//   node scripts/mutation.js --record [--duration-s N]  records the last run's report (reports/mutation/mutation.json)
//   node scripts/mutation.js --rekey                re-keys reviews still named by line (file:line:column) by code unit
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { mutateFromEnv, sampleFromEnv, unitOf } from "./mutation-sample.js";
import { carriedOver, secondSeedRun, summariseMutation } from "../dist/test/mutation/mutation-results.js";
import { mutationPage, reviewTally } from "../dist/test/mutation/mutation-page.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "mutation-results.json");
const EQUIVALENT = join(ROOT, "bench", "mutation-equivalent.json");
const REPORT = join(ROOT, "reports", "mutation", "mutation.json");
const PAGE = join(ROOT, "docs", "mutation.md");
const INCREMENTAL = join(ROOT, "bench", "mutation-incremental.json");
// The second seed's report (test/mutation/stryker.config.mjs writes it there on that pass).
const SECOND_REPORT = join(ROOT, "reports", "mutation", "second-seed.json");

/** SHA-256 of the catalogue's sources: a change there can kill a mutant that survived, so the sample runs whole. */
function catalogueDigest() {
  const hash = createHash("sha256");
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== "gen") walk(path);
      else if (entry.isFile() && path.endsWith(".ts"))
        hash.update(relative(ROOT, path)).update("\0").update(readFileSync(path)).update("\0");
    }
  };
  for (const dir of ["suites", "harness"]) walk(join(ROOT, dir));
  return hash.digest("hex");
}

const readJson = (path, fallback) => (existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : fallback);
const catalogueSeed = () => Number(process.env.EXAMPLE_CONFORMANCE_MUTATION_SEED ?? 1);

function writePage() {
  writeFileSync(PAGE, mutationPage(readJson(RESULTS), readJson(EQUIVALENT, [])));
}

/**
 * The report's mutants that lie inside the sample's units: Stryker's incremental report keeps, beside them, the old
 * results of mutants outside the ranges asked for (tested by an older catalogue, never again), which are not this
 * run's verdicts. A range is "file:line:column-line:column" (columns 0-based); the report's columns are 1-based.
 */
function withinSample(report, asked) {
  if (asked === "all") return report;
  const ranges = mutateFromEnv()
    .map((r) => /^(.*):(\d+):(\d+)-(\d+):(\d+)$/.exec(r))
    .map((m) => ({ file: m[1], start: [Number(m[2]), Number(m[3])], end: [Number(m[4]), Number(m[5])] }));
  const before = (a, b) => a[0] < b[0] || (a[0] === b[0] && a[1] <= b[1]);
  const inside = (file, { location: { start, end } }) =>
    ranges.some(
      (r) =>
        r.file === file && before(r.start, [start.line, start.column - 1]) && before([end.line, end.column - 1], r.end),
    );
  const files = Object.fromEntries(
    Object.entries(report.files).map(([file, f]) => [
      file,
      { ...f, mutants: f.mutants.filter((m) => inside(file, m)) },
    ]),
  );
  return { ...report, files: Object.fromEntries(Object.entries(files).filter(([, f]) => f.mutants.length > 0)) };
}

/** Records the run Stryker reported; `tested`: every mutant of the sample was tested anew (else verdicts were reused). */
function record(durationS, concurrency, tested) {
  const stryker = JSON.parse(
    readFileSync(join(ROOT, "node_modules", "@stryker-mutator", "core", "package.json"), "utf8"),
  ).version;
  const asked = sampleFromEnv();
  const sample = asked === "all" ? { share: "all", seed: 0, units: 0 } : { ...asked, units: mutateFromEnv().length };
  const meta = {
    date: new Date().toISOString(),
    node: process.versions.node,
    stryker,
    sample,
    catalogueSeed: catalogueSeed(),
    catalogueDigest: catalogueDigest(),
    ...(durationS !== undefined && { durationS }),
    concurrency,
  };
  const report = withinSample(JSON.parse(readFileSync(REPORT, "utf8")), asked);
  const results = carriedOver(readJson(RESULTS, undefined), summariseMutation(report, meta, unitOf), tested);
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  writePage();
  const c = results.counts;
  const tally = reviewTally(results, readJson(EQUIVALENT, []));
  console.log(
    `mutation score ${results.score} %: ${c.killed} killed, ${c.timeout} timed out, ${c.survived} survived, ` +
      `${c.noCoverage} not covered, of ${c.total}; of the mutants not reviewed as equivalent, ${tally.share} % ` +
      `detected or killed since, ${tally.unexplained} not explained yet (bench/mutation-results.json, docs/mutation.md)`,
  );
}

/** The flattened text of `original` read from a source at a 1-based line and column: its end, when it is whole. */
function endOf(source, line, column, original) {
  const lines = source.split("\n");
  let at = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + column - 1;
  let flat = "";
  for (; at < source.length && flat.trimEnd() !== original; at++) {
    const c = /\s/.test(source[at]) ? " " : source[at];
    if (!(c === " " && (flat === "" || flat.endsWith(" ")))) flat += c;
    if (!original.startsWith(flat.trimEnd())) return undefined;
  }
  if (flat.trimEnd() !== original) return undefined;
  const before = source.slice(0, at).split("\n");
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

/**
 * Re-keys the reviews still named by line (file, line, column: the form before issue 44's code units) by the unit
 * their mutant lies in: the mutant is looked up in the versions of bench/mutation-results.json in git, newest first,
 * and its file read as it was at that commit. A review whose mutant no version lists is left as it was, and named.
 */
function rekey() {
  const git = (...a) => spawnSync("git", a, { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const versions = git("log", "--format=%H", "--", "bench/mutation-results.json")
    .stdout.split("\n")
    .filter(Boolean)
    .map((commit) => ({ commit, results: JSON.parse(git("show", `${commit}:bench/mutation-results.json`).stdout) }));
  const sources = new Map();
  const sourceAt = (commit, file) => {
    const key = `${commit}:${file}`;
    if (!sources.has(key)) sources.set(key, git("show", key).stdout);
    return sources.get(key);
  };
  let left = 0;
  const reviews = readJson(EQUIVALENT, []).map((e) => {
    if (e.unit !== undefined) return e;
    for (const { commit, results } of versions) {
      const m = [...results.survived, ...results.noCoverage].find(
        (u) =>
          u.file === e.file &&
          u.line === e.line &&
          u.column === e.column &&
          u.mutator === e.mutator &&
          u.replacement === e.replacement &&
          (e.original === undefined || e.original === u.original),
      );
      if (m === undefined) continue;
      const source = sourceAt(commit, m.file);
      const start = { line: m.line, column: m.column };
      const end = endOf(source, m.line, m.column, m.original) ?? start;
      const unit = unitOf(m.file, source, { start, end });
      return { unit, mutator: e.mutator, original: m.original, replacement: e.replacement, kind: e.kind, why: e.why };
    }
    left++;
    console.error(`mutation --rekey: ${e.file}:${e.line}:${e.column} ${e.mutator}: no recorded run lists it, left`);
    return e;
  });
  writeFileSync(EQUIVALENT, `${JSON.stringify(reviews, null, 2)}\n`);
  console.log(`mutation --rekey: ${reviews.length - left} reviews named by code unit, ${left} left by line`);
}

/** Ends the script with one line on stderr and a set-up or user exit code. */
function fail(message, code = 3) {
  console.error(`mutation: ${message}`);
  process.exit(code);
}

/** Runs Stryker with the arguments and environment given; ends the script when Stryker fails. */
function stryker(args, env = {}) {
  const run = spawnSync("npx", ["stryker", "run", "test/mutation/stryker.config.mjs", ...args], {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, ...env },
  });
  if (run.status !== 0) {
    console.error(
      `mutation: Stryker ended ${run.status === null ? `by ${run.signal}` : `with exit code ${run.status}`}; ` +
        `nothing recorded`,
    );
    process.exit(run.status === null || run.status === 0 ? 1 : run.status);
  }
}

/**
 * The second seed's pass: the recorded run's sample again, the catalogue at `seed`, every mutant tested (Stryker's
 * incremental mode off, so bench/mutation-incremental.json, the recorded seed's verdicts, is neither read nor
 * written), compared mutant by mutant with the recorded run's verdicts (read from that incremental file, which the
 * recorded run wrote), and recorded in bench/mutation-results.json as its secondSeed.
 */
function secondPass(seed, args) {
  const results = readJson(RESULTS, undefined);
  if (results === undefined) fail("no recorded run (bench/mutation-results.json) to compare a second seed with");
  if (seed === results.catalogueSeed) fail(`the recorded run is at seed ${seed} already: give another`, 2);
  const asked = sampleFromEnv();
  const sample = asked === "all" ? { share: "all", seed: 0, units: 0 } : { ...asked, units: mutateFromEnv().length };
  if (JSON.stringify(sample) !== JSON.stringify(results.sample) || results.catalogueDigest !== catalogueDigest())
    fail("the catalogue or the sample changed since the recorded run: run npm run mutation first");
  const first = withinSample(readJson(INCREMENTAL, { files: {} }), asked);
  if (JSON.stringify(summariseMutation(first, {}, unitOf).counts) !== JSON.stringify(results.counts))
    fail("bench/mutation-incremental.json does not hold the recorded run's verdicts (its counts differ)");
  console.log(`mutation: the same sample again at the catalogue's seed ${seed}, every mutant tested`);
  const started = Date.now();
  stryker(args, { EXAMPLE_CONFORMANCE_MUTATION_SEED: String(seed), EXAMPLE_CONFORMANCE_MUTATION_SECOND_PASS: "1" });
  const second = withinSample(JSON.parse(readFileSync(SECOND_REPORT, "utf8")), asked);
  const run = secondSeedRun(first, second, {
    seed,
    date: new Date().toISOString(),
    durationS: Math.round((Date.now() - started) / 1000),
    concurrency: args.includes("--concurrency") ? concurrencyOf(args) : 2,
    unitOf,
  });
  writeFileSync(RESULTS, `${JSON.stringify({ ...results, secondSeed: run }, null, 2)}\n`);
  writePage();
  console.log(
    `mutation score ${run.score} % at seed ${seed} (${results.score} % at seed ${results.catalogueSeed}); ` +
      `${run.differing.length} mutants' verdicts depend on the seed`,
  );
  for (const m of run.differing)
    console.log(
      `  ${m.file}:${m.line}:${m.column} ${m.mutator} ${m.original} -> ${m.replacement}: ${m.first}, ${m.second}`,
    );
}

/** `--second-seed N` (or `--seed-pass N`) taken out of the arguments: the seed, and the rest for Stryker. */
function seedOption(list, name) {
  const at = list.indexOf(name);
  if (at === -1) return { rest: list };
  const seed = Number(list[at + 1]);
  if (!Number.isSafeInteger(seed) || seed < 0) fail(`${name} takes a seed, a whole number (got ${list[at + 1]})`, 2);
  return { seed, rest: [...list.slice(0, at), ...list.slice(at + 2)] };
}

const args = process.argv.slice(2);
const concurrencyOf = (list) => Number(list[list.indexOf("--concurrency") + 1] ?? 2) || 2;
if (args[0] === "--page") {
  writePage();
} else if (args[0] === "--rekey") {
  rekey();
} else if (args[0] === "--seed-pass") {
  const { seed, rest } = seedOption(args, "--seed-pass");
  secondPass(seed, rest);
} else if (args[0] === "--record") {
  const at = args.indexOf("--duration-s");
  record(at === -1 ? undefined : Number(args[at + 1]), concurrencyOf(args), at !== -1);
} else {
  const { seed: second, rest } = seedOption(args, "--second-seed");
  const previous = readJson(RESULTS, undefined);
  const stale =
    previous === undefined ||
    previous.catalogueDigest !== catalogueDigest() ||
    previous.catalogueSeed !== catalogueSeed();
  if (stale && !rest.includes("--force"))
    console.log(
      "the catalogue or its seed changed since bench/mutation-results.json: every mutant of the sample is tested " +
        "again (--force)",
    );
  const started = Date.now();
  stryker([...(stale ? ["--force"] : []), ...rest]);
  record(
    Math.round((Date.now() - started) / 1000),
    rest.includes("--concurrency") ? concurrencyOf(rest) : 2,
    stale || rest.includes("--force"),
  );
  if (second !== undefined)
    secondPass(
      second,
      rest.filter((a) => a !== "--force"),
    );
}
