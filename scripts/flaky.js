#!/usr/bin/env node
// Finds flaky tests before they land: runs each test file N times alone and N times beside other files of its group
// (its vitest project, at the project's own worker count, as npm test runs it), and prints every failure.
//
//   node scripts/flaky.js [FILE...] [--runs N] [--beside-runs M] [--beside K] [--since REF] [--timeout S]
//
// N runs alone (default 10), M beside K other files of its group (default N and 4), each bounded by S seconds. With
// no FILE: the test files changed since REF (default HEAD~1), committed or not. Exit 1 when any run failed.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(import.meta.dirname, "..");

function usage(message) {
  process.stderr.write(
    `flaky: ${message}\nusage: node scripts/flaky.js [FILE...] [--runs N] [--beside-runs M] [--beside K] ` +
      `[--since REF] [--timeout S]\n`,
  );
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: "string", default: "10" },
      "beside-runs": { type: "string" },
      beside: { type: "string", default: "4" },
      since: { type: "string", default: "HEAD~1" },
      timeout: { type: "string", default: "900" },
    },
  });
} catch (err) {
  usage(err.message);
}
const count = (name, min) => {
  const n = Number(parsed.values[name]);
  if (!Number.isInteger(n) || n < min) usage(`--${name} ${parsed.values[name]}: a whole number of at least ${min}`);
  return n;
};
const runs = count("runs", 1);
const besideRuns = parsed.values["beside-runs"] === undefined ? runs : count("beside-runs", 0);
const beside = count("beside", 0);
const timeoutMs = count("timeout", 1) * 1000;

const git = (...args) => spawnSync("git", args, { cwd: root, encoding: "utf8" });

/** Test files changed since `since`, in commits or in the working tree, that still exist. */
function changedTestFiles(since) {
  const committed = git("diff", "--name-only", `${since}...HEAD`);
  if (committed.status !== 0) usage(`--since ${since}: ${committed.stderr.trim().split("\n")[0]}`);
  const working = git("status", "--porcelain", "--untracked-files=all");
  const names = [...committed.stdout.split("\n"), ...working.stdout.split("\n").map((l) => l.slice(3))];
  return [...new Set(names.filter((n) => /\.test\.ts$/.test(n)))].filter(
    (n) => spawnSync("test", ["-f", join(root, n)]).status === 0,
  );
}

/** Every test file by vitest project, as vitest itself lists them. */
function projects() {
  const listed = spawnSync("npx", ["vitest", "list", "--filesOnly", "--json"], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (listed.status !== 0) usage(`vitest list failed: ${listed.stderr.trim().split("\n")[0]}`);
  const byProject = new Map();
  for (const { file, projectName } of JSON.parse(listed.stdout)) {
    const files = byProject.get(projectName) ?? [];
    files.push(relative(root, file));
    byProject.set(projectName, files);
  }
  return byProject;
}

/** One vitest run of `files` in `project`: the failures it reported, each "file > test: first line". */
function run(project, files) {
  const dir = mkdtempSync(join(tmpdir(), "flaky-"));
  const out = join(dir, "report.json");
  try {
    const r = spawnSync(
      "npx",
      ["vitest", "run", "--project", project, "--reporter=json", `--outputFile=${out}`, ...files],
      {
        cwd: root,
        encoding: "utf8",
        timeout: timeoutMs,
        killSignal: "SIGKILL",
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    if (r.error || r.signal)
      return [`the run did not finish within ${timeoutMs / 1000} s (${r.error?.message ?? r.signal})`];
    let report;
    try {
      report = JSON.parse(readFileSync(out, "utf8"));
    } catch {
      return [`no report (exit ${r.status}): ${(r.stderr || r.stdout).trim().split("\n").slice(-1)[0] ?? ""}`];
    }
    const failures = report.testResults.flatMap((f) => [
      ...(f.status === "failed" && f.assertionResults.length === 0
        ? [`${relative(root, f.name)}: ${(f.message ?? "failed").split("\n")[0]}`]
        : []),
      ...f.assertionResults
        .filter((a) => a.status === "failed")
        .map((a) => `${relative(root, f.name)} > ${a.fullName}: ${(a.failureMessages[0] ?? "").split("\n")[0]}`),
    ]);
    if (failures.length === 0 && r.status !== 0) failures.push(`exit ${r.status} with no failed test reported`);
    return failures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const files =
  parsed.positionals.length > 0
    ? parsed.positionals.map((f) => relative(root, resolve(f)))
    : changedTestFiles(parsed.values.since);
if (files.length === 0) {
  process.stdout.write(`flaky: no test file changed since ${parsed.values.since}\n`);
  process.exit(0);
}
const byProject = projects();
const projectOf = (file) => [...byProject].find(([, fs]) => fs.includes(file))?.[0];

let failedRuns = 0;
for (const file of files) {
  const project = projectOf(file);
  if (project === undefined) usage(`${file}: no vitest project includes it`);
  const others = (byProject.get(project) ?? []).filter((f) => f !== file);
  const tally = { alone: 0, beside: 0 };
  for (const [mode, n] of [
    ["alone", runs],
    ["beside", others.length > 0 && beside > 0 ? besideRuns : 0],
  ]) {
    for (let i = 0; i < n; i++) {
      // A different slice of the group each round, so that the file meets most of its neighbours.
      const company =
        mode === "alone"
          ? []
          : Array.from({ length: Math.min(beside, others.length) }, (_, k) => others[(i * beside + k) % others.length]);
      const failures = run(project, [file, ...company]).filter((f) => mode === "alone" || f.startsWith(file));
      if (failures.length === 0) tally[mode]++;
      else failedRuns++;
      for (const f of failures)
        process.stdout.write(
          `${file} ${mode} run ${i + 1}/${n}${company.length > 0 ? ` (beside ${company.join(", ")})` : ""}: FAIL ` +
            `${f}\n`,
        );
    }
  }
  const besideDone = others.length > 0 && beside > 0 ? besideRuns : 0;
  process.stdout.write(
    `${file} [${project}]: alone ${tally.alone}/${runs} passed, beside its group ${tally.beside}/${besideDone} ` +
      `passed\n`,
  );
}
process.exit(failedRuns > 0 ? 1 : 0);
