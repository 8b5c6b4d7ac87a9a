// Benchmarks, not tests: npm run bench. Every gRPC server is driven by the same neutral load generator, a grpc-go
// client (bench/go-load, built from Debian's grpc-go like the grpc-go implementation), so that the figures measure
// the servers and not the generator: the reference server, a plain grpc-js server of the same contract
// (bench/plain-grpc-js-server.js) and the grpc-go implementation, as requests/s, p50 and p99, and their ratios;
// `serve --workers 2` against `--workers 1`; `example-conformance load`'s own ceiling against grpc-go as a ratio to
// the Go generator's; the default `check` run's wall time locally and through a proxy adding 25 ms each way; and the
// reference's HTTP create and read throughput on each store under wrk. Prints the table, writes
// bench/results.json with every figure and every round, and writes docs/performance.md whole from it.
//
// BENCH_DURATION (seconds, default 2) sets each load run's length, BENCH_ROUNDS (default 10) how many rounds,
// BENCH_CHECK_RUNS (default 5) how many runs of each local `check`. Many short rounds, not a few long ones: a round
// starts every server afresh (one instance of a Node server can run steadily faster or slower than the next), runs
// every gRPC measurement once, in an order rotated from round to round, so that whatever else the machine does weighs
// on all alike, and stops them. Ratios are taken within a round; each figure is the mean over rounds with its 95 %
// confidence interval (Student's t over the rounds, test/bench/interval.ts; a ratio is the geometric mean, its
// interval on the log scale), and each target is met, not met or not resolved by that interval, never by one median.
// BENCH_MEMORY_DURATION (seconds, default 120) sets the length of `load`'s memory run on each transport: long enough
// that V8's first mark-compact falls in its first half (docs/load.md, "Memory").
// BENCH_ONLY=grpc runs the gRPC measurements alone and keeps bench/results.json and docs/performance.md as they are
// (their figures come from a whole run).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { implementations } from "../dist/fixtures/implementations/index.js";
import { startLatencyProxy } from "../dist/test/helpers/latency-proxy.js";
import { postgresBin, startTestPostgres } from "../dist/test/helpers/postgres.js";
import { missingGoLoad, runGoLoad, startPlainGrpcJs } from "../dist/test/bench/go-load.js";
import { performancePage, showInterval, targetsTable } from "../dist/test/helpers/performance-page.js";
import { meanInterval, ratioInterval, targetStatus } from "../dist/test/bench/interval.js";
import { startServe } from "./start-serve.js";

const ROOT = new URL("..", import.meta.url).pathname;
const CLI = join(ROOT, "bin", "example-conformance.js");
const SECONDS = Number(process.env.BENCH_DURATION ?? 2);
const DURATION = `${SECONDS}s`;
const CHECK_RUNS = Math.max(1, Number(process.env.BENCH_CHECK_RUNS ?? 5));
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 10));
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
const round3 = (x) => Number(x.toFixed(3));
/** An interval with its figures rounded (`digits` places) for results.json. */
const rounded = (i, digits) => {
  const r = (x) => (x === null ? null : Number(x.toFixed(digits)));
  return { ...i, mean: r(i.mean), low: r(i.low), high: r(i.high) };
};
/** bench/reference-cost.js's last recorded run (RECORD=1), from the results this run replaces. */
function previousReferenceCost() {
  try {
    return JSON.parse(readFileSync(join(ROOT, "bench", "results.json"), "utf8")).referenceCost;
  } catch {
    return undefined;
  }
}

/** The 1, 5 and 15 minute load averages, from /proc/loadavg where there is one. */
function loadAverage() {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).map(Number);
  } catch {
    return os.loadavg().map(round2);
  }
}

