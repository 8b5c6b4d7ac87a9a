// StrykerJS for `npm run mutation` (issue 44, docs/mutation.md): it mutates the reference server's request handling
// and takes the catalogue's default check, run in-process against each mutant, as the test
// (test/mutation/catalogue.mutation.ts). Stryker switches mutants at run time, so one vitest process serves them all;
// the server is started within each run, so the active mutant is the one served.
import { mutateFromEnv } from "../../scripts/mutation-sample.js";

// The second seed's pass (scripts/mutation.js --second-seed, --seed-pass): every mutant tested, with no incremental
// file read or written (bench/mutation-incremental.json holds the recorded seed's verdicts, which it is compared with),
// and its own report.
const secondPass = process.env.EXAMPLE_CONFORMANCE_MUTATION_SECOND_PASS === "1";

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
const config = {
  testRunner: "vitest",
  vitest: { configFile: "test/mutation/vitest.config.ts", related: false },
  plugins: ["@stryker-mutator/vitest-runner"],
  // A seeded sample of the request-handling files' code units, as ranges "file:line:column-line:column"
  // (scripts/mutation-sample.js: the files, what is left out and why, the units, and
  // EXAMPLE_CONFORMANCE_MUTATION_SAMPLE=all for the files whole).
  mutate: mutateFromEnv(),
  // Only the mutants the catalogue reaches are run (the rest are "no coverage"), each with the one test.
  coverageAnalysis: "perTest",
  // Two workers on a 2-core machine shared with others; `npm run mutation -- --concurrency 1` halves the load.
  concurrency: 2,
  // A mutant that hangs the server is ended by Stryker (its worker restarted) and counted "timeout", not a hang of
  // the run: the baseline run's time x 1.5 + 30 s, generous for a loaded machine.
  timeoutMS: 30_000,
  timeoutFactor: 1.5,
  // Incremental: a run tests only the mutants whose code or test changed since the results kept here (committed),
  // so that a run fits in minutes; `npm run mutation -- --force` tests them all again (12 minutes
  // for the default sample, docs/development.md).
  incremental: !secondPass,
  incrementalFile: "bench/mutation-incremental.json",
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: secondPass ? "reports/mutation/second-seed.json" : "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  // The sandbox is a copy of the repository: not the build, the bundle, nor the Go and Python servers' trees.
  ignorePatterns: ["dist", "action-dist", "reports", "example-conformance-data", ".vitest-cache"],
  tempDirName: "reports/.stryker-tmp",
  cleanTempDir: "always",
  thresholds: { high: 90, low: 80, break: null },
};

export default config;
