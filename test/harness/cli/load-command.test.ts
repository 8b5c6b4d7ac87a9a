// `example-conformance load`: numbers from a short run, statelessness under concurrency, one-line errors.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../contract/message.js";
import type { LoadReport } from "../../../harness/load/run-load.js";
import { startSheddingServer, startSleepingServer, startStallingServer } from "../../../fixtures/load/grpc-servers.js";
import type { TrackedServer } from "../../../fixtures/_internals/listen-tracked.js";
import { startGrpcServer, type GrpcServerHandle } from "../../../reference-server/grpc.js";
import { cli } from "../../helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";

let reference: GrpcServerHandle;
let counting: TestServer;
let failing: TestServer;
let sleeping: TrackedServer;
let shedding: TrackedServer;
const out = mkdtempSync(join(tmpdir(), "load-cli-"));

beforeAll(async () => {
  reference = await startGrpcServer({ port: 0, log: "silent" });
  let n = 0;
  // Correct at rest, wrong under load: every 50th reply carries a count.
  counting = await startGrpcJsServer(() => Buffer.from(encodeMessage(++n % 50 === 0 ? `call ${n}` : "same")));
  // Reachable, and answers every call with an error of its own choosing.
  failing = await startGrpcJsServer(() => ({ code: 13, details: "broken on purpose" }));
  // Correct, and slow: every reply after 1 s.
  sleeping = await startSleepingServer(1000);
  // Two calls in flight at most; past them RESOURCE_EXHAUSTED.
  shedding = await startSheddingServer(2, 20);
});
afterAll(async () => {
  await reference.close();
  await counting.close();
  await failing.close();
  await sleeping.close();
  await shedding.close();
});