/** The default `check` and the same one check at a time, run alternately, CHECK_RUNS times each. */
function checkWallTime() {
  const times = { concurrent: [], oneAtATime: [] };
  for (let i = 0; i < CHECK_RUNS; i++) {
    for (const [key, extra] of [
      ["concurrent", []],
      ["oneAtATime", ["--concurrency", "1"]],
    ]) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [CLI, "check", "--seed", "1", ...extra], {
        stdio: "ignore",
        timeout: 120_000,
      });
      if (r.status !== 0) throw new Error(`check ${extra.join(" ")} exited ${r.status}`);
      times[key].push(performance.now() - t0);
    }
  }
  const summary = (xs) => ({
    medianMs: Math.round(median(xs)),
    interval: rounded(meanInterval(xs), 0),
    runsMs: xs.map(Math.round),
  });
  // Each run over the one-at-a-time run beside it: the pairs share whatever the machine was doing.
  const pairs = times.concurrent.map((t, i) => t / times.oneAtATime[i]);
  return {
    ...summary(times.concurrent),
    oneAtATime: summary(times.oneAtATime),
    toOneAtATime: { ...rounded(ratioInterval(pairs), 3), rounds: pairs.map(round3) },
  };
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
      const child = spawn(
        process.execPath,
        [
          CLI,
          "check",
          "--grpc",
          grpcProxy.address,
          "--http",
          `http://${httpProxy.address}`,
          "--seed",
          "1",
          "--report-json",
          report,
        ],
        { stdio: "ignore", timeout: 10 * 60_000 },
      );
      child.once("error", reject);
      child.once("exit", (status) => resolve({ status }));
    });
    const wallMs = Math.round(performance.now() - t0);
    // A verdict that changes with latency is a finding, not noise: name what failed.
    const failed =
      r.status === 1
        ? JSON.parse(readFileSync(report, "utf8"))
            .checks.filter((c) => c.gating)
            .map((c) => c.id)
        : [];
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
function harnessLoad(
  address,
  flag = "--grpc",
  threads = Math.max(1, Math.min(os.availableParallelism() - 1, CONNECTIONS)),
) {
  const file = join(tmp, `load-${Date.now()}.json`);
  const args = [
    "--duration",
    DURATION,
    "--concurrency",
    String(IN_FLIGHT),
    "--connections",
    String(CONNECTIONS),
    "--threads",
    String(threads),
    "--quiet",
  ];
  const r = spawnSync(process.execPath, [CLI, "load", flag, address, ...args, "--json", file], {
    stdio: ["ignore", "ignore", "inherit"],
    timeout: 15 * 60_000,
  });
  if (r.status !== 0) throw new Error(`load ${flag} ${address} exited ${r.status}`);
  const report = JSON.parse(readFileSync(file, "utf8"));
  return {
    requestsPerSecond: report.requestsPerSecond,
    latencyMs: report.latencyMs,
    errors: report.errors,
    threads,
    ...(report.mix && { mix: report.mix }),
  };
}

/** `load` over each transport against the reference, one thread each so that the transports are compared alike. */
const transportLoads = [
  ["loadGrpcOnReference", (s) => harnessLoad(s.reference.address, "--grpc", 1)],
  ["loadConnectOnReference", (s) => harnessLoad(s.reference.httpUrl, "--connect", 1)],
  ["loadGrpcWebOnReference", (s) => harnessLoad(s.reference.httpUrl, "--grpc-web", 1)],
  ["loadHttpOnReference", (s) => harnessLoad(s.reference.httpUrl, "--http", 1)],
];

/** `load`'s memory run: BENCH_MEMORY_DURATION seconds (default 120, at least 4) on each transport. */
const MEMORY_SECONDS = Math.max(4, Number(process.env.BENCH_MEMORY_DURATION ?? 120));
/**
 * "Flat": the resident set of the run's second half reaches at most this many MiB above the highest of its first half
 * (the report's memory.growthMiB, harness/load/memory-growth.ts): a plateau, V8's saw-tooth included, reads 0 or less.
 */
const MEMORY_GROWTH_MIB = 10;
/** A run past that bound whose live heap grew by at most this much says nothing either way: "not resolved". */
const LIVE_HEAP_GROWTH_MIB = 2;

/**
 * One `load` run of MEMORY_SECONDS at the Go generator's load, in a process of its own (spawned, not waited for
 * synchronously: connect-es serves from this one), read from its report: the load process's resident set and heap
 * sampled once a second, the highest of each half of the run, the end, and the growth the report works out.
 */
