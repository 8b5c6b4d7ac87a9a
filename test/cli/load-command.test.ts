// `example-conformance load`: numbers from a short run, statelessness under concurrency, one-line errors.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../contract/message.js";
import type { LoadReport } from "../../harness/load/run-load.js";
import { startGrpcServer, type GrpcServerHandle } from "../../reference-server/grpc.js";
import { cli } from "../helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "../helpers/grpc-js-server.js";

let reference: GrpcServerHandle;
let counting: TestServer;
let failing: TestServer;
const out = mkdtempSync(join(tmpdir(), "load-cli-"));

beforeAll(async () => {
  reference = await startGrpcServer({ port: 0, log: "silent" });
  let n = 0;
  // Correct at rest, wrong under load: every 50th reply carries a count.
  counting = await startGrpcJsServer(() => Buffer.from(encodeMessage(++n % 50 === 0 ? `call ${n}` : "same")));
  // Reachable, and answers every call with an error of its own choosing.
  failing = await startGrpcJsServer(() => ({ code: 13, details: "broken on purpose" }));
});
afterAll(async () => {
  await reference.close();
  await counting.close();
  await failing.close();
});

describe("example-conformance load", () => {
  it("reports throughput, latency percentiles and no errors for the reference server, and writes JSON", async () => {
    const json = join(out, "load.json");
    const run = await cli(["load", "--grpc", reference.address, "--duration", "1s", "--concurrency", "8", "--connections", "2", "--json", json, "--quiet"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^requests\/s {3}\d+$/m);
    expect(run.stdout).toMatch(/^latency ms {3}p50 [\d.]+ {2}p90 [\d.]+ {2}p99 [\d.]+ {2}max [\d.]+$/m);
    expect(run.stdout).toMatch(/^errors {7}none$/m);
    const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
    expect(report.requests).toBeGreaterThan(0);
    expect(report.stateless).toMatchObject({ mismatches: 0, compared: report.requests, distinctRequests: 16 });
    expect(report.latencyMs.p50).toBeLessThanOrEqual(report.latencyMs.p99);
    expect(report.latencyMs.p99).toBeLessThanOrEqual(report.latencyMs.max);
  });

  it("prints a progress line a second on stderr when it is no terminal, and none with --quiet", async () => {
    const run = await cli(["load", "--grpc", reference.address, "--duration", "1500ms", "--concurrency", "4"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^(load: \d+ s, \d+ calls, \d+\/s, 0 errors\n)+$/);
    expect(run.stdout).toMatch(/^requests\/s {3}\d+$/m);
  });

  it("drives from several threads and adds up their calls and percentiles (the compiled worker, as npm test builds it)", async () => {
    const json = join(out, "threads.json");
    const run = await cli(["load", "--grpc", reference.address, "--duration", "1s", "--concurrency", "8", "--threads", "2", "--quiet", "--json", json]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/over 4 connections, 2 threads\)/);
    const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
    expect(report.threads).toBe(2);
    expect(report.stateless).toMatchObject({ mismatches: 0, compared: report.requests });
    expect(report.latencyMs.p50).toBeGreaterThan(0);
    expect(report.latencyMs.p99).toBeLessThanOrEqual(report.latencyMs.max);
  });

  it("exits 1 when replies under load differ from the replies at rest, showing one", async () => {
    const run = await cli(["load", "--grpc", counting.address, "--duration", "1s", "--concurrency", "8"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/stateless {4}\d+ of \d+ replies differ from the reply at rest; first: request .*under load [0-9a-f]+/);
  });

  it("exits 1, not 3, for a target that answers every call with an error, with the errors by status", async () => {
    const run = await cli(["load", "--grpc", failing.address, "--duration", "1s", "--concurrency", "4"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^errors {7}INTERNAL \d+$/m);
    expect(run.stdout).toMatch(/^stateless {4}not judged/m);
  });

  it("keeps to --rate", async () => {
    const json = join(out, "rate.json");
    const run = await cli(["load", "--grpc", reference.address, "--duration", "1s", "--rate", "50", "--json", json]);
    expect(run.code).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
    // 50 per second for one second: the 51st call is due only at the end.
    expect(report.requests).toBeLessThanOrEqual(51);
    expect(report.requests).toBeGreaterThan(0);
  });

  it("exits 3 for a target that is not there", async () => {
    const run = await cli(["load", "--grpc", "127.0.0.1:1", "--duration", "1s"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^example-conformance: cannot reach 127\.0\.0\.1:1: ECONNREFUSED.*\n$/);
  });

  it.each([
    [["--grpc", "example.com:443"], /not this machine; a load run elsewhere needs --allow-remote/],
    [["--grpc", "127.0.0.1:2", "--duration", "11m"], /--duration must be between 1ms and 10m/],
    [["--grpc", "127.0.0.1:2", "--concurrency", "0"], /--concurrency must be between 1 and 10000/],
    [["--grpc", "127.0.0.1:2", "--threads", "5"], /--threads 5: expected a whole number from 1 to the lesser of --concurrency and --connections/],
    [[], /required option '--grpc <address>' not specified/],
  ] as [string[], RegExp][])("exits 2 with one line for %j", async (args, message) => {
    const run = await cli(["load", ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });
});
