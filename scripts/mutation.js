// `npm run mutation` (after tsc): runs Stryker (test/mutation/stryker.config.mjs) over the sample of the reference
// server's request handling, then records bench/mutation-results.json from its report and writes docs/mutation.md
// (with bench/mutation-equivalent.json), and prints the score. Incremental: only the mutants whose code changed are
// tested again, unless the catalogue (suites/, harness/) or its seed changed since the results were recorded, when
// every mutant of the sample is (--force). Arguments go to Stryker (`npm run mutation -- --concurrency 1`).
//   node scripts/mutation.js --page                 renders docs/mutation.md again from the JSON files, no run
//   node scripts/mutation.js --record [--duration-s N]  records the last run's report (reports/mutation/mutation.json)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { mutateFromEnv, DEFAULT_SAMPLE_SEED } from "./mutation-sample.js";
import { summariseMutation } from "../dist/test/mutation/mutation-results.js";
import { mutationPage } from "../dist/test/mutation/mutation-page.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "mutation-results.json");
const EQUIVALENT = join(ROOT, "bench", "mutation-equivalent.json");
const REPORT = join(ROOT, "reports", "mutation", "mutation.json");
const PAGE = join(ROOT, "docs", "mutation.md");

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

function record(durationS, concurrency) {
  const stryker = JSON.parse(
    readFileSync(join(ROOT, "node_modules", "@stryker-mutator", "core", "package.json"), "utf8"),
  ).version;
  const asked = process.env.EXAMPLE_CONFORMANCE_MUTATION_SAMPLE;
  const seed = Number(process.env.EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED ?? DEFAULT_SAMPLE_SEED);
  const sample = {
    share: asked === "all" ? "all" : Number(asked ?? 0.11),
    seed,
    windows: asked === "all" ? 0 : mutateFromEnv().length,
  };
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
  const results = summariseMutation(withinSample(JSON.parse(readFileSync(REPORT, "utf8")), asked), meta);
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  writePage();
  const c = results.counts;
  console.log(
    `mutation score ${results.score} %: ${c.killed} killed, ${c.timeout} timed out, ${c.survived} survived, ` +
      `${c.noCoverage} not covered, of ${c.total} (bench/mutation-results.json, docs/mutation.md)`,
  );
}

const args = process.argv.slice(2);
const concurrencyOf = (list) => Number(list[list.indexOf("--concurrency") + 1] ?? 2) || 2;
if (args[0] === "--page") {
  writePage();
} else if (args[0] === "--record") {
  const at = args.indexOf("--duration-s");
  record(at === -1 ? undefined : Number(args[at + 1]), concurrencyOf(args));
} else {
  const previous = readJson(RESULTS, undefined);
  const stale =
    previous === undefined ||
    previous.catalogueDigest !== catalogueDigest() ||
    previous.catalogueSeed !== catalogueSeed();
  if (stale && !args.includes("--force"))
    console.log(
      "the catalogue or its seed changed since bench/mutation-results.json: every mutant of the sample is tested " +
        "again (--force)",
    );
  const started = Date.now();
  const run = spawnSync(
    "npx",
    ["stryker", "run", "test/mutation/stryker.config.mjs", ...(stale ? ["--force"] : []), ...args],
    { cwd: ROOT, stdio: "inherit" },
  );
  if (run.status !== 0) {
    console.error(
      `mutation: Stryker ended ${run.status === null ? `by ${run.signal}` : `with exit code ${run.status}`}; ` +
        `nothing recorded`,
    );
    process.exit(run.status === null || run.status === 0 ? 1 : run.status);
  }
  record(Math.round((Date.now() - started) / 1000), args.includes("--concurrency") ? concurrencyOf(args) : 2);
}