async function memoryRun(target, flag, address, extra = []) {
  const file = join(tmp, `memory-${target}-${flag.slice(2)}.json`);
  const size = ["--concurrency", String(IN_FLIGHT), "--connections", String(CONNECTIONS)];
  const args = [
    CLI,
    "load",
    flag,
    address,
    "--duration",
    `${MEMORY_SECONDS}s`,
    ...size,
    "--quiet",
    "--json",
    file,
    ...extra,
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
  const status = await new Promise((resolve) => child.once("exit", resolve));
  // Exit 1 (errors: calls past their time on a busy machine) still measured the memory: the row counts them.
  if (status !== 0 && status !== 1) throw new Error(`load ${flag} ${address} exited ${status}`);
  const { memory, requests, errors, httpVersion, connections } = JSON.parse(readFileSync(file, "utf8"));
  const half = (xs) => Math.floor(xs.length / 2);
  const at = (xs) => ({
    firstHalfMax: Math.max(...xs.slice(0, half(xs))),
    secondHalfMax: Math.max(...xs.slice(half(xs))),
    end: xs[xs.length - 1],
  });
  const rss = at(memory.rssMiB);
  return {
    target,
    flag,
    requests,
    errors: Object.values(errors).reduce((x, y) => x + y, 0),
    httpVersion,
    connections,
    samples: memory.rssMiB.length,
    rssMiB: rss,
    heapUsedMiB: at(memory.heapUsedMiB),
    rssGrowthMiB: memory.growthMiB.rss,
    heapUsedGrowthMiB: memory.growthMiB.heapUsed,
    // The live heap: in use just after each of V8's mark-compacts (a leak raises it, the saw-tooth does not).
    heapAfterMarkCompactMiB: memory.heapAfterMarkCompactMiB ?? [],
  };
}

/**
 * `load`'s memory on each transport, each run against a server of its own: the reference for gRPC, Connect and
 * gRPC-Web over HTTP/1.1 and HTTP resources; connect-es for Connect and gRPC-Web over HTTP/2 (h2c), which the
 * reference's HTTP port does not speak.
 */
async function loadMemory() {
  const rows = [];
  for (const flag of ["--grpc", "--connect", "--grpc-web", "--http"]) {
    const server = await startReference();
    try {
      rows.push(await memoryRun("reference", flag, flag === "--grpc" ? server.address : server.httpUrl));
    } finally {
      await server.close();
    }
  }
  const es = implementations.find((i) => i.name === "connect-es");
  for (const flag of ["--connect", "--grpc-web"]) {
    const server = await es.start();
    try {
      rows.push(await memoryRun("connect-es", flag, `http://${server.address}`, ["--http2-prior-knowledge"]));
    } finally {
      await server.close();
    }
  }
  return rows;
}

const goLoad = (address) =>
  runGoLoad(address, { concurrency: IN_FLIGHT, connections: CONNECTIONS, duration: DURATION, warmup: "1s" });

function startReference(store = "memory:", workers = 1) {
  return startServe(CLI, ["--store", store, "--workers", String(workers)]);
}

/** wrk (C, one thread: far from the bottleneck at these rates) against one URL; a Lua script makes it POST. */
function wrk(url, post) {
  const args = ["-t", "1", "-c", "32", "-d", DURATION, "--latency"];
  if (post) {
    const script = join(tmp, "post.lua");
    writeFileSync(
      script,
      `wrk.method = "POST"\nwrk.body = '{"body": "bench"}'\nwrk.headers["Content-Type"] = "application/json"\n`,
    );
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
  return {
    requestsPerSecond: Math.round(number(/Requests\/sec:\s+([\d.]+)/)),
    p50: ms(50),
    p99: ms(99),
    non2xx: Number.isNaN(non2xx) ? 0 : non2xx,
  };
}

/** The reference's HTTP create (POST) and read (GET of one message) throughput on each store it can open here. */
async function storeThroughput(pg, pgMissing) {
  if (spawnSync("wrk", ["--version"]).error)
    return [{ store: "all", note: "not available: wrk is not installed (Debian package wrk)" }];
  const stores = [
    ["memory", "memory:"],
    ["embedded (PGlite)", `pglite:${join(tmp, "data")}`],
    ...(pg ? [["PostgreSQL (private cluster, fsync on)", pg.url]] : []),
  ];
  const rows = pg ? [] : [{ store: "PostgreSQL", note: `not available: ${pgMissing}` }];
  for (const [name, url] of stores) {
    const server = await startReference(url);
    try {
      const create = wrk(`${server.httpUrl}/messages`, true);
      const created = await fetch(`${server.httpUrl}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"body": "read me"}',
      });
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
 * percentiles belong to it; the mean requests/s and p99 over the rounds with their intervals; every round's figure.
 */
function summary(runs) {
  const r = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor((runs.length - 1) / 2)];
  const errors = runs.reduce((sum, x) => sum + Object.values(x.errors ?? {}).reduce((a, b) => a + b, 0), 0);
  const rps = runs.map((x) => x.requestsPerSecond);
  const p99 = runs.map((x) => x.latencyMs.p99);
  return {
    requestsPerSecond: r.requestsPerSecond,
    p50: r.latencyMs.p50,
    p90: r.latencyMs.p90,
    p99: r.latencyMs.p99,
    max: r.latencyMs.max,
    errors,
    interval: rounded(meanInterval(rps), 0),
    p99Interval: rounded(meanInterval(p99), 2),
    rounds: rps,
  };
}

/**
 * a / b within each round (of requests/s, or of whatever `of` picks): the geometric mean of the rounds' ratios with
 * its 95 % interval (on the log scale), the median, and every round's ratio.
 */
function ratio(a, b, of = (x) => x.requestsPerSecond) {
  const perRound = a.map((x, i) => of(x) / of(b[i]));
  return { ...rounded(ratioInterval(perRound), 3), median: round3(median(perRound)), rounds: perRound.map(round3) };
}

/** A target judged by the interval of its rounds (see test/bench/interval.ts). */
const judged = (id, target, goal, interval, unit = "", samples = "rounds") => ({
  id,
  target,
  measured: showInterval(interval, unit, samples),
  interval,
  goal,
  status: targetStatus(interval, goal),
});
/** A target measured by one run: there is no interval, and the page says so beside the status. */
const oneRun = (id, target, measured, ok) => ({
  id,
  target,
  measured: `${measured} (one run: no interval)`,
  interval: null,
  status: ok ? "met" : "not met",
});

/** Every server, started afresh for one round; if one fails to start, those already started are stopped. */
async function startServers(pg) {
  const go = implementations.find((i) => i.name === "go");
  const started = {};
  try {
    started.reference = await startReference();
    started.plain = await startPlainGrpcJs();
    started.go = await go.start();
    // --workers above 1 needs a store the workers share; gRPC never touches it, and both sides use the same one.
    if (pg) {
      started.workers1 = await startReference(pg.url, 1);
      started.workers2 = await startReference(pg.url, 2);
    }
    return started;
  } catch (e) {
    await Promise.all(Object.values(started).map((s) => s.close()));
    throw e;
  }
}

const results = {
  date: new Date().toISOString(),
  machine: machine(),
  // What else the machine was doing: figures from a busy machine mislead.
  loadAverageAtStart: loadAverage(),
  load: {
    duration: DURATION,
    warmup: "1s",
    inFlight: IN_FLIGHT,
    connections: CONNECTIONS,
    generator: "bench/go-load (grpc-go client, one ClientConn per connection)",
  },
  rounds: ROUNDS,
  check: GRPC_ONLY ? undefined : checkWallTime(),
  checkThroughProxy: GRPC_ONLY ? undefined : await checkThroughProxy(),
  grpc: {},
  ratios: {},
  targets: [],
  notes: [],
  // Facts about a results file that its figures do not carry (docs/performance.md prints them); a new run has none.
  caveats: [],
  // bench/reference-cost.js's last recorded run: this bench does not measure it, so it is kept.
  referenceCost: previousReferenceCost(),
};

const bin = postgresBin();
const pg = "dir" in bin ? await startTestPostgres(bin.dir) : undefined;
try {
  const missing = await missingGoLoad();
  if (missing) {
    results.notes.push(`gRPC servers: not measured: the Go load generator needs ${missing}`);
  } else {
    if (!pg) results.notes.push(`serve --workers: not measured: it needs PostgreSQL (${bin.missing})`);
    // Every server of a round runs for the whole round; only the one being measured gets calls.
    const measures = [
      ["reference", (s) => goLoad(s.reference.address)],
      ["plain", (s) => goLoad(s.plain.address)],
      ["go", (s) => goLoad(s.go.address)],
      ["harnessLoadOnGo", (s) => harnessLoad(s.go.address)],
      ...transportLoads,
      ...(pg
        ? [
            ["workers1", (s) => goLoad(s.workers1.address)],
            ["workers2", (s) => goLoad(s.workers2.address)],
          ]
        : []),
    ];
    const runs = Object.fromEntries(measures.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const servers = await startServers(pg);
      try {
        for (let k = 0; k < measures.length; k++) {
          const [name, measure] = measures[(k + round) % measures.length];
          runs[name].push(await measure(servers));
        }
      } finally {
        await Promise.all(Object.values(servers).map((s) => s.close()));
      }
      console.error(`bench: round ${round + 1} of ${ROUNDS} done, load average ${loadAverage()[0]}`);
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
  results.loadMemory = GRPC_ONLY ? [] : await loadMemory();
} finally {
  await pg?.destroy();
}
const g = results.grpc;
const q = results.ratios;
const grpcRow = (label, r) =>
  `| ${label} | ${showInterval(r.interval, " req/s")}; p99 ${showInterval(r.p99Interval, " ms")}; the median ` +
  `round: ${r.requestsPerSecond} req/s, p50 ${r.p50} ms, p99 ${r.p99} ` +
  `ms${r.errors ? `; ${r.errors} errors in all` : ""}${ROUNDS > 1 ? ` (rounds: ${r.rounds.join(", ")} req/s)` : ""} ` +
  `|`;
const ratioRow = (label, r, samples = "rounds") =>
  `| ${label} | ${showInterval(r, "", samples)} (${samples}: ${r.rounds.join(", ")}) |`;
const m = results.machine;
const targets = results.targets;
const proxy = results.checkThroughProxy ?? { wallMs: NaN, exitCode: null, failed: [] };
const check = results.check;
if (!GRPC_ONLY) {
  targets.push(
    oneRun(
      "proxyCheck",
      "default `check` through the 50 ms round-trip proxy at most 5 s",
      `${(proxy.wallMs / 1000).toFixed(1)} s`,
      proxy.wallMs <= 5000 && proxy.exitCode === 0,
    ),
  );
  targets.push(
    judged(
      "checkToOneAtATime",
      "default `check` locally no slower than one check at a time (`--concurrency 1`): the ratio of each run to " +
        "the one beside it at most 1",
      { atMost: 1 },
      check.toOneAtATime,
      "",
      "pairs of runs",
    ),
  );
  // Issue 29's target. A floor stands under it: the clock probe of the history checks takes its samples 1.1 s apart
  // (a clock in whole seconds must be seen to tick), and process start comes before it.
  targets.push(
    judged(
      "checkUnderOneSecond",
      "default `check` of the built-in reference locally under 1 s (the history checks' clock probe alone spans 1.1 s)",
      { below: 1000 },
      check.interval,
      " ms",
      "runs",
    ),
  );
}
if (q.referenceToPlain) {
  targets.push(
    judged(
      "referenceToPlain",
      "reference at least 0.95x plain grpc-js requests/s",
      { atLeast: 0.95 },
      q.referenceToPlain,
    ),
  );
  targets.push(
    judged(
      "referenceToPlainP99",
      "reference p99 no worse than plain grpc-js's (the ratio at most 1)",
      { atMost: 1 },
      q.referenceToPlainP99,
    ),
  );
  targets.push(
    judged(
      "harnessLoadToGoLoad",
      "`load` at least 0.6x the Go generator's requests/s against grpc-go",
      { atLeast: 0.6 },
      q.harnessLoadToGoLoad,
    ),
  );
  targets.push(
    judged(
      "loadConnectToGrpc",
      "`load --connect` at least 0.6x `load --grpc` against the reference, same load",
      { atLeast: 0.6 },
      q.loadConnectToGrpc,
    ),
  );
  targets.push(
    judged(
      "loadGrpcWebToGrpc",
      "`load --grpc-web` at least 0.6x `load --grpc` against the reference, same load",
      { atLeast: 0.6 },
      q.loadGrpcWebToGrpc,
    ),
  );
}
if (!GRPC_ONLY) {
  const mem = results.loadMemory;
  const growth = mem
    .map(
      (r) =>
        `${r.flag}${r.httpVersion ? ` HTTP/${r.httpVersion}` : ""} ` +
        `${r.rssGrowthMiB > 0 ? "+" : ""}${r.rssGrowthMiB} MiB`,
    )
    .join(", ");
  const flat = mem.every((r) => r.rssGrowthMiB <= MEMORY_GROWTH_MIB);
  const memoryTarget = oneRun(
    "loadMemory",
    `\`load\`'s memory flat over a ${MEMORY_SECONDS} s run on each transport ` +
      `(the resident set of its second half at most +${MEMORY_GROWTH_MIB} MiB over its first half's highest)`,
    growth,
    flat,
  );
  // Past the bound while the live heap (in use just after each mark-compact, last against first) did not grow: V8's
  // climb to a mark-compact fell in the second half (a run of few calls), not a structure of load's (docs/load.md).
  const liveGrowth = (r) => {
    const live = r.heapAfterMarkCompactMiB;
    return live.length >= 2 ? live[live.length - 1] - live[0] : Number.POSITIVE_INFINITY;
  };
  const over = mem.filter((r) => r.rssGrowthMiB > MEMORY_GROWTH_MIB);
  if (over.length > 0 && over.every((r) => liveGrowth(r) <= LIVE_HEAP_GROWTH_MIB)) memoryTarget.status = "not resolved";
  targets.push(memoryTarget);
}
if (q.workers2ToWorkers1) {
  const w = judged(
    "workers2ToWorkers1",
    "`serve --workers 2` near 2x one worker (at least 1.7x), with the generator on other cores",
    { atLeast: 1.7 },
    q.workers2ToWorkers1,
  );
  // On a small machine the generator takes the cores the second worker would use: the interval cannot speak to the
  // target.
  targets.push(
    m.cores >= 4
      ? w
      : {
          ...w,
          measured: `${w.measured}, where the generator shares the ${m.cores} cores with the server`,
          status: "not resolved",
        },
  );
}
const lines = [
  `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}${m.go ? `, ${m.go}` : ""}, ${m.platform}.`,
  `Load: the Go generator (grpc-go client) with ${IN_FLIGHT} calls in flight over ${CONNECTIONS} connections, ` +
    `${DURATION} after a 1 s warm-up, on the same machine as the server; ${ROUNDS} interleaved ` +
    `round${ROUNDS > 1 ? "s" : ""}, the servers started afresh for each; each figure the mean of the rounds with ` +
    `its 95 % confidence interval, each ratio the geometric mean of the rounds' own ratios with its interval (on ` +
    `the log scale).`,
  ...(m.cores <= 2
    ? [
        `On ${m.cores} cores the generator shares the cores with the server it measures: absolute figures are ` +
          `the pair's, ratios compare servers under the same generator.`,
      ]
    : []),
  "",
  "| measure | result |",
  "|---|---|",
  ...(g.reference
    ? [
        grpcRow("reference server (`serve`)", g.reference),
        grpcRow("plain grpc-js server (proto-loader, no guard)", g.plain),
        grpcRow("grpc-go server (fixtures/implementations/go)", g.go),
        ratioRow("reference / plain grpc-js, requests/s", q.referenceToPlain),
        ratioRow("reference / plain grpc-js, p99", q.referenceToPlainP99),
        ratioRow("reference / grpc-go, requests/s", q.referenceToGo),
        ratioRow("plain grpc-js / grpc-go, requests/s", q.plainToGo),
        grpcRow(
          `\`example-conformance load --threads ${g.harnessLoadOnGo.all[0].threads}\` against grpc-go, same load`,
          g.harnessLoadOnGo,
        ),
        ratioRow("`load` / Go generator against grpc-go, requests/s", q.harnessLoadToGoLoad),
        grpcRow("`load --grpc` against the reference, one thread", g.loadGrpcOnReference),
        grpcRow("`load --connect` against the reference, one thread", g.loadConnectOnReference),
        grpcRow("`load --grpc-web` against the reference, one thread", g.loadGrpcWebOnReference),
        grpcRow(
          `\`load --http\` against the reference (memory store), one thread, mix ${Object.entries(
            g.loadHttpOnReference.all[0].mix ?? {},
          )
            .map(([k, n]) => `${k}=${n}`)
            .join(",")}`,
          g.loadHttpOnReference,
        ),
        ratioRow("`load --connect` / `load --grpc`, requests/s", q.loadConnectToGrpc),
        ratioRow("`load --grpc-web` / `load --grpc`, requests/s", q.loadGrpcWebToGrpc),
        ...(g.workers1
          ? [
              grpcRow("`serve --workers 1` (PostgreSQL store)", g.workers1),
              grpcRow("`serve --workers 2` (PostgreSQL store)", g.workers2),
              ratioRow(
                `\`--workers 2\` / \`--workers 1\`, ` +
                  `requests/s${m.cores <= 2 ? ` (the generator shares the ${m.cores} cores)` : ""}`,
                q.workers2ToWorkers1,
              ),
            ]
          : []),
      ]
    : []),
  ...(GRPC_ONLY
    ? []
    : [
        `| \`check\` (default run, built-in reference server), wall time, ${CHECK_RUNS} runs | ` +
          `${showInterval(check.interval, " ms", "runs")} (runs: ` +
          `${check.runsMs.map((x) => (x / 1000).toFixed(2)).join(", ")} s) |`,
        `| the same with \`--concurrency 1\`, run alternately with it | ` +
          `${showInterval(check.oneAtATime.interval, " ms", "runs")} (runs: ` +
          `${check.oneAtATime.runsMs.map((x) => (x / 1000).toFixed(2)).join(", ")} s) |`,
        ratioRow(
          "`check` / `check --concurrency 1`, each run over the one beside it",
          check.toOneAtATime,
          "pairs of runs",
        ),
        `| \`check --grpc --http\` of the reference through a 50 ms round-trip proxy, wall time, one run | ` +
          `${(proxy.wallMs / 1000).toFixed(1)} s (exit ` +
          `${proxy.exitCode}${proxy.failed.length ? `: ${proxy.failed.join(", ")}` : ""}) |`,
      ]),
  ...results.notes.map((n) => `| ${n.split(":")[0]} | ${n.slice(n.indexOf(":") + 2)} |`),
  ...(results.loadMemory ?? []).map((r) => {
    const over = r.httpVersion ? ` (HTTP/${r.httpVersion}, ${r.connections} connections)` : "";
    const halves = (m) => `${m.firstHalfMax} → ${m.secondHalfMax} MiB, highest of each half (end ${m.end})`;
    const rss = `resident set ${halves(r.rssMiB)}`;
    const live = r.heapAfterMarkCompactMiB;
    const afterGc = live.length
      ? `; heap after each of ${live.length} mark-compacts ${live[0]} → ${live[live.length - 1]} MiB ` +
        `(max ${Math.max(...live)})`
      : "; no mark-compact in the run";
    const heap = `heap in use ${halves(r.heapUsedMiB)}${afterGc}`;
    const calls = `${r.requests} calls${r.errors ? `, ${r.errors} errors` : ""}`;
    const label = `\`load ${r.flag}\` against ${r.target}: memory over ${MEMORY_SECONDS} s, ${IN_FLIGHT} in flight${over}`;
    return `| ${label} | ${rss}; ${heap}; ${calls} |`;
  }),
  ...results.stores.map((r) =>
    r.note
      ? `| HTTP on the ${r.store} store | ${r.note} |`
      : `| HTTP on the ${r.store} store, wrk 32 connections, one run | create (POST) ${r.create.requestsPerSecond} ` +
        `req/s, p50 ${r.create.p50} ms, p99 ${r.create.p99} ` +
        `ms${r.create.non2xx ? `, ${r.create.non2xx} not 2xx` : ""}; read (GET) ${r.read.requestsPerSecond} req/s, ` +
        `p50 ${r.read.p50} ms, p99 ${r.read.p99} ms${r.read.non2xx ? `, ${r.read.non2xx} not 2xx` : ""} |`,
  ),
];
// Round trips through the 50 ms proxy, by time and by request bursts, and per check (bench/round-trips.js).
if (!GRPC_ONLY) {
  const { measureRoundTrips, roundTripRows } = await import("./round-trips.js");
  results.roundTrips = await measureRoundTrips();
  const t = roundTripRows(results.roundTrips);
  lines.splice(lines.indexOf("|---|---|") + 1, 0, ...t.rows);
  targets.push(t.target);
}
results.loadAverageAtEnd = loadAverage();
results.table = lines.join("\n");
// A partial run does not replace the whole run's figures.
writeFileSync(
  GRPC_ONLY ? join(tmp, "results.json") : join(ROOT, "bench", "results.json"),
  `${JSON.stringify(results, null, 2)}\n`,
);
if (!GRPC_ONLY) writeFileSync(join(ROOT, "docs", "performance.md"), performancePage(results));
console.log([results.table, "", ...targetsTable(results)].join("\n"));
