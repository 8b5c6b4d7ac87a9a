// Benchmarks, not tests: npm run bench. Every gRPC server is driven by the same neutral load generator, a grpc-go
// client (bench/go-load, built from Debian's grpc-go like the grpc-go implementation), so that the figures measure
// the servers and not the generator: the reference server, a plain grpc-js server of the same contract
// (bench/plain-grpc-js-server.js) and the grpc-go implementation, as requests/s, p50 and p99, and their ratios;
// `serve --workers 2` against `--workers 1`; `example-conformance load`'s own ceiling against grpc-go as a ratio to
// the Go generator's; the default `check` run's wall time locally and through a proxy adding 25 ms each way; and the
// reference's HTTP create and read throughput on each store under wrk. Prints the table, writes
// bench/results.json with every figure and every round, and writes docs/performance.md whole from it.
//
// BENCH_DURATION (seconds, default 5) sets each load run's length, BENCH_ROUNDS (default 3) how many rounds. A round
// runs every gRPC measurement once, in an order rotated from round to round, so that whatever else the machine does
// weighs on all alike; ratios are taken within a round and each figure is the median over rounds. BENCH_ONLY=grpc
// runs the gRPC measurements alone and keeps bench/results.json and docs/performance.md as they are (their figures come from a whole run).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { implementations } from "../dist/fixtures/implementations/index.js";
import { startLatencyProxy } from "../dist/test/helpers/latency-proxy.js";
import { postgresBin, startTestPostgres } from "../dist/test/helpers/postgres.js";
import { missingGoLoad, runGoLoad, startPlainGrpcJs } from "../dist/test/bench/go-load.js";
import { performancePage } from "../dist/test/helpers/performance-page.js";

const ROOT = new URL("..", import.meta.url).pathname;
const CLI = join(ROOT, "bin", "example-conformance.js");
const SECONDS = Number(process.env.BENCH_DURATION ?? 5);
const DURATION = `${SECONDS}s`;
const CHECK_RUNS = 5;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
/** The load every gRPC server is measured under: the issue's, and the generator's defaults. */
const IN_FLIGHT = 64;
const CONNECTIONS = 4;
/**
 * The default `check`'s local wall time is compared with the same run one check at a time (--concurrency 1), measured
 * in the same bench, alternately: "no slower than before" the checks ran side by side.
 */
const GRPC_ONLY = process.env.BENCH_ONLY === "grpc";
const tmp = mkdtempSync(join(os.tmpdir(), "bench-"));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round2 = (x) => Number(x.toFixed(2));

/** The default `check` and the same one check at a time, run alternately, CHECK_RUNS times each. */
function checkWallTime() {
  const times = { concurrent: [], oneAtATime: [] };
  for (let i = 0; i < CHECK_RUNS; i++) {
    for (const [key, extra] of [["concurrent", []], ["oneAtATime", ["--concurrency", "1"]]]) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [CLI, "check", "--seed", "1", ...extra], { stdio: "ignore", timeout: 120_000 });
      if (r.status !== 0) throw new Error(`check ${extra.join(" ")} exited ${r.status}`);
      times[key].push(performance.now() - t0);
    }
  }
  const summary = (xs) => ({ medianMs: Math.round(median(xs)), runsMs: xs.map(Math.round) });
  return { ...summary(times.concurrent), oneAtATime: summary(times.oneAtATime) };
}

/** `check` of a reference server on both interfaces through a proxy that adds 25 ms each way: a 50 ms round trip. */
async function checkThroughProxy() {
  const server = await startReference();
  const grpcProxy = await startLatencyProxy(Number(server.address.split(":").at(-1)), 25);
  const httpProxy = await startLatencyProxy(Number(new URL(server.httpUrl).port), 25);
  try {
    const report = join(tmp, "proxy-check.json");
    const t0 = performance.now();
    // Not spawnSync: the proxies run in this process, and a blocked event loop would relay nothing.
    const r = await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, "check", "--grpc", grpcProxy.address, "--http", `http://${httpProxy.address}`, "--seed", "1", "--report-json", report], { stdio: "ignore", timeout: 10 * 60_000 });
      child.once("error", reject);
      child.once("exit", (status) => resolve({ status }));
    });
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

