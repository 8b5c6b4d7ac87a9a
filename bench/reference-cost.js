// What one call costs the reference server against the plain grpc-js server (bench/plain-grpc-js-server.js), by
// counts that a busy machine disturbs less than requests/s: each server's own CPU time per call (the sum over its
// threads of /proc/<pid>/task/*/schedstat, read before and after a run of the Go generator), the bytes it allocates
// per call and its garbage collection time per call (v8.GCProfiler, preloaded into each server). Requests/s and p99
// are printed beside them, for what they are worth on a shared machine.
//
// One instance of a Node server can run consistently slower or faster than the next (measured: 52 and 80 µs per
// call for two instances of the same build, side by side), so the servers are started afresh GENERATIONS times
// (default 3), and each generation runs ROUNDS (default 3) interleaved rounds of DURATION (default 2s) each, in an
// order rotated from round to round. Ratios are taken within a round; each is printed as the median and quartiles of
// all rounds, and the requests/s and p99 ratios also as the geometric mean with its 95 % interval
// (test/bench/interval.ts) and whether the issue's targets (at least 0.95x the requests/s, p99 at most 1x) are met, not
// met or not resolved. REFERENCE_B=<root of another build of this repository> adds that build's reference as a third
// server, to compare two versions of the reference in the same run. Benchmarks, not tests: node bench/reference-cost.js
// (after npm run build).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { missingGoLoad, runGoLoad } from "../dist/test/bench/go-load.js";
import { ratioInterval, targetStatus } from "../dist/test/bench/interval.js";
import { showInterval } from "../dist/test/helpers/performance-page.js";

const ROOT = new URL("..", import.meta.url).pathname;
const GENERATIONS = Math.max(1, Number(process.env.GENERATIONS ?? 3));
const ROUNDS = Math.max(1, Number(process.env.ROUNDS ?? 3));
const DURATION = process.env.DURATION ?? "2s";
const tmp = mkdtempSync(join(os.tmpdir(), "reference-cost-"));
const PROBE = join(tmp, "gc-probe.mjs");
// Preloaded into each server: on SIGUSR2 it writes what was allocated and collected since the last SIGUSR2.
writeFileSync(
  PROBE,
  `import v8 from "node:v8";
import { writeFileSync } from "node:fs";
let p = new v8.GCProfiler();
p.start();
process.on("SIGUSR2", () => {
  const r = p.stop();
  p = new v8.GCProfiler();
  p.start();
  let allocated = 0, gcUs = 0, after;
  for (const s of r.statistics) {
    gcUs += s.cost;
    if (after !== undefined) allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - after);
    after = s.afterGC.heapStatistics.usedHeapSize;
  }
  writeFileSync(${JSON.stringify(tmp)} + "/gc-" + process.pid + ".json", JSON.stringify({ allocated, gcUs }));
});
`,
);

const missing = await missingGoLoad();
if (missing) {
  console.error(`reference-cost: the Go load generator needs ${missing}`);
  process.exit(2);
}

/** CPU time of every thread of a process so far, in nanoseconds. */
function cpuNs(pid) {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return ns;
}

