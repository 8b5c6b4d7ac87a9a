// Each check's traffic in the report (exchanges, request bytes, round trips) counts what it sent, the same whatever
// the latency: a check known to make N calls one after another shows N round trips, directly and through a proxy.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runConformance } from "../../harness/api/run-conformance.js";
import type { RunReport } from "../../harness/report.js";
import { createTrafficCounter } from "../../harness/traffic.js";
import { startReferenceServer, type ReferenceServer } from "../../reference-server/start.js";
import { startLatencyProxy, type LatencyProxy } from "../helpers/latency-proxy.js";

/** Checks whose calls follow one another (or go side by side in one wave), and the probe with its large bodies. */
const ONLY = [
  "grpc.timeout.malformed",
  "grpc.stateless.connection-independent",
  "grpc.limits.large-message",
  "grpc.limits.over-limit",
  "http.get.no-payload",
  "http.delete.then-404",
];

let reference: ReferenceServer;
let grpcProxy: LatencyProxy;
let httpProxy: LatencyProxy;
beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" });
  [grpcProxy, httpProxy] = await Promise.all([
    startLatencyProxy(Number(reference.grpcAddress.split(":").at(-1)), 5),
    startLatencyProxy(Number(new URL(reference.httpUrl).port), 5),
  ]);
});
afterAll(async () => {
  await Promise.all([grpcProxy?.close(), httpProxy?.close()]);
  await reference?.close();
});

// A loaded machine may take seconds to push the probe's 2 MiB through the proxy and the reference's 64 KiB window:
// a call's bound well past that, so that no size runs out of time (which would read as a limit).
const run = (grpc: string, http: string) =>
  runConformance({
    grpc: { address: grpc, timeoutMs: 30_000 },
    http: { baseUrl: http },
    only: ONLY,
    seed: 7,
    runs: 10,
  });
const trafficOf = (r: RunReport) => Object.fromEntries(r.checks.map((c) => [c.id, c.traffic]));

describe("each check's traffic", () => {
  it("counts N sequential calls as N round trips, a probe's calls for its check, and is the same through a 10 ms " +
    "proxy", async () => {
    const direct = await run(reference.grpcAddress, reference.httpUrl);
    const slow = await run(grpcProxy.address, `http://${httpProxy.address}`);
    expect(direct.checks.map((c) => [c.id, c.status]).filter(([, s]) => s !== "pass")).toEqual([]);
    const t = trafficOf(direct);
    // Seven malformed grpc-timeout values, one call each, one after another.
    expect(t["grpc.timeout.malformed"]).toEqual({ exchanges: 7, bytesSent: expect.any(Number), roundTrips: 7 });
    // HTTP requests that do not depend on one another go side by side (Probe.all): the two messages of
    // get.no-payload are created in one wave and read in one, and each check's cleanup deletes side by side.
    expect(t["http.get.no-payload"]).toEqual({ exchanges: 8, bytesSent: expect.any(Number), roundTrips: 5 });
    // delete.then-404 reads the message and the listing after its DELETE in one wave: 4 round trips of its own, after
    // the 6 of the discovery it starts as the run's first HTTP check (which count for it).
    expect(t["http.delete.then-404"]).toEqual({ exchanges: 11, bytesSent: expect.any(Number), roundTrips: 10 });
    // The receive-limit probe (nine sizes side by side, 1 KiB to 4 MiB) counts for the check that starts it.
    const probe = [t["grpc.limits.large-message"], t["grpc.limits.over-limit"]];
    expect(probe.map((p) => p?.exchanges).sort()).toEqual([2, 9]);
    expect(probe.reduce((n, p) => n + (p?.bytesSent ?? 0), 0)).toBeGreaterThan(2 * 4 * 1024 * 1024);
    // The same calls and waves at any latency; the same bytes for gRPC (an HTTP check's bodies carry a marker unique
    // to its run, whose digits may grow by one).
    const shape = (r: RunReport) =>
      r.checks.map((c) => [
        c.id,
        c.traffic?.exchanges,
        c.traffic?.roundTrips,
        c.id.startsWith("grpc.") ? c.traffic?.bytesSent : "http",
      ]);
    expect(shape(slow)).toEqual(shape(direct));
  }, 120_000);
});

describe("a check whose calls go beside those of the probe it started", () => {
  it("runs without a listener-leak warning on its signal (each call listens on it until it ends)", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const report = await runConformance({
        grpc: { address: reference.grpcAddress },
        only: ["grpc.strings.unicode", "grpc.limits.large-message"],
        seed: 7,
        runs: 30,
      });
      expect(report.checks.map((c) => c.status)).toEqual(["pass", "pass"]);
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w === "MaxListenersExceededWarning")).toEqual([]);
  }, 60_000);
});

describe("a traffic counter", () => {
  it("counts one round trip for calls in flight together and one more for each wave after", async () => {
    const c = createTrafficCounter();
    const later = () => new Promise<void>((resolve) => setImmediate(resolve));
    await Promise.all([c.around(10, later), c.around(20, later), c.around(30, later)]);
    await c.around(1, later);
    await c.around(1, later).catch(() => undefined);
    await c.around(1, () => Promise.reject(new Error("refused"))).catch(() => undefined);
    expect(c.traffic).toEqual({ exchanges: 6, bytesSent: 63, roundTrips: 4 });
  });
});
