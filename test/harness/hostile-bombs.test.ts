// Targets that try to exhaust the harness: replies that inflate to a GiB over gRPC, Connect and plain HTTP, bodies
// nested two million deep in JSON and XML, and an OpenAPI document of 100,000 paths. Each run, as its own process,
// ends by itself within its bound, with a verdict and no stack trace, and its peak RSS (VmHWM) stays under the bound
// docs/reliability.md documents.
import { afterEach, describe, expect, it } from "vitest";
import {
  startConnectGzipBomb,
  startDeepRepresentation,
  startGrpcGzipBomb,
  startHttpGzipBomb,
  startOpenApiFlood,
} from "../../fixtures/hostile-targets/bombs.js";
import type { TrackedServer } from "../../fixtures/_internals/listen-tracked.js";
import { PEAK_RSS_BOUND_MIB, runMeasured, type MeasuredRun } from "../helpers/measured-cli.js";

/** A run's end, with room for a loaded 2-core machine: a bound on hanging, not a claim of speed. */
const RUN_BOUND_MS = 75_000;
const BACKSTOP_MS = RUN_BOUND_MS + 45_000;

let server: TrackedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function endedWithinBounds(run: MeasuredRun): void {
  expect(run.signal, "the harness did not end by itself and was killed by the backstop").toBeNull();
  expect(run.ms).toBeLessThan(RUN_BOUND_MS);
  expect(run.peakRssMib).toBeGreaterThan(0);
  expect(run.peakRssMib, `peak RSS ${run.peakRssMib} MiB`).toBeLessThan(PEAK_RSS_BOUND_MIB);
  expect(run.stderr).not.toMatch(/^\s+at |node:internal|RangeError|heap out of memory/m);
}

const common = ["--timeout", "2s", "--seed", "1", "--runs", "5"];

describe("a target whose replies inflate to 1 GiB", () => {
  it(
    "gRPC (grpc-encoding gzip on every reply): the run ends with a verdict, memory bounded, and the gzip check " +
      "says why",
    async () => {
      server = await startGrpcGzipBomb();
      const run = await runMeasured(
        ["check", "--grpc", server.address, "--skip", "contract.*", "--profile", "protocol", ...common],
        {},
        BACKSTOP_MS,
      );
      endedWithinBounds(run);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/grpc\.encoding\.gzip .*too large: it inflates past 4194304 bytes/);
    },
    BACKSTOP_MS,
  );

  it(
    "Connect (Content-Encoding gzip on every reply): the run ends with a verdict, memory bounded",
    async () => {
      const bomb = await startConnectGzipBomb();
      server = bomb;
      const run = await runMeasured(
        ["check", "--connect", bomb.url, "--skip", "contract.*", ...common],
        {},
        BACKSTOP_MS,
      );
      endedWithinBounds(run);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/inflates past 8388608 bytes/);
    },
    BACKSTOP_MS,
  );

  it(
    "HTTP (Content-Encoding gzip on every response): the run ends with a verdict, memory bounded",
    async () => {
      const bomb = await startHttpGzipBomb();
      server = bomb;
      const run = await runMeasured(["check", "--http", bomb.url, ...common], {}, BACKSTOP_MS);
      endedWithinBounds(run);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/Content-Encoding: gzip\): it inflates past 8388608 bytes/);
    },
    BACKSTOP_MS,
  );
});

describe("a representation nested two million levels deep", () => {
  it.each(["json", "xml"] as const)(
    "in %s: never parsed (one linear scan says it is no representation), the run ends within its bound, memory bounded",
    async (format) => {
      const deep = await startDeepRepresentation(format);
      server = deep;
      const run = await runMeasured(["check", "--http", deep.url, ...common], {}, BACKSTOP_MS);
      endedWithinBounds(run);
      expect(run.code).toBe(1);
    },
    BACKSTOP_MS,
  );
});

describe("an OpenAPI document of 100,000 paths", () => {
  it(
    "is read and judged in linear time: the run ends within its bound, memory bounded, and prints a bounded screen",
    async () => {
      const flood = await startOpenApiFlood(100_000);
      server = flood;
      const run = await runMeasured(
        ["check", "--http", flood.url, "--openapi", flood.openapiPath, ...common],
        {},
        BACKSTOP_MS,
      );
      endedWithinBounds(run);
      expect(run.code).toBe(1);
      // Every path is judged, and the problems beyond the first few of each check are counted, not printed.
      expect(run.stdout).toMatch(/\.\.\. and \d+ more problems of the same check, not shown/);
      expect(run.stdout.split("\n").length).toBeLessThan(2_000);
    },
    BACKSTOP_MS,
  );
});