/** A server in its own process with the probe preloaded, ready when its address line matches `ready`. */
function start(args, ready) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${PROBE}` };
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"], env });
    const timer = setTimeout(
      () => (child.kill("SIGKILL"), reject(new Error(`${args[0]} did not listen within 30 s`))),
      30_000,
    );
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      const m = ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({
        address: m[1],
        pid: child.pid,
        close: () => new Promise((r) => (child.once("exit", r), child.kill("SIGTERM"))),
      });
    });
    child.once(
      "exit",
      (code) => (clearTimeout(timer), reject(new Error(`${args[0]} exited ${code} before listening`))),
    );
  });
}

const reference = (root) => () =>
  start(
    [
      join(root, "bin", "example-conformance.js"),
      "serve",
      "--grpc-port",
      "0",
      "--http-port",
      "0",
      "--log-level",
      "silent",
      "--store",
      "memory:",
    ],
    /^grpc (\S+)$/m,
  );
const servers = {
  reference: reference(ROOT),
  ...(process.env.REFERENCE_B ? { referenceB: reference(process.env.REFERENCE_B) } : {}),
  plain: () => start([join(ROOT, "bench", "plain-grpc-js-server.js"), "0"], /^listening (\S+)$/m),
};
const names = Object.keys(servers);
const load = (address, duration) => runGoLoad(address, { concurrency: 64, connections: 4, duration, warmup: "0s" });

/** What the probe in `pid` counted since it was last asked. */
async function probe(pid) {
  process.kill(pid, "SIGUSR2");
  const file = join(tmp, `gc-${pid}.json`);
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 20));
    try {
      const read = JSON.parse(readFileSync(file, "utf8"));
      writeFileSync(file, "");
      return read;
    } catch {
      // not written yet
    }
  }
  throw new Error(`the GC probe in ${pid} did not answer`);
}

async function measure(server) {
  await probe(server.pid);
  const cpu0 = cpuNs(server.pid);
  const r = await load(server.address, DURATION);
  const cpu = cpuNs(server.pid) - cpu0;
  const gc = await probe(server.pid);
  const errors = Object.values(r.errors).reduce((a, b) => a + b, 0);
  return {
    cpuUs: cpu / 1000 / r.requests,
    allocatedBytes: gc.allocated / r.requests,
    gcUs: gc.gcUs / r.requests,
    rps: r.requestsPerSecond,
    p99: r.latencyMs.p99,
    errors,
  };
}

const rounds = [];
for (let g = 0; g < GENERATIONS; g++) {
  const running = {};
  try {
    for (const n of names) running[n] = await servers[n]();
    for (const n of names) await load(running[n].address, "1s"); // warm
    for (let r = 0; r < ROUNDS; r++) {
      const row = {};
      for (let k = 0; k < names.length; k++) {
        const n = names[(k + r + g) % names.length];
        row[n] = await measure(running[n]);
      }
      rounds.push(row);
      const line = names.map(
        (n) =>
          `${n} ${row[n].cpuUs.toFixed(1)} µs, ${Math.round(row[n].allocatedBytes)} B, GC ` +
          `${row[n].gcUs.toFixed(1)} µs, ${row[n].rps} req/s, p99 ${row[n].p99} ` +
          `ms${row[n].errors ? `, ${row[n].errors} errors` : ""}`,
      );
      console.log(`generation ${g} round ${r} (load average ${os.loadavg()[0].toFixed(1)}): ${line.join(" | ")}`);
    }
  } finally {
    await Promise.all(Object.values(running).map((s) => s.close()));
  }
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const spread = (xs) => {
  const s = sorted(xs);
  return (
    `${median(s).toFixed(2)} (quartiles ` +
    `${s[Math.floor((s.length - 1) / 4)].toFixed(2)}-${s[Math.ceil((3 * (s.length - 1)) / 4)].toFixed(2)})`
  );
};
console.log("");
for (const n of names) {
  const of = (k) => median(rounds.map((r) => r[n][k]));
  console.log(
    `${n}: per call ${of("cpuUs").toFixed(1)} µs CPU, ${Math.round(of("allocatedBytes"))} bytes allocated, ` +
      `${of("gcUs").toFixed(1)} µs GC; ${Math.round(of("rps"))} req/s (medians of ${rounds.length} rounds)`,
  );
}
for (const n of names.filter((x) => x !== "plain")) {
  const ratio = (k) => spread(rounds.map((r) => r[n][k] / r.plain[k]));
  console.log(
    `${n} / plain, within each round: CPU per call ${ratio("cpuUs")}; bytes allocated per call ` +
      `${ratio("allocatedBytes")}; requests/s ${ratio("rps")}; p99 ${ratio("p99")}`,
  );
  for (const [k, goal, label] of [
    ["rps", { atLeast: 0.95 }, "requests/s at least 0.95x"],
    ["p99", { atMost: 1 }, "p99 at most 1x"],
  ]) {
    const i = ratioInterval(rounds.map((r) => r[n][k] / r.plain[k]));
    const shown = {
      ...i,
      mean: Number(i.mean.toFixed(3)),
      low: i.low === null ? null : Number(i.low.toFixed(3)),
      high: i.high === null ? null : Number(i.high.toFixed(3)),
    };
    console.log(`${n} / plain, ${label}: ${showInterval(shown)}: ${targetStatus(i, goal)}`);
  }
}