describe("example-conformance load", () => {
  it("reports throughput, latency percentiles and no errors for the reference server, and writes JSON", async () => {
    const json = join(out, "load.json");
    const run = await cli([
      "load",
      "--grpc",
      reference.address,
      "--duration",
      "1s",
      "--concurrency",
      "8",
      "--connections",
      "2",
      "--json",
      json,
      "--quiet",
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^requests\/s {3}\d+$/m);
    expect(run.stdout).toMatch(
      /^latency ms {3}p50 [\d.]+ {2}p90 [\d.]+ {2}p99 [\d.]+ {2}p99\.9 [\d.]+ {2}max [\d.]+$/m,
    );
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

  it(
    "drives from several threads and adds up their calls and percentiles (the compiled worker, as npm test builds " +
      "it)",
    async () => {
      const json = join(out, "threads.json");
      const run = await cli([
        "load",
        "--grpc",
        reference.address,
        "--duration",
        "1s",
        "--concurrency",
        "8",
        "--threads",
        "2",
        "--quiet",
        "--json",
        json,
      ]);
      expect(run).toMatchObject({ code: 0, stderr: "" });
      expect(run.stdout).toMatch(/over 4 connections, 2 threads\)/);
      const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
      expect(report.threads).toBe(2);
      expect(report.stateless).toMatchObject({ mismatches: 0, compared: report.requests });
      expect(report.latencyMs.p50).toBeGreaterThan(0);
      expect(report.latencyMs.p99).toBeLessThanOrEqual(report.latencyMs.max);
    },
  );

  it("exits 1 when replies under load differ from the replies at rest, showing one", async () => {
    const run = await cli(["load", "--grpc", counting.address, "--duration", "1s", "--concurrency", "8"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /stateless {4}\d+ of \d+ replies differ from the reply at rest; first: request .*under load [0-9a-f]+/,
    );
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
    [
      ["--grpc", "127.0.0.1:2", "--threads", "5"],
      /--threads 5: expected a whole number from 1 to the lesser of --concurrency and --connections/,
    ],
    [[], /load: name the target: --grpc ADDRESS/],
  ] as [string[], RegExp][])("exits 2 with one line for %j", async (args, message) => {
    const run = await cli(["load", ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });

  describe("--slo", () => {
    it("exits 1 for a server that sleeps past the threshold, with the figure and the threshold side by side", async () => {
      const run = await cli([
        "load",
        "--grpc",
        sleeping.address,
        "--duration",
        "500ms",
        "--concurrency",
        "2",
        "--connections",
        "1",
        "--quiet",
        "--slo",
        "p99<700ms,errors<1%",
      ]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^slo {10}p99<700ms {8}\d+(\.\d+)? ms \(measured latency\) against 700 ms: missed$/m);
      expect(run.stdout).toMatch(/^slo {10}errors<1% {8}0 % \(0 of \d+ calls\) against 1 %: met$/m);
      expect(run.stdout).toMatch(/^errors {7}none$/m);
    });

    it("exits 0 for a prompt server under the same threshold", async () => {
      const run = await cli([
        "load",
        "--grpc",
        reference.address,
        "--duration",
        "500ms",
        "--concurrency",
        "2",
        "--connections",
        "1",
        "--quiet",
        "--slo",
        "p99<700ms,errors<1%",
      ]);
      expect(run.stdout).toMatch(/^slo {10}p99<700ms {8}[\d.]+ ms \(measured latency\) against 700 ms: met$/m);
      expect(run.code).toBe(0);
    });

    it("reads the thresholds from the configuration file's load.slo, and --slo overrides them", async () => {
      const config = join(out, "slo.yaml");
      writeFileSync(config, "load:\n  slo: p99<700ms\n");
      const fromFile = await cli([
        "load",
        "--grpc",
        sleeping.address,
        "--duration",
        "300ms",
        "--concurrency",
        "2",
        "--quiet",
        "--config",
        config,
      ]);
      expect(fromFile.code).toBe(1);
      expect(fromFile.stdout).toMatch(/^slo {10}p99<700ms .*: missed$/m);
      const overridden = await cli([
        "load",
        "--grpc",
        sleeping.address,
        "--duration",
        "300ms",
        "--concurrency",
        "2",
        "--quiet",
        "--config",
        config,
        "--slo",
        "p99<20s",
      ]);
      expect(overridden.stdout).toMatch(/^slo {10}p99<20s .*: met$/m);
      expect(overridden.code).toBe(0);
    });

    it.each([
      [
        ["--slo", "p99<20"],
        /^example-conformance: --slo: p99<20: a latency needs its unit: us, ms or s \(p99<20ms\)\n$/,
      ],
      [
        ["--config", "CONFIG"],
        /^example-conformance: CONFIG: load\.slo: "p99 under 20ms" is not a threshold: expected terms like p99<20ms/,
      ],
    ])("exits 2 with one line for %j", async (args, message) => {
      const config = join(out, "bad-slo.yaml");
      writeFileSync(config, "load:\n  slo: p99 under 20ms\n");
      const run = await cli(["load", "--grpc", "127.0.0.1:2", ...args.map((a) => (a === "CONFIG" ? config : a))]);
      expect(run.code).toBe(2);
      expect(run.stderr.replace(config, "CONFIG")).toMatch(message);
    });
  });

  it("--rate measures each call also from its scheduled send: a server that stalls shows longer corrected latencies", async () => {
    // Replies held for 500 ms from the 60th call (0.3 s into the run at 200/s): the 4 slots fill, and the calls
    // scheduled behind them wait.
    const stalling = await startStallingServer(60, 500);
    try {
      const json = join(out, "stall.json");
      const run = await cli([
        "load",
        "--grpc",
        stalling.address,
        "--duration",
        "1500ms",
        "--rate",
        "200",
        "--concurrency",
        "4",
        "--connections",
        "1",
        "--quiet",
        "--json",
        json,
      ]);
      expect(run.stderr).toBe("");
      expect(run.stdout).toMatch(/^latency ms {3}from send {7}p50 [\d.]+ .*\nlatency ms {3}from schedule {3}p50 /m);
      const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
      expect(report.rate).toBe(200);
      const corrected = report.correctedLatencyMs;
      expect(corrected).toBeDefined();
      // A quarter of the calls were due during the stall: the corrected p90 sees them, the measured one does not.
      expect(corrected?.p90).toBeGreaterThan(report.latencyMs.p90);
      expect(corrected?.p90).toBeGreaterThanOrEqual(100);
      expect(corrected?.max).toBeGreaterThanOrEqual(report.latencyMs.max);
      expect(report.requests).toBeLessThanOrEqual(300);
    } finally {
      await stalling.close();
    }
  });

  it("counts calls refused with RESOURCE_EXHAUSTED as shed, not as errors", async () => {
    const json = join(out, "shed.json");
    const run = await cli([
      "load",
      "--grpc",
      shedding.address,
      "--duration",
      "500ms",
      "--concurrency",
      "8",
      "--connections",
      "2",
      "--quiet",
      "--json",
      json,
    ]);
    expect(run.stdout).toMatch(/^errors {7}none$/m);
    expect(run.stdout).toMatch(/^shed {9}RESOURCE_EXHAUSTED \d+ \(refused to shed load, not counted as errors\)$/m);
    expect(run.code).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
    expect(report.errors).toEqual({});
    expect(report.shed.RESOURCE_EXHAUSTED).toBeGreaterThan(0);
    expect(report.stateless.compared).toBeGreaterThan(0);
  });

  describe("load merge", () => {
    it("adds up runs' histograms and counts into one set of figures and one SLO verdict, itself mergeable", async () => {
      const a = join(out, "merge-a.json");
      const b = join(out, "merge-b.json");
      const quick = await cli([
        "load",
        "--grpc",
        reference.address,
        "--duration",
        "300ms",
        "--concurrency",
        "2",
        "--quiet",
        "--json",
        a,
      ]);
      const slow = await cli([
        "load",
        "--grpc",
        sleeping.address,
        "--duration",
        "300ms",
        "--concurrency",
        "2",
        "--quiet",
        "--json",
        b,
      ]);
      expect([quick.code, slow.code]).toEqual([0, 0]);
      const ra = JSON.parse(readFileSync(a, "utf8")) as LoadReport;
      const rb = JSON.parse(readFileSync(b, "utf8")) as LoadReport;
      expect(ra.histograms.latency).toMatch(/^HISTF/);
      const merged = join(out, "merged.json");
      const run = await cli(["load", "merge", a, b, "--slo", "max<700ms", "--json", merged]);
      expect(run.stderr).toBe("");
      expect(run.stdout).toMatch(/\(merged from 2 runs\)/);
      // The sleeping run's 1 s calls are in the merged max: the quick run alone would meet it.
      expect(run.stdout).toMatch(
        /^slo {10}max<700ms +1\d\d\d(\.\d+)? ms \(measured latency\) against 700 ms: missed$/m,
      );
      expect(run.code).toBe(1);
      const m = JSON.parse(readFileSync(merged, "utf8")) as LoadReport;
      expect(m.requests).toBe(ra.requests + rb.requests);
      expect(m.stateless.compared).toBe(ra.stateless.compared + rb.stateless.compared);
      expect(m.concurrency).toBe(4);
      expect(m.latencyMs.p50).toBeLessThan(m.latencyMs.max);
      const again = await cli(["load", "merge", merged, "--slo", "max<20s"]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`${m.requests} calls`);
    });

    it.each([
      [
        "a file that is not there",
        () => join(out, "missing.json"),
        /load merge .*missing\.json: cannot read it \(ENOENT\)/,
      ],
      [
        "a file that is no JSON",
        () => (writeFileSync(join(out, "x.json"), "root:x:0:0"), join(out, "x.json")),
        /x\.json: not JSON \(a syntax error\)$/,
      ],
      [
        "a report whose histogram is forged",
        () => (
          writeFileSync(
            join(out, "f.json"),
            JSON.stringify({
              target: "t",
              durationMs: 1,
              concurrency: 1,
              connections: 1,
              threads: 1,
              requests: 1,
              errors: {},
              stateless: { distinctRequests: 1, compared: 1, mismatches: 0 },
              interrupted: false,
              histograms: { unit: "microseconds", latency: "SElTVA==" },
            }),
          ),
          join(out, "f.json")
        ),
        /f\.json: histograms\.latency: not an encoded histogram/,
      ],
      [
        "a report without its histograms",
        () => (writeFileSync(join(out, "h.json"), JSON.stringify({ target: "t" })), join(out, "h.json")),
        /h\.json: not a report of load --json/,
      ],
    ] as [string, () => string, RegExp][])("exits 2 with one line for %s", async (_, file, message) => {
      const run = await cli(["load", "merge", file()]);
      expect(run.code).toBe(2);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr.trim()).toMatch(message);
    });
  });
});
