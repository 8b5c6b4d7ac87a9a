// The Connect and gRPC-Web ratios alone (issue 43): `load --connect` and `load --grpc-web` against the reference's
// HTTP port beside `load --grpc` against its gRPC port, measured as bench/run.js measures them (same load, one
// thread each, a fresh `serve` per round, the order rotated from round to round), without the rest of the bench.
// BENCH_ROUNDS (default 6), BENCH_DURATION (seconds, default 2); BENCH_TRANSPORT_EXTRA adds flags to the Connect and
// gRPC-Web runs (e.g. --http2-prior-knowledge). BENCH_BEFORE_CLI, the bin/example-conformance.js of another build
// (an earlier commit's, built), adds the same three runs against a `serve` of that build in every round, in the same
// rotation, so that before and after are measured side by side; with BENCH_BEFORE_LOAD=1 those runs' `load` is that
// build's too (by default it is this one's, against the other build's server). Prints each figure and ratio with its
// 95 % interval, and the load average at start and end. The load process's CPU per call includes its start-up (GNU time over the
// whole process): BENCH_EXCHANGES (default 0: off) adds, in every round, that many Connect exchanges made in this
// process, 64 in flight on as many connections, through wire/http1.ts's pool on each client (node:http's Agent, the
// checks'; undici's Pool, the replies at rest's) and through `load`'s raw HTTP/1.1 client
// (harness/load/_internals/raw-h1-caller.ts, each reply read by the codec as under load), the CPU per exchange by
// process.cpuUsage, start-up apart; BENCH_MARGINAL=1 runs every `load` once more for 1 s and reports the load
// process's marginal CPU per call, (CPU of the long run - CPU of the 1 s run) / (their calls' difference), its
// start-up cancelling, and the start-up CPU that leaves. Run
// `npx tsc -p .` first (it reads dist/).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { meanInterval, ratioInterval } from "../dist/test/bench/interval.js";
import { http1Exchange, openHttp1Pool } from "../dist/harness/wire/http1.js";
import { HELLO_PATH } from "../dist/harness/protocols/rpc.js";
import { callResultOf, httpRpcRequest } from "../dist/harness/load/_internals/http-rpc-call.js";
import { rawH1Caller } from "../dist/harness/load/_internals/raw-h1-caller.js";
import { startServe } from "./start-serve.js";

const ROOT = new URL("..", import.meta.url).pathname;
const CLI = join(ROOT, "bin", "example-conformance.js");
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 6));
const DURATION = `${Number(process.env.BENCH_DURATION ?? 2)}s`;
const EXTRA = (process.env.BENCH_TRANSPORT_EXTRA ?? "").split(" ").filter(Boolean);
const tmp = mkdtempSync(join(os.tmpdir(), "bench-transports-"));

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (Linux), in clock ticks of 1/100 s. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * One `load` run, with the CPU per call it cost the server (its process's CPU over the run) and the load process
 * itself (GNU time's user + system, its start-up included), in microseconds: on a shared machine these move less
 * than requests/s.
 */
function load(server, address, flag, extra) {
  const r = loadRun(server, address, flag, extra, DURATION);
  if (!MARGINAL) return r;
  const short = loadRun(server, address, flag, extra, "1s");
  const slope = ((r.loadCpu - short.loadCpu) / (r.requests - short.requests)) * 1e6;
  return {
    ...r,
    loadMarginalCpuUsPerCall: slope,
    loadStartupCpuSeconds: short.loadCpu - (short.requests * slope) / 1e6,
  };
}

function loadRun(server, address, flag, extra, duration) {
  const file = join(tmp, `load-${Date.now()}-${flag.slice(2)}.json`);
  const times = `${file}.time`;
  const args = ["--duration", duration, "--concurrency", "64", "--connections", "4", "--threads", "1", "--quiet"];
  const before = cpuSeconds(server.pid);
  const command = [process.execPath, server.loadCli ?? CLI, "load", flag, address, ...args, ...extra, "--json", file];
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S", "-o", times, ...command], {
    stdio: ["ignore", "ignore", "inherit"],
    timeout: 5 * 60_000,
  });
  if (r.status !== 0) throw new Error(`load ${flag} ${address} exited ${r.status}`);
  const serverCpu = cpuSeconds(server.pid) - before;
  const [user, system] = readFileSync(times, "utf8").trim().split(/\s+/).slice(-2).map(Number);
  const report = JSON.parse(readFileSync(file, "utf8"));
  return {
    ...report,
    serverCpuUsPerCall: (serverCpu / report.requests) * 1e6,
    loadCpuUsPerCall: ((user + system) / report.requests) * 1e6,
    loadCpu: user + system,
  };
}

