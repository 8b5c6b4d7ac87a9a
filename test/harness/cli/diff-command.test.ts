// `diff OLD NEW` and `check --baseline FILE --fail-on`: two runs against one server, the second with a defect it
// did not have, compared; a known failure in the baseline does not fail the ratchet, a new one does.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../contract/message.js";
import type { RunReport } from "../../../harness/report.js";
import { cli } from "../../helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";

const ONLY = "grpc.stateless.history-independent,grpc.unary.*";
let server: TestServer;
let counting = false;
let calls = 0;
const dir = mkdtempSync(join(tmpdir(), "diff-"));
const clean = join(dir, "clean.json");
const broken = join(dir, "broken.json");
const brokenAgain = join(dir, "broken-again.json");

async function check(file: string, ...extra: string[]) {
  return cli([
    "check",
    "--grpc",
    server.address,
    "--only",
    ONLY,
    "--seed",
    "7",
    "--runs",
    "5",
    "--report-json",
    file,
    ...extra,
  ]);
}

beforeAll(async () => {
  // The same server twice: first it answers every request alike, then a number in its reply counts calls.
  server = await startGrpcJsServer(() => Buffer.from(encodeMessage(counting ? `hello ${++calls}` : "hello")));
  expect((await check(clean)).code).toBe(0);
  counting = true;
  expect((await check(broken)).code).toBe(1);
  expect((await check(brokenAgain)).code).toBe(1);
}, 120_000);
afterAll(async () => {
  await server.close();
});

