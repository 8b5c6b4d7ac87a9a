// Benchmarks, not tests: npm run bench. Measures the default `check` run's wall time, the reference server and a
// grpc-go implementation under `load` at the same concurrency, the load generator's own ceiling, and the reference's
// HTTP create and read throughput on each store under wrk; prints a table and writes bench/results.json. BENCH_DURATION (seconds, default 5) sets each load run's length, BENCH_ROUNDS
// (default 3) how many times each is run: rounds interleave the servers, so that whatever else the machine does
// weighs on both alike, and each row reports its median round.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { implementations } from "../dist/fixtures/implementations/index.js";
import { startLatencyProxy } from "../dist/test/helpers/latency-proxy.js";
import { postgresBin, startTestPostgres } from "../dist/test/helpers/postgres.js";

const ROOT = new URL("..", import.meta.url).pathname;
const CLI = join(ROOT, "bin", "example-conformance.js");
const DURATION = `${Number(process.env.BENCH_DURATION ?? 5)}s`;
const CHECK_RUNS = 5;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const tmp = mkdtempSync(join(os.tmpdir(), "bench-"));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function checkWallTime() {
  const times = [];
  for (let i = 0; i < CHECK_RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [CLI, "check", "--seed", "1"], { stdio: "ignore", timeout: 120_000 });
    if (r.status !== 0) throw new Error(`check exited ${r.status}`);
    times.push(performance.now() - t0);
  }
  return { medianMs: Math.round(median(times)), runsMs: times.map(Math.round) };
}

/** `check` of a reference server on both interfaces through a proxy that adds 25 ms each way: a 50 ms round trip. */
async function checkThroughProxy() {
  const server = await startReference();
  const grpcProxy = await startLatencyProxy(Number(server.address.split(":").at(-1)), 25);
  const httpProxy = await startLatencyProxy(Number(new URL(server.httpUrl).port), 25);
  try {
    const report = join(tmp, "proxy-check.json");
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [CLI, "check", "--grpc", grpcProxy.address, "--http", `http://${httpProxy.address}`, "--seed", "1", "--report-json", report], { stdio: "ignore", timeout: 10 * 60_000 });
    const wallMs = Math.round(performance.now() - t0);
    // A verdict that changes with latency is a finding, not noise: name what failed.
    const failed = r.status === 1 ? JSON.parse(readFileSync(report, "utf8")).checks.filter((c) => c.gating).map((c) => c.id) : [];
    return { wallMs, exitCode: r.status, failed };
  } finally {
    await grpcProxy.close();
    await httpProxy.close();
    await server.close();
  }
}

/** The load generator in its own process, so that it never shares an event loop with a server. */
function load(address, concurrency, connections, threads = 1) {
  const file = join(tmp, `load-${Date.now()}.json`);
  const args = ["--duration", DURATION, "--concurrency", String(concurrency), "--connections", String(connections), "--threads", String(threads), "--quiet"];
  const r = spawnSync(process.execPath, [CLI, "load", "--grpc", address, ...args, "--json", file], {
    stdio: ["ignore", "ignore", "inherit"],
    timeout: 15 * 60_000,
  });
  if (r.status !== 0) throw new Error(`load against ${address} exited ${r.status}`);
  return JSON.parse(readFileSync(file, "utf8"));
}

function startReference(store = "memory:") {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "serve", "--grpc-port", "0", "--http-port", "0", "--log-level", "silent", "--store", store], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      const g = /^grpc (\S+)$/m.exec(out);
      const h = /^http (\S+)$/m.exec(out);
      if (g && h) resolve({ address: g[1], httpUrl: h[1], close: () => new Promise((r) => (child.once("exit", r), child.kill("SIGTERM"))) });
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
}

/** wrk (C, one thread: far from the bottleneck at these rates) against one URL; a Lua script makes it POST. */
function wrk(url, post) {
  const args = ["-t", "1", "-c", "32", "-d", DURATION, "--latency"];
  if (post) {
    const script = join(tmp, "post.lua");
    writeFileSync(script, `wrk.method = "POST"\nwrk.body = '{"body": "bench"}'\nwrk.headers["Content-Type"] = "application/json"\n`);
    args.push("-s", script);
  }
  const r = spawnSync("wrk", [...args, url], { encoding: "utf8", timeout: 5 * 60_000 });
  if (r.status !== 0) throw new Error(`wrk exited ${r.status}: ${r.stderr}`);
  const number = (re) => Number(re.exec(r.stdout)?.[1] ?? NaN);
  const ms = (pct) => {
    const m = new RegExp(`^\\s*${pct}%\\s+([\\d.]+)(us|ms|s)`, "m").exec(r.stdout);
    return m ? Number((Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2]]).toFixed(2)) : NaN;
  };
  const non2xx = number(/Non-2xx or 3xx responses: (\d+)/);
  return { requestsPerSecond: Math.round(number(/Requests\/sec:\s+([\d.]+)/)), p50: ms(50), p99: ms(99), non2xx: Number.isNaN(non2xx) ? 0 : non2xx };
}