const BEFORE_CLI = process.env.BENCH_BEFORE_CLI;
const BEFORE_LOAD = process.env.BENCH_BEFORE_LOAD === "1";
const EXCHANGES = Math.max(0, Number(process.env.BENCH_EXCHANGES ?? 0));
const MARGINAL = process.env.BENCH_MARGINAL === "1";

/**
 * EXCHANGES Connect calls (an empty HelloRequest) to the server through one client's pool, 64 in flight on 64
 * connections: this process's CPU per exchange, in microseconds. Every reply must be a 200.
 */
async function exchanges(server, client) {
  const origin = new URL(server.httpUrl);
  if (client === "raw") return rawExchanges(origin);
  const pool = openHttp1Pool(origin, { maxSockets: 64, client });
  const headers = { "content-type": "application/proto", "connect-protocol-version": "1", "content-length": "0" };
  const request = { origin, method: "POST", path: HELLO_PATH, headers, body: Buffer.alloc(0), connection: pool };
  let left = EXCHANGES;
  const start = process.cpuUsage();
  try {
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (left-- > 0) {
          const a = await http1Exchange({ ...request, timeoutMs: 10_000 });
          if (a.status !== 200) throw new Error(`${client}: ${a.status ?? JSON.stringify(a.failure)}`);
        }
      }),
    );
  } finally {
    pool.close();
  }
  const used = process.cpuUsage(start);
  return { cpuUsPerExchange: (used.user + used.system) / EXCHANGES };
}

/** The same exchanges through load's raw HTTP/1.1 client (64 slots, a connection each), replies read by the codec. */
async function rawExchanges(origin) {
  const request = httpRpcRequest("connect", origin, new Uint8Array(0));
  const raw = rawH1Caller({ origin }, {}, [request], 64, 10_000, 1024 * 1024);
  let left = EXCHANGES;
  const start = process.cpuUsage();
  try {
    await Promise.all(
      Array.from({ length: 64 }, async (_, w) => {
        while (left-- > 0) {
          const r = await callResultOf("connect", await raw.call(w, 0), 10_000);
          if (r.code !== 0) throw new Error(`raw: ${r.code} ${r.details}`);
        }
      }),
    );
  } finally {
    raw.close();
  }
  const used = process.cpuUsage(start);
  return { cpuUsPerExchange: (used.user + used.system) / EXCHANGES };
}

const startReference = (cli = CLI) => startServe(cli, ["--store", "memory:"]);

const builds = BEFORE_CLI ? ["", "before "] : [""];
const measures = builds.flatMap((b) => [
  [`${b}grpc`, (s) => load(s[b], s[b].address, "--grpc", [])],
  [`${b}connect`, (s) => load(s[b], s[b].httpUrl, "--connect", EXTRA)],
  [`${b}grpcWeb`, (s) => load(s[b], s[b].httpUrl, "--grpc-web", EXTRA)],
]);
if (EXCHANGES > 0)
  measures.push(
    ["exchanges node:http", (s) => exchanges(s[""], "node:http")],
    ["exchanges undici", (s) => exchanges(s[""], "undici")],
    ["exchanges raw", (s) => exchanges(s[""], "raw")],
  );