describe("diff OLD.json NEW.json", () => {
  it("with a new gating failure and --fail-on new: exit 1, naming it as newly failing", async () => {
    const run = await cli(["diff", clean, broken, "--fail-on", "new"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      /^newly failing \(1\):\n {2}gating grpc\.stateless\.history-independent {2}pass -> fail: /m,
    );
    expect(run.stdout).toMatch(
      /^diff: 1 newly failing \(1 gating\), 0 still failing, 0 newly passing, 0 no longer judged; --fail-on new: exit 1$/m,
    );
  });

  it("with that failure already in the baseline: exit 0, listed as known (still failing)", async () => {
    const run = await cli(["diff", broken, brokenAgain, "--fail-on", "new"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^still failing \(known\) \(1\):\n {2}gating grpc\.stateless\.history-independent {2}fail -> fail$/m,
    );
    expect(run.stdout).not.toMatch(/^newly failing/m);
  });

  it("--fail-on any follows the new run's verdict; the default (none) only reports", async () => {
    expect((await cli(["diff", broken, brokenAgain, "--fail-on", "any"])).code).toBe(1);
    expect((await cli(["diff", clean, broken])).code).toBe(0);
    const json = await cli(["diff", broken, clean, "--format", "json"]);
    const parsed = JSON.parse(json.stdout) as { newlyPassing: { id: string }[]; exitCode: number };
    expect(parsed.newlyPassing.map((e) => e.id)).toEqual(["grpc.stateless.history-independent"]);
  });

  it("lists checks the new run no longer judged, and says when the runs checked different targets", async () => {
    const before = JSON.parse(readFileSync(clean, "utf8")) as RunReport;
    const narrowed = {
      ...before,
      target: { ...before.target, grpc: "127.0.0.1:1" },
      checks: before.checks.filter((c) => c.id !== "grpc.stateless.history-independent"),
    };
    const file = join(dir, "narrowed.json");
    writeFileSync(file, JSON.stringify(narrowed));
    const run = await cli(["diff", clean, file]);
    expect(run.stdout).toMatch(
      /^no longer judged \(1\):\n {2}grpc\.stateless\.history-independent {2}pass -> not run$/m,
    );
    expect(run.stdout).toMatch(
      /^note: the runs checked different targets \(grpc: 127\.0\.0\.1:\d+ then 127\.0\.0\.1:1\)$/m,
    );
  });

  it("shows a report's target text inert: no escape sequence or line of its own reaches the terminal", async () => {
    const report = JSON.parse(readFileSync(broken, "utf8")) as RunReport;
    const failing = report.checks.find((c) => c.status === "fail");
    if (failing) failing.message = "\u001b[2J\n::error::forged\u202e";
    const file = join(dir, "hostile.json");
    writeFileSync(file, JSON.stringify(report));
    const run = await cli(["diff", clean, file]);
    expect(run.stdout).toContain("\\x1b[2J\\n::error::forged\\u202e");
    expect(run.stdout).not.toMatch(/\u001b|\u202e|^::/m);
  });

  it.each([
    [["diff", join(dir, "none.json"), "x"], /^example-conformance: old report .*none\.json: no such file$/],
    [["diff", dir, clean], /^example-conformance: old report .*: not a file$/],
    [["diff", "JSON", clean], /no such file/],
  ])("%j is a usage error in one line", async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toMatch(message);
  });

  it("refuses a file that is not a report, naming what is wrong", async () => {
    const notJson = join(dir, "not.json");
    writeFileSync(notJson, "{ checks: ");
    const wrongShape = join(dir, "shape.json");
    writeFileSync(wrongShape, JSON.stringify({ checks: [{ id: "a", status: "maybe", gating: true }] }));
    const a = await cli(["diff", notJson, clean]);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(
      /old report .*not\.json: not JSON \(.*\): give a report written by check --report-json\n$/,
    );
    const b = await cli(["diff", clean, wrongShape]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(
      /new report .*shape\.json: not a report of check --report-json \(\/checks\/0\/status must be equal to one of the allowed values\)\n$/,
    );
  });
});

describe("check --baseline FILE --fail-on", () => {
  it("exit 1 on a failure the baseline did not have; exit 0 on a known one, the verdict and report still not " +
    "conformant", async () => {
    const fresh = await check(join(dir, "b1.json"), "--baseline", clean, "--fail-on", "new");
    expect(fresh.code).toBe(1);
    expect(fresh.stdout).toMatch(/^against the baseline .*clean\.json:\nnewly failing \(1\):/m);
    const out = join(dir, "b2.json");
    const known = await check(out, "--baseline", broken, "--fail-on", "new");
    expect(known.code, known.stdout).toBe(0);
    expect(known.stdout).toMatch(/^still failing \(known\) \(1\):/m);
    expect(known.stdout).toMatch(/not conformant/);
    const report = JSON.parse(readFileSync(out, "utf8")) as RunReport;
    expect(report.verdict).toBe("not conformant");
    // Without --fail-on the run's own verdict decides, as without a baseline.
    expect((await check(join(dir, "b3.json"), "--baseline", broken)).code).toBe(1);
  }, 60_000);

  it("with a report alone on stdout (--reporter json), says the comparison on stderr, so stdout stays one document", async () => {
    const run = await cli([
      "check",
      "--grpc",
      server.address,
      "--only",
      ONLY,
      "--seed",
      "7",
      "--runs",
      "5",
      "--reporter",
      "json",
      "--baseline",
      broken,
      "--fail-on",
      "new",
    ]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as RunReport).verdict).toBe("not conformant");
    expect(run.stderr).toMatch(/^still failing \(known\) \(1\):/m);
  }, 60_000);

  it("refuses --fail-on without --baseline, and a baseline that cannot be read, before any call", async () => {
    const alone = await cli(["check", "--grpc", "127.0.0.1:1", "--fail-on", "new"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toBe(
      "example-conformance: --fail-on new compares with a baseline: give --baseline FILE (an earlier run's " +
        "--report-json)\n",
    );
    // Nothing listens on 127.0.0.1:1: a 2, not a 3, shows the baseline was refused before the target was tried.
    const missing = await cli(["check", "--grpc", "127.0.0.1:1", "--baseline", join(dir, "gone.json")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^example-conformance: --baseline .*gone\.json: no such file\n$/);
  });
});

describe("a report file's own text", () => {
  // A check id that would start a GitHub workflow command on a line of its own, colour the terminal, ring its bell,
  // return the carriage and reverse the text after it. Anyone can write a report file; the Action's baseline input
  // takes one.
  const HOSTILE = "grpc.x\n::error file=a.ts,line=1::forged\u001b[31m\u0007\r\u202eevil";
  const RAW = /[\u0000-\u0008\u000b-\u001f\u007f\u202e]/;

  function hostileReport(): string {
    const report = JSON.parse(readFileSync(clean, "utf8")) as RunReport;
    report.checks.push({
      ...(report.checks[0] as RunReport["checks"][number]),
      id: HOSTILE,
      status: "fail",
      gating: true,
      message: "\u001b]0;title\u0007",
    });
    const file = join(dir, "hostile.json");
    writeFileSync(file, JSON.stringify(report));
    return file;
  }

  it("reaches diff's output escaped: no workflow command, no control character, no bidi mark", async () => {
    const file = hostileReport();
    for (const args of [
      [file, clean],
      [clean, file],
    ]) {
      const run = await cli(["diff", ...args]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("grpc.x\\n::error file=a.ts,line=1::forged\\x1b[31m\\x07\\r\\u202eevil");
      expect(run.stdout.split("\n").filter((l) => l.startsWith("::"))).toEqual([]);
      expect(run.stdout).not.toMatch(RAW);
    }
  });

  it("reaches check --baseline's output escaped", async () => {
    const run = await check(join(dir, "b4.json"), "--baseline", hostileReport());
    expect(run.stdout).toMatch(/^no longer judged \(1\):\n {2}grpc\.x\\n::error/m);
    expect(run.stdout.split("\n").filter((l) => l.startsWith("::"))).toEqual([]);
    expect(run.stdout).not.toMatch(RAW);
  }, 60_000);
});
