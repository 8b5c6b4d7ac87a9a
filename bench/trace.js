// Benchmark, not a test: what `check --trace DIR` adds to a check's time (issue 32's target: at most 10 %). Two runs
// of `check`, each with and without --trace, alternately, BENCH_ROUNDS times (default 5): the built-in reference
// server (every check passes: the cost of keeping each exchange), and a broken HTTP server whose creating POST
// answers 200 (two checks fail: keeping plus writing their HAR files). Prints one line per run, each the ratio of
// the medians, and writes bench/trace-results.json. Run with `npm run bench:trace` (it builds first).
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { server as create200 } from "../dist/fixtures/broken-servers/http/create-200.js";

const ROOT = new URL("..", import.meta.url).pathname;
const CLI = join(ROOT, "bin", "example-conformance.js");
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const tmp = mkdtempSync(join(os.tmpdir(), "bench-trace-"));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * One `check` run's wall time in ms; its exit code must be the one expected, or the figure would be of another run.
 * Not spawnSync: the broken server runs in this process, and a blocked event loop would answer nothing.
 */
async function timed(args, expectedExit) {
  const t0 = performance.now();
  const status = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "check", "--seed", "1", ...args], {
      stdio: "ignore",
      timeout: 300_000,
    });
    child.once("error", reject);
    child.once("exit", resolve);
  });
  if (status !== expectedExit) throw new Error(`check ${args.join(" ")} exited ${status}, not ${expectedExit}`);
  return performance.now() - t0;
}

/** The same run with and without --trace, alternately, the order swapped each round. */
async function compare(args, expectedExit) {
  const plain = [];
  const traced = [];
  for (let i = 0; i < ROUNDS; i++) {
    const withTrace = async () => traced.push(await timed([...args, "--trace", join(tmp, `t${i}`)], expectedExit));
    const without = async () => plain.push(await timed(args, expectedExit));
    if (i % 2 === 0) await without(), await withTrace();
    else await withTrace(), await without();
  }
  const ratio = median(traced) / median(plain);
  return {
    plainMedianMs: Math.round(median(plain)),
    tracedMedianMs: Math.round(median(traced)),
    ratio: Number(ratio.toFixed(3)),
    plainMs: plain.map(Math.round),
    tracedMs: traced.map(Math.round),
  };
}

const results = {
  machine:
    `${os.cpus().length} cores, ${os.cpus()[0]?.model ?? "unknown"}, load average ${os.loadavg()[0].toFixed(1)} at ` +
    `start`,
  rounds: ROUNDS,
};
results.reference = await compare([], 0);
const broken = await create200.start();
try {
  results.brokenHttp = await compare(["--http", broken.url], 1);
} finally {
  await broken.close();
}
const line = (name, r) =>
  `${name}: --trace ${r.tracedMedianMs} ms against ${r.plainMedianMs} ms, ratio ${r.ratio} (target at most 1.10: ` +
  `${r.ratio <= 1.1 ? "met" : "NOT met"})`;
console.log(line("check of the built-in reference (every check passes)", results.reference));
console.log(line("check --http of a broken server (2 HAR files written)", results.brokenHttp));
writeFileSync(join(ROOT, "bench", "trace-results.json"), `${JSON.stringify(results, null, 2)}\n`);