/** The reference's HTTP create (POST) and read (GET of one message) throughput on each store it can open here. */
async function storeThroughput() {
  if (spawnSync("wrk", ["--version"]).error) return [{ store: "all", note: "not available: wrk is not installed (Debian package wrk)" }];
  const bin = postgresBin();
  const pg = "dir" in bin ? await startTestPostgres(bin.dir) : undefined;
  const stores = [["memory", "memory:"], ["embedded (PGlite)", `pglite:${join(tmp, "data")}`], ...(pg ? [["PostgreSQL (private cluster, fsync on)", pg.url]] : [])];
  const rows = pg ? [] : [{ store: "PostgreSQL", note: `not available: ${bin.missing}` }];
  try {
    for (const [name, url] of stores) {
      const server = await startReference(url);
      try {
        const create = wrk(`${server.httpUrl}/messages`, true);
        const created = await fetch(`${server.httpUrl}/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"body": "read me"}' });
        const { id } = await created.json();
        const read = wrk(`${server.httpUrl}/messages/${id}`, false);
        rows.push({ store: name, create, read });
      } finally {
        await server.close();
      }
    }
  } finally {
    await pg?.destroy();
  }
  return rows;
}

const row = (name, runs) => {
  // The round with the median throughput, whole, so that its percentiles belong to it.
  const r = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(runs.length / 2)];
  return {
    name,
    requestsPerSecond: r.requestsPerSecond,
    p50: r.latencyMs.p50,
    p90: r.latencyMs.p90,
    p99: r.latencyMs.p99,
    max: r.latencyMs.max,
    errors: Object.values(r.errors).reduce((a, b) => a + b, 0),
    mismatches: r.stateless.mismatches,
    roundsRequestsPerSecond: runs.map((x) => x.requestsPerSecond),
  };
};

const results = {
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model ?? "unknown", cores: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}` },
  // What else the machine was doing when the bench started: figures from a busy machine mislead.
  loadAverageAtStart: os.loadavg().map((l) => Number(l.toFixed(2))),
  loadDuration: DURATION,
  rounds: ROUNDS,
  check: checkWallTime(),
  checkThroughProxy: await checkThroughProxy(),
  load: [],
  notes: [],
};

const go = implementations.find((i) => i.name === "go");
const missing = await go.missing();
if (missing) results.notes.push(`grpc-go: not available: ${missing}`);
const reference = await startReference();
const goServer = missing ? undefined : await go.start().catch((err) => void results.notes.push(`grpc-go: not available: ${err.message}`));
// The generator's ceiling uses every core: one thread of Node's HTTP/2 client tops out near one core's worth.
const threads = Math.min(os.cpus().length, 8);
const runs = { reference: [], go: [], ceiling: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    runs.reference.push(load(reference.address, 64, 4));
    if (goServer) {
      runs.go.push(load(goServer.address, 64, 4));
      runs.ceiling.push(load(goServer.address, 256, 8, threads));
    }
  }
} finally {
  await reference.close();
  await goServer?.close();
}
results.load.push(row("reference (grpc-js), 64 in flight, 4 connections", runs.reference));
if (goServer) {
  results.load.push(row("grpc-go, 64 in flight, 4 connections", runs.go));
  results.load.push(row(`generator ceiling: grpc-go, 256 in flight, 8 connections, ${threads} threads`, runs.ceiling));
  const perRound = (a, b) => median(a.map((x, i) => x.requestsPerSecond / b[i].requestsPerSecond));
  results.ratio = { referenceToGo: Number(perRound(runs.reference, runs.go).toFixed(2)) };
  results.generator = {
    ceilingRequestsPerSecond: results.load[2].requestsPerSecond,
    timesReference: Number(perRound(runs.ceiling, runs.reference).toFixed(2)),
  };
}

results.stores = await storeThroughput();

writeFileSync(join(ROOT, "bench", "results.json"), `${JSON.stringify(results, null, 2)}\n`);
const rounds = (r) => (r.roundsRequestsPerSecond.length > 1 ? ` (rounds: ${r.roundsRequestsPerSecond.join(", ")})` : "");
const lines = [
  `machine: ${results.machine.cpu}, ${results.machine.cores} cores, ${results.machine.memoryGiB} GiB, Node ${results.machine.node}; load average at start ${results.loadAverageAtStart.join(", ")}`,
  "",
  `| measure | result |`,
  `|---|---|`,
  `| \`check\` (default run, built-in reference server), wall time, median of ${CHECK_RUNS} | ${(results.check.medianMs / 1000).toFixed(2)} s |`,
  `| \`check --grpc --http\` of the reference through a 50 ms round-trip proxy, wall time, one run | ${(results.checkThroughProxy.wallMs / 1000).toFixed(1)} s (exit ${results.checkThroughProxy.exitCode}${results.checkThroughProxy.failed.length ? `: ${results.checkThroughProxy.failed.join(", ")}` : ""}) |`,
  ...results.load.map((r) => `| ${r.name}, median of ${ROUNDS} | ${r.requestsPerSecond} req/s${rounds(r)}; p50 ${r.p50} ms, p90 ${r.p90} ms, p99 ${r.p99} ms, max ${r.max} ms; ${r.errors} errors, ${r.mismatches} mismatches |`),
  ...(results.ratio ? [`| reference / grpc-go requests/s, median of the rounds' ratios | ${results.ratio.referenceToGo} |`] : []),
  ...(results.generator ? [`| load generator ceiling / reference requests/s, median of the rounds' ratios | ${results.generator.timesReference} |`] : []),
  ...results.notes.map((n) => `| ${n.split(":")[0]} | ${n.slice(n.indexOf(":") + 2)} |`),
  ...results.stores.map((r) =>
    r.note
      ? `| HTTP on the ${r.store} store | ${r.note} |`
      : `| HTTP on the ${r.store} store, wrk 32 connections | create (POST) ${r.create.requestsPerSecond} req/s, p50 ${r.create.p50} ms, p99 ${r.create.p99} ms${r.create.non2xx ? `, ${r.create.non2xx} not 2xx` : ""}; read (GET) ${r.read.requestsPerSecond} req/s, p50 ${r.read.p50} ms, p99 ${r.read.p99} ms${r.read.non2xx ? `, ${r.read.non2xx} not 2xx` : ""} |`,
  ),
];
console.log(lines.join("\n"));