/**
 * `example-conformance load` in its own process at the Go generator's load, with a thread per core but one, which
 * the server needs: on 2 cores one thread drives grpc-go faster than two (measured), since the threads would take
 * the server's core.
 */
function harnessLoad(address, flag = "--grpc", threads = Math.max(1, Math.min(os.availableParallelism() - 1, CONNECTIONS))) {
  const file = join(tmp, `load-${Date.now()}.json`);
  const args = ["--duration", DURATION, "--concurrency", String(IN_FLIGHT), "--connections", String(CONNECTIONS), "--threads", String(threads), "--quiet"];
  const r = spawnSync(process.execPath, [CLI, "load", flag, address, ...args, "--json", file], { stdio: ["ignore", "ignore", "inherit"], timeout: 15 * 60_000 });
  if (r.status !== 0) throw new Error(`load ${flag} ${address} exited ${r.status}`);
  const report = JSON.parse(readFileSync(file, "utf8"));
  return { requestsPerSecond: report.requestsPerSecond, latencyMs: report.latencyMs, errors: report.errors, threads, ...(report.mix && { mix: report.mix }) };
}

/** `load` over each transport against the reference, one thread each so that the transports are compared alike. */
const transportLoads = (ref) => [
  ["loadGrpcOnReference", () => harnessLoad(ref.address, "--grpc", 1)],
  ["loadConnectOnReference", () => harnessLoad(ref.httpUrl, "--connect", 1)],
  ["loadGrpcWebOnReference", () => harnessLoad(ref.httpUrl, "--grpc-web", 1)],
  ["loadHttpOnReference", () => harnessLoad(ref.httpUrl, "--http", 1)],
];

const goLoad = (address) => runGoLoad(address, { concurrency: IN_FLIGHT, connections: CONNECTIONS, duration: DURATION, warmup: "1s" });

function startReference(store = "memory:", workers = 1) {
  return new Promise((resolve, reject) => {
    const args = [CLI, "serve", "--grpc-port", "0", "--http-port", "0", "--log-level", "silent", "--store", store, "--workers", String(workers)];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
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
async function storeThroughput(pg, pgMissing) {
  if (spawnSync("wrk", ["--version"]).error) return [{ store: "all", note: "not available: wrk is not installed (Debian package wrk)" }];
  const stores = [["memory", "memory:"], ["embedded (PGlite)", `pglite:${join(tmp, "data")}`], ...(pg ? [["PostgreSQL (private cluster, fsync on)", pg.url]] : [])];
  const rows = pg ? [] : [{ store: "PostgreSQL", note: `not available: ${pgMissing}` }];
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
  return rows;
}

function machine() {
  const version = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return undefined;
    }
  };
  return {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    go: version("go", ["version"])?.replace(/^go version /, ""),
    platform: `${os.platform()} ${os.release()}`,
  };
}

/**
 * The round with the median requests/s (the lower of the middle two for an even count), whole, so that its
 * percentiles belong to it; and every round's figure.
 */
function summary(runs) {
  const r = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor((runs.length - 1) / 2)];
  const errors = Object.values(r.errors ?? {}).reduce((a, b) => a + b, 0);
  return { requestsPerSecond: r.requestsPerSecond, p50: r.latencyMs.p50, p90: r.latencyMs.p90, p99: r.latencyMs.p99, max: r.latencyMs.max, errors, rounds: runs.map((x) => x.requestsPerSecond) };
}

/** a / b within each round (of requests/s, or of whatever `of` picks): the median, and the spread over the rounds. */
function ratio(a, b, of = (x) => x.requestsPerSecond) {
  const perRound = a.map((x, i) => of(x) / of(b[i]));
  return { median: round2(median(perRound)), min: round2(Math.min(...perRound)), max: round2(Math.max(...perRound)), rounds: perRound.map(round2) };
}