const runs = Object.fromEntries(measures.map(([name]) => [name, []]));
const loadAverage = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
console.log(
  `load average at start ${loadAverage()}; ${ROUNDS} rounds of ${DURATION}; extra ${EXTRA.join(" ") || "none"}`,
);
for (let round = 0; round < ROUNDS; round++) {
  const servers = { "": await startReference() };
  if (BEFORE_CLI) servers["before "] = await startReference(BEFORE_CLI);
  if (BEFORE_CLI && BEFORE_LOAD) servers["before "].loadCli = BEFORE_CLI;
  try {
    for (let k = 0; k < measures.length; k++) {
      const [name, measure] = measures[(k + round) % measures.length];
      const r = await measure(servers);
      runs[name].push(r);
      if (r.httpVersion) runs[name].httpVersion = r.httpVersion;
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.close()));
  }
  const each = measures
    .map(([n]) => `${n} ${Math.round(runs[n][round].requestsPerSecond ?? runs[n][round].cpuUsPerExchange)}`)
    .join(", ");
  console.log(`round ${round + 1}: ${each}; load average ${loadAverage()}`);
}
const show = (i) => `${i.mean.toFixed(3)} (95 % interval ${i.low?.toFixed(3)} to ${i.high?.toFixed(3)})`;
for (const [name] of measures) {
  if (name.startsWith("exchanges")) {
    const us = runs[name].map((x) => x.cpuUsPerExchange);
    console.log(
      `${name}: CPU per exchange ${show(meanInterval(us))} us (rounds ${us.map((x) => x.toFixed(0)).join(", ")})`,
    );
    continue;
  }
  const rps = runs[name].map((x) => x.requestsPerSecond);
  const errors = runs[name].reduce((s, x) => s + Object.values(x.errors ?? {}).reduce((a, b) => a + b, 0), 0);
  const version = runs[name].httpVersion ? ` (HTTP/${runs[name].httpVersion})` : "";
  console.log(`${name}${version}: ${show(meanInterval(rps))} req/s, ${errors} errors`);
  for (const who of ["server", "load", ...(MARGINAL ? ["loadMarginal"] : [])]) {
    const us = runs[name].map((x) => x[`${who}CpuUsPerCall`]);
    console.log(
      `  ${who} CPU per call: ${show(meanInterval(us))} us (rounds ${us.map((x) => x.toFixed(0)).join(", ")})`,
    );
  }
  if (MARGINAL) {
    const s = runs[name].map((x) => x.loadStartupCpuSeconds);
    console.log(`  load start-up CPU: ${show(meanInterval(s))} s (rounds ${s.map((x) => x.toFixed(2)).join(", ")})`);
  }
}
for (const b of builds) {
  for (const name of ["connect", "grpcWeb"]) {
    const perRound = runs[b + name].map((x, i) => x.requestsPerSecond / runs[`${b}grpc`][i].requestsPerSecond);
    const rounds = perRound.map((x) => x.toFixed(3)).join(", ");
    console.log(`${b}${name} / ${b}grpc: ${show(ratioInterval(perRound))} (rounds ${rounds})`);
  }
}
if (EXCHANGES > 0) {
  const perRound = runs["exchanges undici"].map(
    (x, i) => x.cpuUsPerExchange / runs["exchanges node:http"][i].cpuUsPerExchange,
  );
  console.log(`exchanges, undici / node:http CPU: ${show(ratioInterval(perRound))}`);
  const rawRounds = runs["exchanges raw"].map(
    (x, i) => x.cpuUsPerExchange / runs["exchanges undici"][i].cpuUsPerExchange,
  );
  console.log(`exchanges, raw / undici CPU: ${show(ratioInterval(rawRounds))}`);
}
console.log(`load average at end ${loadAverage()}`);
