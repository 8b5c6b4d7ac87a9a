// The GitHub Action run as the runner runs it: action.yml parsed, each run step executed by bash with its env.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../contract/message.js";
import { listen } from "../fixtures/broken-servers/http/_base/server.js";
import type { RunReport } from "../harness/report.js";
import { startReferenceServer, type ReferenceServer } from "../reference-server/start.js";
import { startGrpcJsServer, type TestServer } from "./helpers/grpc-js-server.js";

const ROOT = resolve(import.meta.dirname, "..");

interface Step {
  name?: string;
  id?: string;
  shell?: string;
  env?: Record<string, string>;
  run?: string;
  uses?: string;
}
interface Action {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

const action = parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as Action;

/** The expressions the action may use, and nothing else: an unknown one fails the test rather than vanish. */
function evaluate(text: string, scope: { inputs: Record<string, string>; steps: Record<string, Record<string, string>> }): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    let m = /^inputs\.([\w-]+)$/.exec(expr);
    if (m) {
      const name = m[1] as string;
      if (!(name in action.inputs)) throw new Error(`action.yml uses an undeclared input ${name}`);
      return scope.inputs[name] ?? action.inputs[name]?.default ?? "";
    }
    if (expr === "github.action_path") return ROOT;
    m = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    if (m) return scope.steps[m[1] as string]?.[m[2] as string] ?? "";
    throw new Error(`action.yml uses an expression this test does not know: ${expr}`);
  });
}

function parseOutputs(text: string): Record<string, string> {
  return Object.fromEntries(text.split("\n").filter((l) => l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
}

interface ActionRun {
  code: number;
  outputs: Record<string, string>;
  summary: string;
  log: string;
}

async function runAction(inputs: Record<string, string>, workspace: Record<string, string> = {}): Promise<ActionRun> {
  const work = mkdtempSync(join(tmpdir(), "action-"));
  // Files of the repository the workflow checked out, such as its example-conformance.yaml.
  for (const [name, text] of Object.entries(workspace)) writeFileSync(join(work, name), text);
  const scope = { inputs, steps: {} as Record<string, Record<string, string>> };
  const summaryFile = join(work, "summary.md");
  writeFileSync(summaryFile, "");
  let log = "";
  let code = 0;
  for (const [i, step] of action.runs.steps.entries()) {
    expect(step.uses, "a step the test cannot run").toBeUndefined();
    expect(step.shell).toBe("bash");
    const outputFile = join(work, `output-${i}`);
    writeFileSync(outputFile, "");
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? work,
      // As on a runner: this turns on the check's own github reporter, whose annotations the job shows.
      GITHUB_ACTIONS: "true",
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      GITHUB_ACTION_PATH: ROOT,
      ...Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, evaluate(String(v), scope)])),
    };
    // As the runner runs a bash step: bash --noprofile --norc -eo pipefail {0}
    const script = join(work, `step-${i}.sh`);
    writeFileSync(script, evaluate(step.run ?? "", scope));
    code = await new Promise<number>((done) => {
      const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
      child.stdout.setEncoding("utf8").on("data", (d: string) => (log += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (log += d));
      child.on("close", (c) => done(c ?? 1));
    });
    if (step.id !== undefined) scope.steps[step.id] = parseOutputs(readFileSync(outputFile, "utf8"));
    if (code !== 0) break;
  }
  const outputs = Object.fromEntries(Object.entries(action.outputs).map(([k, v]) => [k, evaluate(v.value, scope)]));
  // Report paths are relative to the workspace, as the runner's working directory is.
  const absolute = Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, k.startsWith("report-") && v !== "" ? join(work, v) : v]));
  return { code, outputs: absolute, summary: readFileSync(summaryFile, "utf8"), log };
}

let reference: ReferenceServer;
let counting: TestServer;

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0 });
  let n = 0;
  // Counts calls in its reply, and the count arrives inside Markdown that would otherwise render as a link.
  counting = await startGrpcJsServer(() => Buffer.from(encodeMessage(`[call ${++n}](https://evil.example/) <img src=x>`)));
});
afterAll(async () => {
  await reference.close();
  await counting.close();
});

