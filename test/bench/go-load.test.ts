// The benchmark's load generator builds from Debian's grpc-go like the grpc-go implementation, drives real servers,
// and reports what it measured: calls counted, percentiles in order, errors by status. No wall-clock figure is
// asserted: a benchmark is not a test.
import { describe, expect, it } from "vitest";
import { implementations, type RunningImplementation } from "../../fixtures/implementations/index.js";
import { startGrpcJsServer } from "../helpers/grpc-js-server.js";
import { within } from "../helpers/within.js";
import { missingGoLoad, runGoLoad, startPlainGrpcJs } from "./go-load.js";

const BUILD_MS = 240_000; // a cold Go build compiles grpc-go from source

async function needGo(t: { skip(note: string): void }): Promise<void> {
  const missing = await missingGoLoad();
  if (missing === undefined) return;
  if (process.env.CI === "true") throw new Error(`the Go load generator: ${missing}`);
  t.skip(`the Go load generator: ${missing}; install it to run this test`);
}

function expectSane(report: Awaited<ReturnType<typeof runGoLoad>>, target: string): void {
  expect(report.target).toBe(target);
  expect(report.requests).toBeGreaterThan(0);
  expect(report.requestsPerSecond).toBeGreaterThan(0);
  const l = report.latencyMs;
  expect(l.p50).toBeGreaterThan(0);
  expect(l.p50).toBeLessThanOrEqual(l.p90);
  expect(l.p90).toBeLessThanOrEqual(l.p99);
  expect(l.p99).toBeLessThanOrEqual(l.max);
}

describe("the Go load generator (bench/go-load)", () => {
  it("drives the grpc-go implementation and the plain grpc-js server with no errors", {
    timeout: BUILD_MS + 60_000,
  }, async (t) => {
    await needGo(t);
    const go = implementations.find((i) => i.name === "go");
    if (!go) throw new Error("no grpc-go implementation");
    const servers: { address: string; close(): Promise<void> }[] = [];
    try {
      servers.push(await within("starting grpc-go", BUILD_MS, go.start() as Promise<RunningImplementation>));
      servers.push(await within("starting plain grpc-js", 30_000, startPlainGrpcJs()));
      for (const server of servers) {
        const report = await within(
          "a load run",
          BUILD_MS,
          runGoLoad(server.address, { concurrency: 8, connections: 2, duration: "300ms", warmup: "100ms" }),
        );
        expectSane(report, server.address);
        expect(report.concurrency).toBe(8);
        expect(report.connections).toBe(2);
        expect(report.errors).toEqual({});
      }
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });

  it("counts calls a server refuses under their status, and still times them", {
    timeout: BUILD_MS + 60_000,
  }, async (t) => {
    await needGo(t);
    // RESOURCE_EXHAUSTED for every call: a server that answers, with an error.
    const server = await startGrpcJsServer(() => ({ code: 8, details: "busy" }));
    try {
      const report = await within(
        "a load run",
        BUILD_MS,
        runGoLoad(server.address, { concurrency: 4, connections: 1, duration: "200ms", warmup: "0s" }),
      );
      expectSane(report, server.address);
      expect(report.errors).toEqual({ ResourceExhausted: report.requests });
    } finally {
      await server.close();
    }
  });

  it("refuses bad arguments with one line and exit 2", { timeout: BUILD_MS + 30_000 }, async (t) => {
    await needGo(t);
    await expect(runGoLoad("127.0.0.1:1", { concurrency: 2, connections: 3, duration: "1s" })).rejects.toMatchObject({
      code: 2,
      stderr: "go-load: -concurrency must be at least 1 and -connections from 1 to -concurrency\n",
    });
  });
});