const results = {
  date: new Date().toISOString(),
  machine: machine(),
  // What else the machine was doing: figures from a busy machine mislead.
  loadAverageAtStart: os.loadavg().map(round2),
  load: { duration: DURATION, warmup: "1s", inFlight: IN_FLIGHT, connections: CONNECTIONS, generator: "bench/go-load (grpc-go client, one ClientConn per connection)" },
  rounds: ROUNDS,
  check: GRPC_ONLY ? undefined : checkWallTime(),
  checkThroughProxy: GRPC_ONLY ? undefined : await checkThroughProxy(),
  grpc: {},
  ratios: {},
  notes: [],
  // Facts about a results file that its figures do not carry (docs/performance.md prints them); a new run has none.
  caveats: [],
};

const bin = postgresBin();
const pg = "dir" in bin ? await startTestPostgres(bin.dir) : undefined;
try {
  const missing = await missingGoLoad();
  if (missing) {
    results.notes.push(`gRPC servers: not measured: the Go load generator needs ${missing}`);
  } else {
    const go = implementations.find((i) => i.name === "go");
    // Every server runs for the whole benchmark; only the one being measured gets calls.
    const servers = { reference: await startReference(), plain: await startPlainGrpcJs(), go: await go.start() };
    // --workers above 1 needs a store the workers share; gRPC never touches it, and both sides use the same one.
    if (pg) {
      servers.workers1 = await startReference(pg.url, 1);
      servers.workers2 = await startReference(pg.url, 2);
    } else {
      results.notes.push(`serve --workers: not measured: it needs PostgreSQL (${bin.missing})`);
    }
    const measures = [
      ["reference", () => goLoad(servers.reference.address)],
      ["plain", () => goLoad(servers.plain.address)],
      ["go", () => goLoad(servers.go.address)],
      ["harnessLoadOnGo", () => harnessLoad(servers.go.address)],
      ...transportLoads(servers.reference),
      ...(pg ? [["workers1", () => goLoad(servers.workers1.address)], ["workers2", () => goLoad(servers.workers2.address)]] : []),
    ];
    const runs = Object.fromEntries(measures.map(([name]) => [name, []]));
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < measures.length; k++) {
          const [name, measure] = measures[(k + round) % measures.length];
          runs[name].push(await measure());
        }
      }
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.close()));
    }
    for (const [name, r] of Object.entries(runs)) results.grpc[name] = { ...summary(r), all: r };
    results.ratios.referenceToPlain = ratio(runs.reference, runs.plain);
    results.ratios.referenceToPlainP99 = ratio(runs.reference, runs.plain, (x) => x.latencyMs.p99);
    results.ratios.referenceToGo = ratio(runs.reference, runs.go);
    results.ratios.plainToGo = ratio(runs.plain, runs.go);
    results.ratios.harnessLoadToGoLoad = ratio(runs.harnessLoadOnGo, runs.go);
    results.ratios.loadConnectToGrpc = ratio(runs.loadConnectOnReference, runs.loadGrpcOnReference);
    results.ratios.loadGrpcWebToGrpc = ratio(runs.loadGrpcWebOnReference, runs.loadGrpcOnReference);
    if (pg) results.ratios.workers2ToWorkers1 = ratio(runs.workers2, runs.workers1);
  }
  results.stores = GRPC_ONLY ? [] : await storeThroughput(pg, "missing" in bin ? bin.missing : undefined);
} finally {
  await pg?.destroy();
}
results.loadAverageAtEnd = os.loadavg().map(round2);

const g = results.grpc;
const q = results.ratios;
const met = (ok) => (ok ? "**met**" : "**not met**");
const spread = (r) => `${r.median} (rounds ${r.min}-${r.max})`;
const grpcRow = (label, r) =>
  `| ${label} | ${r.requestsPerSecond} req/s; p50 ${r.p50} ms, p99 ${r.p99} ms${r.errors ? `; ${r.errors} errors` : ""}${ROUNDS > 1 ? ` (rounds: ${r.rounds.join(", ")} req/s)` : ""} |`;