describe("action.yml", () => {
  it("is a composite action whose inputs name the target, profile and expected failures, and whose outputs are the verdict and reports", () => {
    expect(action.runs.using).toBe("composite");
    expect(Object.keys(action.inputs)).toEqual(expect.arrayContaining(["grpc", "http", "image", "grpc-port", "http-port", "profile", "expected-failures"]));
    expect(Object.keys(action.outputs)).toEqual(expect.arrayContaining(["verdict", "report-json", "report-junit", "report-html"]));
    // Uploading is the workflow's choice, not the action's.
    expect(JSON.stringify(action.runs.steps)).not.toMatch(/upload-artifact/);
  });

  it("passes the reference server: verdict conformant, the reports written, a summary that says so", async () => {
    // One instance, as the workspace's configuration declares: without the claim the run is partial (no replica).
    const run = await runAction({ grpc: reference.grpcAddress, http: reference.httpUrl }, { "example-conformance.yaml": "claims:\n  replicas: single\n" });
    expect(run.code, run.log).toBe(0);
    expect(run.outputs.verdict).toBe("conformant");
    expect(run.outputs["exit-code"]).toBe("0");
    const report = JSON.parse(readFileSync(run.outputs["report-json"] as string, "utf8")) as RunReport;
    expect(report.exitCode).toBe(0);
    expect(readFileSync(run.outputs["report-junit"] as string, "utf8")).toMatch(/<testsuites/);
    expect(readFileSync(run.outputs["report-html"] as string, "utf8")).toMatch(/Conformant/);
    expect(run.summary).toMatch(/^### example-conformance: conformant$/m);
    // Written once: by the action from the report, not also by the check's own github reporter.
    expect(run.summary.match(/### example-conformance/g)).toHaveLength(1);
  }, 120_000);

  it("says partial, not conformant, for a run that left a gating check unjudged (no replica, no claim): exit 0, the report's verdict", async () => {
    const run = await runAction({ grpc: reference.grpcAddress });
    expect(run.code, run.log).toBe(0);
    expect(run.outputs.verdict).toBe("partial");
    expect(run.summary).toMatch(/^### example-conformance: partial$/m);
  }, 120_000);

  it("fails the step on a server that counts calls, names the failed check in the summary, and keeps its text inert", async () => {
    const expectations = join(mkdtempSync(join(tmpdir(), "expect-")), "known.txt");
    writeFileSync(expectations, "grpc.stateless.deterministic # the count changes the reply by itself\n");
    const run = await runAction({ grpc: counting.address, "expected-failures": expectations });
    expect(run.code, run.log).toBe(1);
    expect(run.outputs.verdict).toBe("not-conformant");
    expect(run.summary).toMatch(/^### example-conformance: not conformant$/m);
    expect(run.summary).toMatch(/\| `grpc\.stateless\.history-independent` \| MUST \| fail \(gating\) \|/);
    expect(run.summary).toMatch(/\| `grpc\.stateless\.deterministic` \| \w+ \| expected-fail \|/);
    expect(run.summary).not.toMatch(/\]\(https|<img/);
    // The annotations come from the check's github reporter, on the step's log.
    expect(run.log).toMatch(/^::error title=grpc\.stateless\.history-independent /m);
  }, 120_000);

  // Refused before any container starts: each input reaches the check as its flag, and a refusal is a usage error.
  it.each([
    [{ image: "example/none:0", grpc: "127.0.0.1:9" }, /--image starts its own target: leave out --grpc/],
    [{ grpc: "127.0.0.1:9", "grpc-port": "0x" }, /--grpc-port must be a whole number, got "0x"/],
    [{ grpc: "127.0.0.1:9", "http-port": "8080" }, /--http-port needs --image/],
    [{ grpc: "127.0.0.1:9", "grpc-port": "50051" }, /--grpc-port needs --image/],
    [{ grpc: "127.0.0.1:9", profile: "nope" }, /'--profile <profile>' argument 'nope' is invalid/],
  ] as [Record<string, string>, RegExp][])("passes %j on as flags, and a refusal is verdict usage-error", async (inputs, message) => {
    const run = await runAction(inputs);
    expect(run.code).toBe(2);
    expect(run.outputs.verdict).toBe("usage-error");
    expect(run.log).toMatch(message);
    expect(run.summary).toMatch(/^### example-conformance: usage-error$/m);
  }, 60_000);

  it("says unreachable, with no report, for a target that is not there", async () => {
    const run = await runAction({ grpc: "127.0.0.1:9" });
    expect(run.code).toBe(3);
    expect(run.outputs.verdict).toBe("unreachable");
    expect(run.outputs["report-json"]).toBe("");
    expect(run.summary).toMatch(/^### example-conformance: unreachable$/m);
  }, 60_000);

  it("says cannot-check, exit 5, for an HTTP target that wants a key the run was not given", async () => {
    const server = await listen(http.createServer((_req, res) => res.writeHead(401, { "www-authenticate": "Bearer" }).end()));
    try {
      const run = await runAction({ http: server.url });
      expect(run.code).toBe(5);
      expect(run.outputs.verdict).toBe("cannot-check");
      expect(run.outputs["exit-code"]).toBe("5");
      expect(run.log).toMatch(/cannot check: the target wants credentials \(GET \/messages → 401\): pass --api-key K or EXAMPLE_API_KEY, with --api-key-in bearer/);
      expect(run.summary).toMatch(/^### example-conformance: cannot-check$/m);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe("docs/ci/github-actions.yml", () => {
  it("uses the action, with inputs it declares, and uploads the report-dir itself", () => {
    const workflow = parse(readFileSync(join(ROOT, "docs", "ci", "github-actions.yml"), "utf8")) as { jobs: Record<string, { steps: (Step & { with?: Record<string, unknown> })[] }> };
    const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
    const uses = steps.filter((s) => /\/example-conformance@/.test(s.uses ?? ""));
    expect(uses).toHaveLength(1);
    for (const input of Object.keys(uses[0]?.with ?? {})) expect(Object.keys(action.inputs)).toContain(input);
    const upload = steps.find((s) => (s.uses ?? "").startsWith("actions/upload-artifact"));
    expect(upload?.with?.path).toBe(`${String(uses[0]?.with?.["report-dir"])}/`);
  });
});
