// `check --image`: a target started from an image with testcontainers, checked on its mapped ports, and removed.
// The images are built here FROM scratch (no registry is reachable); ryuk, which would be pulled, is off.
process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server as countsCalls } from "../../../fixtures/broken-servers/grpc/counts-calls.js";
import { CONTAINER_LABEL } from "../../../harness/container/start-container.js";
import { checkVerdicts, cli, withoutProgress } from "../../helpers/cli.js";
import { buildImage, dockerMissing } from "../../helpers/images.js";

const run = promisify(execFile);
let missing: string | undefined;
let reference = "";
let broken = "";

beforeAll(async () => {
  missing = await dockerMissing();
  if (missing !== undefined) return;
  reference = await buildImage("reference", "bin/example-conformance.js", [
    "serve",
    "--host",
    "0.0.0.0",
    "--grpc-port",
    "50051",
    "--http-port",
    "8080",
    "--store",
    "memory:",
  ]);
  broken = await buildImage("counts-calls", "dist/fixtures/containers/broken-entry.js", ["counts-calls"]);
}, 300_000);

afterAll(async () => {
  if (missing !== undefined) return;
  // Whatever happened above, no container of these runs is left behind; if one is, it goes, and the test fails.
  const { stdout } = await run("docker", ["ps", "-a", "-q", "--filter", `label=${CONTAINER_LABEL}`]);
  const left = stdout.trim().split("\n").filter(Boolean);
  if (left.length > 0) await run("docker", ["rm", "-f", ...left]);
  expect(left).toEqual([]);
});

/** Above the container's own startup bound (60 s), so that a run that fails still stops its container in time. */
const CONTAINER_TEST_MS = 150_000;

describe("example-conformance check --image", () => {
  const needsDocker = (t: { skip: (note: string) => void }) => {
    if (missing === undefined) return;
    // In CI, .ci/run installs and starts the engine: its absence is a broken pipeline, not a reason to skip.
    if (process.env.CI === "true") throw new Error(missing);
    t.skip(missing);
  };

  it(
    "starts the reference server's image, checks gRPC and HTTP on the mapped ports, passes, and removes the container",
    async (t) => {
      needsDocker(t);
      const result = await checkVerdicts(["--image", reference, "--http-port", "8080", "--seed", "3", "--runs", "20"]);
      expect(withoutProgress(result.stderr)).toBe("");
      expect(result.code).toBe(0);
      expect(result.report.target.image).toBe(reference);
      // What is certified is the image's content, whatever tag named it: its ID, as the engine gives it.
      const id = execFileSync("docker", ["image", "inspect", "--format", "{{.Id}}", reference], {
        encoding: "utf8",
      }).trim();
      expect(result.report.target.imageDigest).toBe(id);
      expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(result.report.target.grpc).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(result.report.checks.find((c) => c.id === "http.maturity")?.message).toMatch(/^level 3/);
      expect(result.report.containerLog).toBeUndefined();
    },
    CONTAINER_TEST_MS,
  );

  it(
    "fails an image of a broken server with the IDs it fails in process, names the image in replays, and " +
      "attaches its log",
    async (t) => {
      needsDocker(t);
      const result = await checkVerdicts([
        "--image",
        broken,
        "--only",
        "grpc.stateless.*",
        "--seed",
        "3",
        "--runs",
        "20",
      ]);
      expect(result.code).toBe(1);
      expect(result.failed).toEqual([...countsCalls.mustFail].sort());
      const failedCheck = result.report.checks.find((c) => c.status === "fail");
      expect(failedCheck?.replay).toMatch(
        new RegExp(
          `^npx example-conformance check --image ${broken.replace(/[/.]/g, "\\$&")} --runs 20 --only ` +
            `grpc\\.stateless\\.`,
        ),
      );
      expect(result.report.containerLog?.join("\n")).toContain("broken server counts-calls listening on 0.0.0.0:50051");
      expect(result.stdout).toMatch(/^container log of .* \(last \d+ lines\):$/m);
    },
    CONTAINER_TEST_MS,
  );

  it(
    "exits 3 with the cause when the image's server never comes up",
    async (t) => {
      needsDocker(t);
      const result = await cli(["check", "--image", broken.replace(/:.*$/, ":no-such-tag")]);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/^example-conformance: --image .*no-such-tag: the container did not start: .*\n$/);
    },
    CONTAINER_TEST_MS,
  );

  it.each([
    [
      ["--image", "x", "--grpc", "127.0.0.1:1"],
      /--image starts its own target: leave out --grpc, --connect, --grpc-web and --http/,
    ],
    [["--env", "A=1"], /--env needs --image/],
    [["--grpc", "127.0.0.1:1", "--grpc-port", "50051"], /--grpc-port needs --image/],
    [["--image", "x", "--env", "1A=1"], /--env 1A=1: expected NAME=value/],
    [["--image", "x", "--wait-log", "("], /--wait-log \(: not a regular expression/],
  ] as [string[], RegExp][])("exits 2 with one line for %j", async (args, message) => {
    const result = await cli(["check", ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });
});