const m = results.machine;
const targets = [];
const proxy = results.checkThroughProxy ?? { wallMs: NaN, exitCode: null, failed: [] };
const check = results.check ?? { medianMs: NaN, runsMs: [], oneAtATime: { medianMs: NaN, runsMs: [] } };
if (!GRPC_ONLY) targets.push(`| default \`check\` through the 50 ms round-trip proxy at most 5 s | ${(proxy.wallMs / 1000).toFixed(1)} s | ${met(proxy.wallMs <= 5000 && proxy.exitCode === 0)} |`);
if (!GRPC_ONLY) {
  targets.push(
    `| default \`check\` locally no slower than one check at a time (\`--concurrency 1\`, ${(check.oneAtATime.medianMs / 1000).toFixed(2)} s in this run) | ${(check.medianMs / 1000).toFixed(2)} s | ${met(check.medianMs <= check.oneAtATime.medianMs)} |`,
    // Issue 29's target. A floor stands under it: the clock probe of the history checks takes its samples 1.1 s apart
    // (a clock in whole seconds must be seen to tick), and process start comes before it.
    `| default \`check\` of the built-in reference locally under 1 s | ${(check.medianMs / 1000).toFixed(2)} s (the history checks' clock probe alone spans 1.1 s) | ${met(check.medianMs < 1000)} |`,
  );
}
if (q.referenceToPlain) {
  targets.push(`| reference at least 0.95x plain grpc-js requests/s | ${spread(q.referenceToPlain)} | ${met(q.referenceToPlain.median >= 0.95)} |`);
  targets.push(`| reference p99 no worse than plain grpc-js's | ${g.reference.p99} ms against ${g.plain.p99} ms; per-round ratio ${spread(q.referenceToPlainP99)} | ${met(q.referenceToPlainP99.median <= 1)} |`);
  targets.push(`| \`load\` at least 0.6x the Go generator's requests/s against grpc-go | ${spread(q.harnessLoadToGoLoad)} | ${met(q.harnessLoadToGoLoad.median >= 0.6)} |`);
  targets.push(`| \`load --connect\` at least 0.6x \`load --grpc\` against the reference, same load | ${spread(q.loadConnectToGrpc)} | ${met(q.loadConnectToGrpc.median >= 0.6)} |`);
  targets.push(`| \`load --grpc-web\` at least 0.6x \`load --grpc\` against the reference, same load | ${spread(q.loadGrpcWebToGrpc)} | ${met(q.loadGrpcWebToGrpc.median >= 0.6)} |`);
  targets.push("| `load`'s memory flat over a 60 s run on each transport | not measured by this bench | **not resolved** (unmeasured) |");
}
if (q.workers2ToWorkers1) {
  targets.push(
    `| \`serve --workers 2\` near 2x one worker, with the generator on other cores | ${spread(q.workers2ToWorkers1)} here, where the generator shares the ${m.cores} cores with the server | ${m.cores >= 4 ? met(q.workers2ToWorkers1.median >= 1.7) : "**not resolved** on this machine: the generator needs cores of its own"} |`,
  );
}
const lines = [
  `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}${m.go ? `, ${m.go}` : ""}, ${m.platform}; load average ${results.loadAverageAtStart[0]} at the start, ${results.loadAverageAtEnd[0]} at the end.`,
  `Load: the Go generator (grpc-go client) with ${IN_FLIGHT} calls in flight over ${CONNECTIONS} connections, ${DURATION} after a 1 s warm-up, on the same machine as the server; ${ROUNDS} interleaved round${ROUNDS > 1 ? "s" : ""}, each figure the median round, each ratio the median of the rounds' own ratios.`,
  ...(m.cores <= 2 ? [`On ${m.cores} cores the generator shares the cores with the server it measures: absolute figures are the pair's, ratios compare servers under the same generator.`] : []),
  "",
  "| measure | result |",
  "|---|---|",
  ...(g.reference
    ? [
        grpcRow("reference server (`serve`)", g.reference),
        grpcRow("plain grpc-js server (proto-loader, no guard)", g.plain),
        grpcRow("grpc-go server (fixtures/implementations/go)", g.go),
        `| reference / plain grpc-js, requests/s | ${spread(q.referenceToPlain)} |`,
        `| reference / plain grpc-js, p99 | ${spread(q.referenceToPlainP99)} |`,
        `| reference / grpc-go, requests/s | ${spread(q.referenceToGo)} |`,
        `| plain grpc-js / grpc-go, requests/s | ${spread(q.plainToGo)} |`,
        `| \`example-conformance load --threads ${g.harnessLoadOnGo.all[0].threads}\` against grpc-go, same load | ${g.harnessLoadOnGo.requestsPerSecond} req/s; p50 ${g.harnessLoadOnGo.p50} ms, p99 ${g.harnessLoadOnGo.p99} ms |`,
        `| \`load\` / Go generator against grpc-go, requests/s | ${spread(q.harnessLoadToGoLoad)} |`,
        grpcRow("`load --grpc` against the reference, one thread", g.loadGrpcOnReference),
        grpcRow("`load --connect` against the reference, one thread", g.loadConnectOnReference),
        grpcRow("`load --grpc-web` against the reference, one thread", g.loadGrpcWebOnReference),
        grpcRow(`\`load --http\` against the reference (memory store), one thread, mix ${Object.entries(g.loadHttpOnReference.all[0].mix ?? {}).map(([k, n]) => `${k}=${n}`).join(",")}`, g.loadHttpOnReference),
        `| \`load --connect\` / \`load --grpc\`, requests/s | ${spread(q.loadConnectToGrpc)} |`,
        `| \`load --grpc-web\` / \`load --grpc\`, requests/s | ${spread(q.loadGrpcWebToGrpc)} |`,
        ...(g.workers1
          ? [
              grpcRow("`serve --workers 1` (PostgreSQL store)", g.workers1),
              grpcRow("`serve --workers 2` (PostgreSQL store)", g.workers2),
              `| \`--workers 2\` / \`--workers 1\`, requests/s${m.cores <= 2 ? ` (the generator shares the ${m.cores} cores)` : ""} | ${spread(q.workers2ToWorkers1)} |`,
            ]
          : []),
      ]
    : []),
  ...(GRPC_ONLY
    ? []
    : [
        `| \`check\` (default run, built-in reference server), wall time, median of ${CHECK_RUNS} | ${(check.medianMs / 1000).toFixed(2)} s (runs: ${check.runsMs.map((x) => (x / 1000).toFixed(2)).join(", ")} s) |`,
        `| the same with \`--concurrency 1\`, run alternately with it | ${(check.oneAtATime.medianMs / 1000).toFixed(2)} s (runs: ${check.oneAtATime.runsMs.map((x) => (x / 1000).toFixed(2)).join(", ")} s) |`,
        `| \`check --grpc --http\` of the reference through a 50 ms round-trip proxy, wall time, one run | ${(proxy.wallMs / 1000).toFixed(1)} s (exit ${proxy.exitCode}${proxy.failed.length ? `: ${proxy.failed.join(", ")}` : ""}) |`,
      ]),
  ...results.notes.map((n) => `| ${n.split(":")[0]} | ${n.slice(n.indexOf(":") + 2)} |`),
  ...results.stores.map((r) =>
    r.note
      ? `| HTTP on the ${r.store} store | ${r.note} |`
      : `| HTTP on the ${r.store} store, wrk 32 connections | create (POST) ${r.create.requestsPerSecond} req/s, p50 ${r.create.p50} ms, p99 ${r.create.p99} ms${r.create.non2xx ? `, ${r.create.non2xx} not 2xx` : ""}; read (GET) ${r.read.requestsPerSecond} req/s, p50 ${r.read.p50} ms, p99 ${r.read.p99} ms${r.read.non2xx ? `, ${r.read.non2xx} not 2xx` : ""} |`,
  ),
  "",
  "| target | measured | |",
  "|---|---|---|",
  ...targets,
];
// Round trips through the 50 ms proxy, by time and by request bursts, and per check (bench/round-trips.js).
if (!GRPC_ONLY) { const { measureRoundTrips, roundTripRows } = await import("./round-trips.js"); results.roundTrips = await measureRoundTrips(); const t = roundTripRows(results.roundTrips); lines.splice(lines.indexOf("|---|---|") + 1, 0, ...t.rows); lines.push(t.target); }
results.table = lines.join("\n");
// A partial run does not replace the whole run's figures.
writeFileSync(GRPC_ONLY ? join(tmp, "results.json") : join(ROOT, "bench", "results.json"), `${JSON.stringify(results, null, 2)}\n`);
if (!GRPC_ONLY) writeFileSync(join(ROOT, "docs", "performance.md"), performancePage(results));
console.log(results.table);
