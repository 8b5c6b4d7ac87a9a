// Round trips of the default `check --grpc --http` of the reference through a proxy that adds 25 ms each way (a 50 ms
// round trip): counted two ways, as the run's wall time over the round trip, and as request bursts at the proxy (a
// burst: client bytes after a quiet spell of at least half a round trip on that connection, so a request and the
// frames it sends at once count one); and per check, its time in the JSON report over the round trip beside the
// traffic the report counts for it (`traffic`: exchanges, request bytes, round trips as waves of calls), summed. Part
// of `npm run bench` (bench/run.js); alone: `npm run build && node bench/round-trips.js`, which prints its rows. With
// `--record` it also puts them in bench/results.json (its `roundTrips` and their rows of the table, with a caveat
// saying that they were measured apart from the rest) and writes docs/performance.md from it, as `npm run bench` does:
// for a machine too shared to run the whole bench.
import { spawn } from "node:child_process";
import { startServe } from "./start-serve.js";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import { join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
const CLI = join(ROOT, "bin", "example-conformance.js");
const DELAY_MS = 25;
const RTT_MS = 2 * DELAY_MS;
/** The issue's targets: at most 100 round trips (5 s) through the proxy. */
export const ROUND_TRIP_TARGET = 100;

/** A loopback TCP proxy that holds every chunk DELAY_MS each way and counts the client's request bursts and bytes. */
function countingProxy(targetPort) {
  const sockets = new Set();
  const counts = { bursts: 0, connections: 0, bytesUp: 0 };
  const server = net.createServer((client) => {
    counts.connections++;
    const upstream = net.connect(targetPort, "127.0.0.1");
    // A link delays what it carries, it does not hold it back: without this, Nagle's algorithm on the proxy's own
    // sockets keeps a reply's second chunk (a gRPC reply's trailers, written apart from its message) until the first
    // is acknowledged, up to a delayed ACK later, which no link between the client and the server would add.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    let lastAt = -Infinity;
    client.on("data", (chunk) => {
      counts.bytesUp += chunk.length;
      const now = performance.now();
      if (now - lastAt >= RTT_MS / 2) counts.bursts++;
      lastAt = now;
    });
    relay(client, upstream);
    relay(upstream, client);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: server.address().port,
        counts,
        close: () => new Promise((done) => (sockets.forEach((s) => s.destroy()), server.close(() => done()))),
      }),
    ),
  );
}

function relay(from, to) {
  let last = 0;
  const later = (work) => {
    const at = Math.max(performance.now() + DELAY_MS, last);
    last = at;
    setTimeout(work, at - performance.now());
  };
  from.on("data", (chunk) => later(() => !to.destroyed && to.write(chunk)));
  from.on("end", () => later(() => to.end()));
  from.on("close", () => later(() => to.destroy()));
}

/** The reference in a process of its own (bench/start-serve.js), with the ports the proxies stand in front of. */
async function startReference() {
  const server = await startServe(CLI, ["--store", "memory:"]);
  return {
    grpcPort: Number(server.address.split(":").at(-1)),
    httpPort: Number(new URL(server.httpUrl).port),
    close: server.close,
  };
}

/** One default check of the reference through the proxies: wall time, bursts, and each check's round trips. */
export async function measureRoundTrips() {
  const server = await startReference();
  const grpc = await countingProxy(server.grpcPort);
  const http = await countingProxy(server.httpPort);
  const report = join(mkdtempSync(join(os.tmpdir(), "rtt-")), "check.json");
  try {
    const t0 = performance.now();
    // Not spawnSync: the proxies run in this process.
    const exitCode = await new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          CLI,
          "check",
          "--grpc",
          `127.0.0.1:${grpc.port}`,
          "--http",
          `http://127.0.0.1:${http.port}`,
          "--seed",
          "1",
          "--report-json",
          report,
        ],
        { stdio: "ignore", timeout: 10 * 60_000 },
      );
      child.once("error", reject);
      child.once("exit", (status) => resolve(status));
    });
    const wallMs = Math.round(performance.now() - t0);
    const json = JSON.parse(readFileSync(report, "utf8"));
    const checks = json.checks;
    const perCheck = checks
      .filter((c) => c.id.startsWith("grpc.") || c.id.startsWith("http."))
      .map((c) => ({
        id: c.id,
        ms: Math.round(c.durationMs),
        roundTrips: Math.round(c.durationMs / RTT_MS),
        counted: c.traffic ?? null,
        status: c.status,
      }))
      .sort((a, b) => b.ms - a.ms);
    const sum = (key) => checks.reduce((n, c) => n + (c.traffic?.[key] ?? 0), 0);
    return {
      rttMs: RTT_MS,
      wallMs,
      // The run as the report times it: the wall time less starting the process and ending it.
      runMs: json.durationMs,
      exitCode,
      roundTripsByTime: Math.round(wallMs / RTT_MS),
      // Summed over the checks: each check's round trips are its sequential waves, as if the checks ran one by one.
      counted: { roundTrips: sum("roundTrips"), exchanges: sum("exchanges"), bytesSent: sum("bytesSent") },
      bursts: { grpc: grpc.counts.bursts, http: http.counts.bursts, total: grpc.counts.bursts + http.counts.bursts },
      connections: { grpc: grpc.counts.connections, http: http.counts.connections },
      // Bytes the client sent through the proxies (what a probe that uploads more than its question needs shows in).
      bytesUp: grpc.counts.bytesUp + http.counts.bytesUp,
      failed: checks.filter((c) => c.status === "fail" && c.gating).map((c) => c.id),
      perCheck,
    };
  } finally {
    await grpc.close();
    await http.close();
    await server.close();
  }
}

