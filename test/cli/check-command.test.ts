// `example-conformance check` as a CI pipeline runs it: exit codes, report files, one-line errors.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../harness/_internals/message.js";
import { cli } from "../helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "../helpers/grpc-js-server.js";

let good: TestServer;
let counting: TestServer;
const out = mkdtempSync(join(tmpdir(), "check-cli-"));

beforeAll(async () => {
  good = await startGrpcJsServer((req) => {
    const d = decodeMessage(req);
    return d.ok ? Buffer.from(encodeMessage(`hi ${d.message.body}`)) : { code: 13, details: d.reason };
  });
  let n = 0;
  counting = await startGrpcJsServer(() => Buffer.from(encodeMessage(`call ${++n}`)));
});
afterAll(async () => {
  await good.close();
  await counting.close();
});

describe("example-conformance check", () => {
  it("exits 0 for a conformant target and writes valid JSON, JUnit and HTML reports", async () => {
    const files = { json: join(out, "r.json"), junit: join(out, "r.xml"), html: join(out, "r.html") };
    const run = await cli(["check", "--grpc", good.address, "--skip", "contract.*", "--runs", "10", "--seed", "4",
      "--report-json", files.json, "--report-junit", files.junit, "--report-html", files.html]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/conformant: no gating check failed \(seed 4\)/);
    const json = JSON.parse(readFileSync(files.json, "utf8")) as { seed: number; target: { grpc: string }; checks: unknown[] };
    expect(json).toMatchObject({ seed: 4, target: { grpc: good.address } });
    expect(json.checks.length).toBeGreaterThan(25);
    expect(XMLValidator.validate(readFileSync(files.junit, "utf8"))).toBe(true);
    expect(readFileSync(files.html, "utf8")).toMatch(/Conformant: no gating check failed/);
  });

  it("exits 1 for a target that counts calls, printing the replay command", async () => {
    const run = await cli(["check", "--grpc", counting.address, "--only", "grpc.stateless.history-independent", "--seed", "8", "--runs", "10"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`replay: npx example-conformance check --grpc ${counting.address} --only grpc.stateless.history-independent --seed 8`);
  });

  it("exits 3 within the timeout for a target that is not there, naming the address and the cause", async () => {
    const started = performance.now();
    const run = await cli(["check", "--grpc", "127.0.0.1:1", "--timeout", "2s"]);
    expect(run).toMatchObject({ code: 3, stdout: "" });
    expect(run.stderr).toMatch(/^example-conformance: cannot reach 127\.0\.0\.1:1: ECONNREFUSED.*\n$/);
    expect(performance.now() - started).toBeLessThan(10_000); // a backstop against hanging, not a speed claim
  });

  it.each([
    [["--grpc", "nohost"], /--grpc nohost: expected host:port/],
    [["--timeout", "soon"], /--timeout must be a duration/],
    [["--runs", "0"], /--runs must be between 1 and 100000/],
    [["--metadata", "novalue"], /--metadata novalue: expected key=value/],
    [["--metadata", "grpc-timeout=1S"], /not a custom metadata key/],
    [["--ca", "x.pem"], /--ca, --cert and --key need --tls/],
    [["--replica", "127.0.0.1:2"], /--replica needs --grpc/, "no target"],
    [["--only", "grpc.nope"], /--only grpc.nope: matches no check/],
    [["--profile", "everything"], /--profile.*everything/],
  ] as [string[], RegExp, string?][])("exits 2 with one line for %j", async (args, message, noTarget) => {
    // A later --grpc overrides the first, so the good target is a default each case can replace.
    const run = await cli(["check", ...(noTarget ? [] : ["--grpc", good.address]), ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });

  it("--list prints every check with severity, profile and spec, touching no target", async () => {
    const run = await cli(["check", "--list", "--grpc", "127.0.0.1:1"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^grpc\.stateless\.history-independent\s+MUST\s+contract\s+§1\.2/m);
    expect(run.stdout).toMatch(/^grpc\.unary\.cardinality\s+SHOULD\s+protocol/m);
    expect(run.stdout).toMatch(/^grpc\.golden\.empty-message\s+MUST/m);
  });

  it("writes GitHub Actions annotations when GITHUB_ACTIONS=true", async () => {
    const run = await cli(["check", "--grpc", counting.address, "--only", "grpc.stateless.deterministic", "--seed", "1"], { GITHUB_ACTIONS: "true" });
    expect(run.stdout).toMatch(/^::warning title=grpc\.stateless\.deterministic \[SHOULD §1\.2 \(stateless server\)\]::/m);
  });
});

describe("example-conformance check with no target", () => {
  it("starts the built-in reference server, passes every check, and replays without --grpc", async () => {
    const run = await cli(["check", "--seed", "2", "--runs", "20"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\(built-in reference server\)/);
    expect(run.stdout).not.toMatch(/^(FAIL|ERR)/m);
    expect(run.stdout).toMatch(/\d+ passed, 0 failed, \d+ skipped, 0 errored/);
  });
});