/**
 * Table rows: the run's round trips and the ten checks that cost the most; and the target, judged by one run (the
 * report's count holds under load; there is no interval to read).
 */
export function roundTripRows(r) {
  const met = r.roundTripsByTime <= ROUND_TRIP_TARGET && r.exitCode === 0 ? "met" : "not met";
  return {
    rows: [
      `| default \`check --grpc --http\` through the 50 ms round-trip proxy | ${(r.wallMs / 1000).toFixed(1)} s ` +
        `= ${r.roundTripsByTime} round trips by time (the run itself ${(r.runMs / 1000).toFixed(1)} s); ` +
        `${r.bursts.total} request bursts at the proxy (gRPC ${r.bursts.grpc}, HTTP ${r.bursts.http}) over ` +
        `${r.connections.grpc + r.connections.http} connections, ${(r.bytesUp / 1024 / 1024).toFixed(1)} MiB sent ` +
        `through them; exit ${r.exitCode}${r.failed.length ? `: ${r.failed.join(", ")}` : ""} |`,
      `| round trips the report counts, summed over the checks (each check's waves of calls, as if run one by ` +
        `one) | ${r.counted.roundTrips} round trips, ${r.counted.exchanges} exchanges, ` +
        `${(r.counted.bytesSent / 1024 / 1024).toFixed(1)} MiB sent |`,
      `| the checks that cost the most round trips (time / 50 ms, side by side; counted in brackets) | ${r.perCheck
        .slice(0, 10)
        .map((c) => `${c.id} ${c.roundTrips} (${c.counted?.roundTrips ?? "-"})`)
        .join(", ")} |`,
    ],
    target: {
      id: "roundTrips",
      target: `default \`check\` through the 50 ms round-trip proxy at most ${ROUND_TRIP_TARGET} round trips (5 s)`,
      measured:
        `${r.roundTripsByTime} round trips (${(r.wallMs / 1000).toFixed(1)} s), ${r.counted.roundTrips} counted in ` +
        `the report, ${r.bursts.total} bursts (one run: no interval)`,
      interval: null,
      status: met,
    },
  };
}

/**
 * Puts a measurement in bench/results.json in place of the one there (its four rows of the table too, found as the
 * renderer made them) and writes docs/performance.md from the file, through the page's one renderer.
 */
async function record(r) {
  const { performancePage } = await import("../dist/test/helpers/performance-page.js");
  const file = join(ROOT, "bench", "results.json");
  const results = JSON.parse(readFileSync(file, "utf8"));
  const before = roundTripRows(results.roundTrips);
  const after = roundTripRows(r);
  let table = results.table;
  for (const [i, row] of before.rows.entries()) {
    if (!table.includes(row))
      throw new Error(
        `bench/results.json's table has no row ${JSON.stringify(row.slice(0, 60))}: run the whole bench (npm run ` +
          `bench)`,
      );
    table = table.replace(row, after.rows[i]);
  }
  const targets = (results.targets ?? []).map((t) => (t.id === "roundTrips" ? after.target : t));
  const load = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(", ");
  const caveat =
    `The round-trip rows (the report's count, the bursts at the proxy and the time through the ${RTT_MS} ms proxy) ` +
    `were measured apart from the rest, on ${r.date.slice(0, 10)} at ${r.date.slice(11, 16)} UTC with \`node ` +
    `bench/round-trips.js --record\`, the load average then ${load} on ${os.cpus().length} cores: the count is the ` +
    `report's and holds under load; the time, and the round trips reckoned from it, do not. The proxy's own sockets ` +
    `send without Nagle's algorithm since 2026-11-27 (before, it held each gRPC reply's trailers until its first ` +
    `chunk was acknowledged: about one round trip more per gRPC call than a link adds). The next \`npm run ` +
    `bench\` replaces them.`;
  const caveats = [...(results.caveats ?? []).filter((c) => !c.startsWith("The round-trip rows")), caveat];
  const next = { ...results, roundTrips: r, caveats, table, targets };
  writeFileSync(file, `${JSON.stringify(next, null, 2)}\n`);
  writeFileSync(join(ROOT, "docs", "performance.md"), performancePage(next));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = { ...(await measureRoundTrips()), date: new Date().toISOString() };
  const { rows, target } = roundTripRows(r);
  console.log(
    [...rows, `${target.target}: ${target.measured}, ${target.status}`, "", JSON.stringify(r.perCheck)].join("\n"),
  );
  if (process.argv.includes("--record")) await record(r);
}
