// The GitHub Action run as a runner runs a JavaScript action: action.yml and its bundle copied alone into a folder
// with no node_modules above it, `node <runs.main>` started with each input as INPUT_<NAME> (hyphens kept, defaults
// from action.yml), GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and buf on PATH as bufbuild/buf-action puts it.
import { execFileSync, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import * as http from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../common/message.js";
import { listen } from "../../../fixtures/broken-servers/http/_base/server.js";
import type { RunReport } from "../../../harness/report.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";
import { selfSignedCert } from "../../helpers/tls.js";
import { EXIT_CODE_TABLE } from "../../../harness/errors.js";

const ROOT = resolve(import.meta.dirname, "../../..");

interface Step {
  name?: string;
  id?: string;
  uses?: string;
}
interface Action {
  inputs: Record<string, { default?: string; description: string }>;
  outputs: Record<string, { description: string; value?: string }>;
  runs: { using: string; main: string; steps?: unknown };
}

const action = parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as Action;

/** The action as a workflow gets it: action.yml and the bundle folder, alone, where no node_modules can be found. */
const ACTION_DIR = mkdtempSync(join(tmpdir(), "action-alone-"));
copyFileSync(join(ROOT, "action.yml"), join(ACTION_DIR, "action.yml"));
const BUNDLE_FOLDER = action.runs.main.split("/")[0] as string;
cpSync(join(ROOT, BUNDLE_FOLDER), join(ACTION_DIR, BUNDLE_FOLDER), { recursive: true });

/** A folder on PATH with `buf`, as bufbuild/buf-action with setup_only leaves it, recording each command line. */
const TOOLS = mkdtempSync(join(tmpdir(), "action-tools-"));
const platformBuf = `@bufbuild/buf-${process.platform}-${process.arch === "arm64" ? "aarch64" : process.arch}`;
const realBuf = join(
  dirname(createRequire(join(ROOT, "package.json")).resolve(`${platformBuf}/package.json`)),
  "bin",
  "buf",
);
copyFileSync(realBuf, join(TOOLS, "buf-real"));
chmodSync(join(TOOLS, "buf-real"), 0o755);
writeFileSync(
  join(TOOLS, "buf"),
  `#!/bin/bash\nprintf 'buf %s\\n' "$*" >> "$ARGV_LOG"\nexec "$(dirname "$0")/buf-real" "$@"\n`,
);
chmodSync(join(TOOLS, "buf"), 0o755);
/** The test's PATH less anything of an npm install (npx puts node_modules/.bin first). */
const SYSTEM_PATH = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((d) => !d.includes("node_modules"))
  .join(delimiter);

function parseOutputs(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

interface ActionRun {
  code: number;
  outputs: Record<string, string>;
  summary: string;
  log: string;
  /** The command lines of the processes the action started (buf's), one a line, and the action's own. */
  argv: string;
  /** The runner's temporary folder after the run (the signing key's file must be gone from it). */
  runnerTemp: string;
  work: string;
}

/** A secret reaches no command line, no log line, no summary and no report. */
function expectSecretKept(run: ActionRun, secret: string): void {
  expect(run.argv).not.toContain(secret);
  expect(run.log).not.toContain(secret);
  expect(run.summary).not.toContain(secret);
  for (const kind of ["report-json", "report-junit", "report-html"])
    if (run.outputs[kind]) expect(readFileSync(run.outputs[kind] as string, "utf8")).not.toContain(secret);
}

interface RunOptions {
  /** Files of the repository the workflow checked out, such as its example-conformance.yaml. */
  workspace?: Record<string, string>;
  /** The workspace itself, when the test made it (a git repository). */
  cwd?: string;
  /** What the runner sets for the event: GITHUB_BASE_REF on a pull request. */
  env?: Record<string, string>;
  /** false: no buf on PATH (a job without bufbuild/buf-action). */
  buf?: boolean;
}

/** The environment a runner gives a node action: INPUT_<NAME> for every declared input, its default when not given. */
function inputEnv(inputs: Record<string, string>): Record<string, string> {
  for (const name of Object.keys(inputs))
    if (!(name in action.inputs)) throw new Error(`the test gives an undeclared input ${name}`);
  return Object.fromEntries(
    Object.entries(action.inputs).map(([name, spec]) => [
      `INPUT_${name.replace(/ /g, "_").toUpperCase()}`,
      inputs[name] ?? spec.default ?? "",
    ]),
  );
}

async function runAction(
  inputs: Record<string, string>,
  workspaceOrOptions: Record<string, string> | RunOptions = {},
): Promise<ActionRun> {
  const options: RunOptions = ["workspace", "cwd", "env", "buf"].some((k) => k in workspaceOrOptions)
    ? (workspaceOrOptions as RunOptions)
    : { workspace: workspaceOrOptions as Record<string, string> };
  const work = options.cwd ?? mkdtempSync(join(tmpdir(), "action-"));
  const runner = mkdtempSync(join(tmpdir(), "runner-"));
  for (const [name, text] of Object.entries(options.workspace ?? {})) {
    mkdirSync(dirname(join(work, name)), { recursive: true });
    writeFileSync(join(work, name), text);
  }
  const files = {
    output: join(runner, "output"),
    summary: join(runner, "summary.md"),
    argv: join(runner, "argv.log"),
    temp: join(runner, "temp"),
  };
  for (const f of [files.output, files.summary, files.argv]) writeFileSync(f, "");
  mkdirSync(files.temp);
  const main = join(ACTION_DIR, action.runs.main);
  const env: Record<string, string> = {
    PATH: options.buf === false ? SYSTEM_PATH : `${TOOLS}${delimiter}${SYSTEM_PATH}`,
    ARGV_LOG: files.argv,
    ...options.env,
    HOME: process.env.HOME ?? work,
    // As on a runner: this turns on the check's own github reporter, whose annotations the job shows.
    GITHUB_ACTIONS: "true",
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    GITHUB_ACTION_PATH: ACTION_DIR,
    RUNNER_TEMP: files.temp,
    ...inputEnv(inputs),
  };
  let log = "";
  const code = await new Promise<number>((done) => {
    const child = spawn(process.execPath, [main], { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.setEncoding("utf8").on("data", (d: string) => (log += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (log += d));
    child.on("close", (c) => done(c ?? 1));
  });
  const outputs = parseOutputs(readFileSync(files.output, "utf8"));
  // Paths are relative to the workspace, as the runner's working directory is.
  const absolute = Object.fromEntries(
    Object.entries(outputs).map(([k, v]) => [
      k,
      (k.startsWith("report-") || k === "trace" || k === "attestation") && v !== "" ? resolve(work, v) : v,
    ]),
  );
  const argv = `${process.execPath} ${main}\n${readFileSync(files.argv, "utf8")}`;
  return {
    code,
    outputs: absolute,
    summary: readFileSync(files.summary, "utf8"),
    log,
    argv,
    runnerTemp: files.temp,
    work,
  };
}

let reference: ReferenceServer;
let counting: TestServer;
let keyed: ReferenceServer;
let guarded: TestServer;
let tlsServer: ReferenceServer;
const tls = selfSignedCert();
const API_KEY = "k3y-from-a-secret-7f1c";
const TOKEN = "Bearer t0ken-from-a-secret-91ab";

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0 });
  let n = 0;
  // Counts calls in its reply, and the count arrives inside Markdown that would otherwise render as a link.
  counting = await startGrpcJsServer(() =>
    Buffer.from(encodeMessage(`[call ${++n}](https://evil.example/) <img src=x>`)),
  );
  keyed = await startReferenceServer({ grpcPort: 0, httpPort: 0, apiKey: API_KEY });
  // Answers only a call that carries the token, as a server behind an authenticating gateway does.
  guarded = await startGrpcJsServer((_req, call) =>
    call.metadata.get("authorization")[0] === TOKEN
      ? Buffer.from(encodeMessage("hello"))
      : { code: 16, details: "no token" },
  );
  tlsServer = await startReferenceServer({
    grpcPort: 0,
    httpPort: 0,
    tls: { certFile: tls.certFile, keyFile: tls.keyFile },
  });
});
afterAll(async () => {
  await reference.close();
  await counting.close();
  await keyed.close();
  await guarded.close();
  await tlsServer.close();
});

describe("action.yml", () => {
  it("is a JavaScript action on node20 whose bundle is all it needs: no node_modules above the folder it runs from", () => {
    expect(action.runs).toEqual({ using: "node20", main: `${BUNDLE_FOLDER}/index.js` });
    expect(BUNDLE_FOLDER).not.toBe("dist");
    for (let dir = ACTION_DIR; dir !== dirname(dir); dir = dirname(dir))
      expect(existsSync(join(dir, "node_modules")), dir).toBe(false);
    expect(existsSync(join(dirname(dirname(ACTION_DIR)), "node_modules"))).toBe(false);
    // Every target of every protocol, and what a CI job keeps: the reports, the traces, the attestation.
    const needed = [
      "command",
      "config",
      "grpc",
      "connect",
      "grpc-web",
      "replica",
      "http",
      "http-replica",
      "collection",
      "openapi",
      "image",
      "grpc-port",
      "http-port",
      "api-key",
      "api-key-in",
      "metadata",
      "tls",
      "ca",
      "cert",
      "key",
      "authority",
      "only",
      "skip",
      "strict",
      "profile",
      "timeout",
      "expected-failures",
      "baseline",
      "fail-on",
      "require",
      "reports",
      "report-dir",
      "trace",
      "attestation",
      "signing-key",
      "contract",
      "base",
      "lint",
    ];
    expect(Object.keys(action.inputs)).toEqual(expect.arrayContaining(needed));
    expect(Object.keys(action.outputs)).toEqual([
      "verdict",
      "exit-code",
      "report-json",
      "report-junit",
      "report-html",
      "trace",
      "attestation",
    ]);
  });

  it("refuses a command it does not know in one line: exit 2, verdict usage-error", async () => {
    const run = await runAction({ command: "lint" });
    expect(run.code).toBe(2);
    expect(run.log.trim()).toBe("example-conformance: command lint: expected check or contract");
    expect(run.outputs).toEqual({ verdict: "usage-error", "exit-code": "2" });
    const formats = await runAction({ grpc: "127.0.0.1:9", reports: "json,pdf" });
    expect(formats.code).toBe(2);
    expect(formats.log.trim()).toBe("example-conformance: reports pdf: expected json, junit or html (comma-separated)");
  }, 60_000);

  it("documents every exit code and verdict of the one exit-code table in its outputs", () => {
    const descriptions = action as unknown as { outputs: Record<string, { description: string }> };
    for (const e of EXIT_CODE_TABLE)
      expect(descriptions.outputs.verdict?.description).toContain(`${e.action} (${e.code}`);
    const exitCode = descriptions.outputs["exit-code"]?.description ?? "";
    // "check 0, 1, 2, 3, 5 or 70 (...)": the codes of check, in the table's order, before the contract's.
    expect(exitCode.slice(0, exitCode.indexOf("(")).match(/\d+/g)?.map(Number)).toEqual(
      EXIT_CODE_TABLE.map((e) => e.code),
    );
  });

  it("passes metadata from a secret to a gRPC target that needs it, through the environment, never a command line", async () => {
    const without = await runAction({ grpc: guarded.address, only: "grpc.unary.*,grpc.defaults.*" });
    expect(without.code, without.log).toBe(5);
    // A selection is partial by design: accepted here, where what is tested is how the secret is passed.
    const run = await runAction({
      grpc: guarded.address,
      metadata: `authorization=${TOKEN}`,
      only: "grpc.unary.*,grpc.defaults.*",
      require: "partial",
    });
    expect(run.code, run.log).toBe(0);
    expect(run.outputs.verdict).toBe("partial");
    expectSecretKept(run, "t0ken-from-a-secret-91ab");
  }, 120_000);

  it("passes an API key from a secret to an HTTP target, through the environment, never a command line", async () => {
    const run = await runAction({
      http: keyed.httpUrl,
      "api-key": API_KEY,
      only: "http.auth.api-key,http.create.*,http.read.*",
      require: "partial",
    });
    expect(run.code, run.log).toBe(0);
    const report = JSON.parse(readFileSync(run.outputs["report-json"] as string, "utf8")) as RunReport;
    expect(report.checks.find((c) => c.id === "http.auth.api-key")?.status).toBe("pass");
    expectSecretKept(run, API_KEY);
    const without = await runAction({ http: keyed.httpUrl, only: "http.auth.api-key" });
    expect(without.code).toBe(5);
  }, 120_000);

  it("speaks TLS with a CA file, and passes skip and strict on", async () => {
    const run = await runAction({
      grpc: tlsServer.grpcAddress,
      tls: "true",
      ca: tls.certFile,
      authority: "localhost",
      skip: "grpc.limits.*,grpc.stateless.*,contract.*",
      strict: "true",
      only: "grpc.*",
      require: "partial",
    });
    expect(run.code, run.log).toBe(0);
    const report = JSON.parse(readFileSync(run.outputs["report-json"] as string, "utf8")) as RunReport;
    expect(report.target.tlsFingerprint).toMatch(/^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/i);
    expect(report.selection).toMatchObject({ strict: true, skip: ["grpc.limits.*", "grpc.stateless.*", "contract.*"] });
    // Without the CA the certificate is not trusted: nothing is judged.
    const untrusted = await runAction({ grpc: tlsServer.grpcAddress, tls: "true", only: "grpc.unary.*" });
    expect(untrusted.code).toBe(3);
  }, 120_000);

  it("reads a configuration file named by the config input: its target and selection", async () => {
    const config = `targets:\n  grpc: ${reference.grpcAddress}\nonly: [grpc.unary.single-response]\n`;
    const run = await runAction(
      { config: "ci/conformance.yaml", require: "partial" },
      { workspace: { "ci/conformance.yaml": config } },
    );
    expect(run.code, run.log).toBe(0);
    const report = JSON.parse(readFileSync(run.outputs["report-json"] as string, "utf8")) as RunReport;
    expect(report.target.grpc).toBe(reference.grpcAddress);
    expect(report.checks.filter((c) => c.status !== "skip").map((c) => c.id)).toEqual(["grpc.unary.single-response"]);
  }, 60_000);

  it("takes the base branch's report as a baseline: with fail-on new a known failure passes the step, a new one " +
    "fails it", async () => {
    const first = await runAction({ grpc: counting.address, only: "grpc.stateless.history-independent" });
    expect(first.code).toBe(1);
    const baseline = join(first.work, "base.json");
    cpSync(first.outputs["report-json"] as string, baseline);
    const known = await runAction({
      grpc: counting.address,
      only: "grpc.stateless.history-independent",
      baseline,
      "fail-on": "new",
    });
    expect(known.code, known.log).toBe(0);
    expect(known.outputs.verdict).toBe("not-conformant");
    expect(known.log).toMatch(/^still failing \(known\) \(1\):/m);
    const clean = await runAction({ grpc: reference.grpcAddress, only: "grpc.stateless.history-independent" });
    const fresh = await runAction({
      grpc: counting.address,
      only: "grpc.stateless.history-independent",
      baseline: clean.outputs["report-json"] as string,
      "fail-on": "new",
    });
    expect(fresh.code).toBe(1);
    expect(fresh.log).toMatch(/^newly failing \(1\):/m);
  }, 120_000);

  it("passes the reference server: verdict conformant, the reports written, a summary that says so", async () => {
    // One instance, as the workspace's configuration declares: without the claim the run is partial (no replica).
    const run = await runAction(
      { grpc: reference.grpcAddress, http: reference.httpUrl },
      { "example-conformance.yaml": "claims:\n  replicas: single\n" },
    );
    expect(run.code, run.log).toBe(0);
    expect(run.outputs.verdict).toBe("conformant");
    expect(run.outputs["exit-code"]).toBe("0");
    const report = JSON.parse(readFileSync(run.outputs["report-json"] as string, "utf8")) as RunReport;
    expect(report.exitCode).toBe(0);
    expect(readFileSync(run.outputs["report-junit"] as string, "utf8")).toMatch(/<testsuites/);
    expect(readFileSync(run.outputs["report-html"] as string, "utf8")).toMatch(/Conformant/);
    expect(run.summary).toMatch(/^### example-conformance: conformant$/m);
    expect(run.log).not.toContain("::warning title=example-conformance%3A partial");
    // Written once: by the action from the report, not also by the check's own github reporter.
    expect(run.summary.match(/### example-conformance/g)).toHaveLength(1);
  }, 120_000);

  it("fails the step on a partial run by default, with a warning naming the check not judged and why, and a summary " +
    "that says so", async () => {
    // Partial for want of a replica: the stateless checks alone, the one that needs --replica among them.
    const run = await runAction({ grpc: reference.grpcAddress, only: "grpc.stateless.*" });
    expect(run.code, run.log).toBe(1);
    expect(run.outputs.verdict).toBe("partial");
    // The CLI's code: the run itself is exit 0; the step failed for the verdict the action requires.
    expect(run.outputs["exit-code"]).toBe("0");
    expect(run.summary).toMatch(/^### example-conformance: partial$/m);
    const warning = run.log
      .split("\n")
      .find((l) => l.startsWith("::warning title=example-conformance%3A partial verdict::"));
    expect(warning, run.log).toBeDefined();
    expect(warning).toContain("the step fails (require: conformant)");
    expect(warning).toMatch(/%0Agrpc\.stateless\.replicas: needs --replica to judge: /);
    expect(run.summary).toContain(
      "**The step failed: the verdict is partial and `require: conformant` asks for every gating check judged.**",
    );
    expect(run.summary).toMatch(/^- `grpc\.stateless\.replicas`: needs /m);
  }, 120_000);

  it("passes a partial run with require: partial, still with the warning naming what was not judged", async () => {
    const run = await runAction({ grpc: reference.grpcAddress, require: "partial", only: "grpc.defaults.*" });
    expect(run.code, run.log).toBe(0);
    expect(run.outputs.verdict).toBe("partial");
    const warning = run.log
      .split("\n")
      .find((l) => l.startsWith("::warning title=example-conformance%3A partial verdict::"));
    expect(warning, run.log).toBeDefined();
    expect(warning).toContain("accepted (require: partial)");
    expect(warning).toMatch(/%0Acontract\.shape: not run: not in --only grpc\.defaults\.\*/);
    expect(run.summary).toContain("**Accepted as partial (`require: partial`): not every gating check was judged.**");
  }, 120_000);

  it("takes only conformant or partial as require: anything else is exit 2 in one line, before any call", async () => {
    const wrong = await runAction({ grpc: reference.grpcAddress, require: "mostly" });
    expect(wrong.code).toBe(2);
    expect(wrong.outputs.verdict).toBe("usage-error");
    expect(wrong.log.trim()).toBe("example-conformance: require mostly: expected conformant or partial");
  }, 120_000);

  it("fails the step on a server that counts calls, names the failed check in the summary, and keeps its text inert", async () => {
    const expectations = join(mkdtempSync(join(tmpdir(), "expect-")), "known.txt");
    writeFileSync(expectations, "grpc.stateless.deterministic # the count changes the reply by itself\n");
    const run = await runAction({
      grpc: counting.address,
      "expected-failures": expectations,
      only: "grpc.stateless.*",
    });
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
  ] as [Record<string, string>, RegExp][])(
    "passes %j on as flags, and a refusal is verdict usage-error",
    async (inputs, message) => {
      const run = await runAction(inputs);
      expect(run.code).toBe(2);
      expect(run.outputs.verdict).toBe("usage-error");
      expect(run.log).toMatch(message);
      expect(run.summary).toMatch(/^### example-conformance: usage-error$/m);
    },
    60_000,
  );

  it("writes the traces of a failing check and a signed attestation, the key from a secret through the environment, " +
    "and outputs their paths", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const run = await runAction({
      grpc: counting.address,
      only: "grpc.stateless.history-independent",
      trace: "traces",
      attestation: "out/run.intoto.json",
      "signing-key": pem,
      reports: "json",
    });
    expect(run.code, run.log).toBe(1);
    expect(run.outputs.trace).toBe(join(run.work, "traces"));
    expect(readdirSync(run.outputs.trace as string)).toEqual(["grpc.stateless.history-independent.grpc.txt"]);
    expect(run.outputs.attestation).toBe(join(run.work, "out", "run.intoto.json"));
    // Only the formats asked for: JSON alone.
    expect(run.outputs["report-junit"]).toBe("");
    expect(run.outputs["report-html"]).toBe("");
    const pub = join(run.work, "pub.pem");
    writeFileSync(pub, publicKey.export({ type: "spki", format: "pem" }));
    execFileSync(
      process.execPath,
      [join(ROOT, "bin", "example-conformance.js"), "verify", run.outputs.attestation as string, "--key", pub],
      { stdio: "pipe" },
    );
    const body = pem.split("\n")[1] as string;
    expectSecretKept(run, body);
    // The key's file lived for the run alone.
    expect(readdirSync(run.runnerTemp)).toEqual([]);
    // Without them, no trace and no attestation: empty outputs.
    const plain = await runAction({ grpc: reference.grpcAddress, only: "grpc.stateless.history-independent" });
    expect(plain.outputs.trace).toBe("");
    expect(plain.outputs.attestation).toBe("");
  }, 120_000);

  it("passes connect, grpc-web, replica and collection on as their flags: every RPC protocol compared, a replica " +
    "judged", async () => {
    const run = await runAction({
      grpc: reference.grpcAddress,
      connect: reference.httpUrl,
      "grpc-web": reference.httpUrl,
      replica: keyed.grpcAddress,
      http: reference.httpUrl,
      collection: "/messages",
      only: "rpc.cross-protocol.equivalent,grpc.stateless.replicas",
      require: "partial",
      reports: "json",
    });
    expect(run.code, run.log).toBe(0);
    const report = JSON.parse(readFileSync(run.outputs["report-json"] as string, "utf8")) as RunReport;
    const judged = Object.fromEntries(report.checks.filter((c) => c.status !== "skip").map((c) => [c.id, c.status]));
    expect(judged).toEqual({ "rpc.cross-protocol.equivalent": "pass", "grpc.stateless.replicas": "pass" });
    expect(report.checks.find((c) => c.id === "rpc.cross-protocol.equivalent")?.message).toMatch(/connect|Connect/);
  }, 120_000);

  it("with no target, checks the built-in reference server from the bundle alone (its .proto files of health and " +
    "reflection beside it)", async () => {
    const run = await runAction({
      only: "grpc.unary.single-response,contract.reflection-match",
      require: "partial",
      reports: "json",
    });
    expect(run.code, run.log).toBe(0);
    const report = JSON.parse(readFileSync(run.outputs["report-json"] as string, "utf8")) as RunReport;
    expect(report.checks.filter((c) => c.status !== "skip").map((c) => [c.id, c.status])).toEqual([
      ["grpc.unary.single-response", "pass"],
      ["contract.reflection-match", "pass"],
    ]);
  }, 60_000);

  it("says unreachable, with no report, for a target that is not there", async () => {
    const run = await runAction({ grpc: "127.0.0.1:9" });
    expect(run.code).toBe(3);
    expect(run.outputs.verdict).toBe("unreachable");
    expect(run.outputs["report-json"]).toBe("");
    expect(run.summary).toMatch(/^### example-conformance: unreachable$/m);
  }, 60_000);

  it("says cannot-check, exit 5, for an HTTP target that wants a key the run was not given", async () => {
    const server = await listen(
      http.createServer((_req, res) => res.writeHead(401, { "www-authenticate": "Bearer" }).end()),
    );
    try {
      const run = await runAction({ http: server.url });
      expect(run.code).toBe(5);
      expect(run.outputs.verdict).toBe("cannot-check");
      expect(run.outputs["exit-code"]).toBe("5");
      expect(run.log).toMatch(
        /cannot check: the target wants credentials \(GET \/messages → 401\): pass --api-key K or EXAMPLE_API_KEY, with --api-key-in bearer/,
      );
      expect(run.summary).toMatch(/^### example-conformance: cannot-check$/m);
    } finally {
      await server.close();
    }
  }, 60_000);
});

/** A pull request's checkout: the base branch main with the shipped contract, and a head commit that changes it. */
function pullRequest(change: (proto: string) => string): string {
  const repo = mkdtempSync(join(tmpdir(), "pr-"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: repo, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  mkdirSync(join(repo, "proto"));
  cpSync(join(ROOT, "proto", "example"), join(repo, "proto", "example"), { recursive: true });
  git("add", "-A");
  git("commit", "-q", "-m", "base");
  git("checkout", "-q", "-b", "change");
  const file = join(repo, "proto", "example", "example.proto");
  const changed = change(readFileSync(file, "utf8"));
  writeFileSync(file, changed);
  git("commit", "-q", "--allow-empty", "-am", "change");
  return repo;
}

describe("action.yml, command: contract", () => {
  it("fails on a breaking change with an annotation on the changed line, and says so in the summary", async () => {
    const repo = pullRequest((p) => p.replace("  string body = 1;", "  bytes body = 1;"));
    const line =
      readFileSync(join(repo, "proto", "example", "example.proto"), "utf8")
        .split("\n")
        .indexOf("  bytes body = 1;") + 1;
    const run = await runAction({ command: "contract" }, { cwd: repo, env: { GITHUB_BASE_REF: "main" } });
    expect(run.code, run.log).toBe(1);
    expect(run.outputs.verdict).toBe("breaking");
    expect(run.outputs["exit-code"]).toBe("1");
    expect(run.log).toMatch(
      new RegExp(
        `^::error file=proto/example/example\\.proto,line=${line},col=\\d+,title=breaking FIELD_SAME_TYPE::.*body`,
        "m",
      ),
    );
    expect(run.summary).toMatch(/^### example-conformance contract: breaking$/m);
    expect(run.summary).toMatch(/\| breaking \| proto\/example\/example\\\.proto:\d+ \| FIELD\\_SAME\\_TYPE \|/);
  }, 120_000);

  it("passes a change that breaks nothing (a new field): exit 0, verdict compatible, no annotation", async () => {
    const repo = pullRequest((p) => p.replace("  string body = 1;", "  string body = 1;\n  string note = 2;"));
    const run = await runAction({ command: "contract" }, { cwd: repo, env: { GITHUB_BASE_REF: "main" } });
    expect(run.code, run.log).toBe(0);
    expect(run.outputs.verdict).toBe("compatible");
    expect(run.log).not.toMatch(/^::/m);
    expect(run.summary).toMatch(/^0 breaking change\(s\), 0 lint finding\(s\)$/m);
  }, 120_000);

  /** The runner's environment for a push: the event's name, and its payload in a file, `before` among it. */
  function pushEvent(before: string): Record<string, string> {
    const file = join(mkdtempSync(join(tmpdir(), "event-")), "event.json");
    writeFileSync(file, JSON.stringify({ ref: "refs/heads/change", before, after: "f".repeat(40) }));
    return { GITHUB_EVENT_NAME: "push", GITHUB_EVENT_PATH: file };
  }
  const commitOf = (repo: string, ref: string) =>
    execFileSync("git", ["rev-parse", ref], { cwd: repo, encoding: "utf8" }).trim();

  it("on a push (no base ref), compares with the commit before it, github.event.before: a breaking change fails it", async () => {
    const repo = pullRequest((p) => p.replace("  string body = 1;", "  bytes body = 1;"));
    const before = commitOf(repo, "main");
    const run = await runAction({ command: "contract" }, { cwd: repo, env: pushEvent(before) });
    expect(run.code, run.log).toBe(1);
    expect(run.outputs.verdict).toBe("breaking");
    expect(run.log).toMatch(
      /^::error file=proto\/example\/example\.proto,line=\d+,col=\d+,title=breaking FIELD_SAME_TYPE::/m,
    );
    expect(run.summary).toContain(`Compared with ${before.slice(0, 12)}, the commit before this push.`);
  }, 120_000);

  it("on a push from a shallow checkout (actions/checkout's default), fetches the commit before and compares with it", async () => {
    const origin = pullRequest((p) => p.replace("  string body = 1;", "  int32 body = 1;"));
    const before = commitOf(origin, "main");
    const clone = mkdtempSync(join(tmpdir(), "shallow-"));
    execFileSync("git", ["clone", "-q", "--depth", "1", "--branch", "change", `file://${origin}`, clone], {
      stdio: "pipe",
    });
    expect(() =>
      execFileSync("git", ["cat-file", "-e", `${before}^{commit}`], { cwd: clone, stdio: "pipe" }),
    ).toThrow();
    const run = await runAction({ command: "contract" }, { cwd: clone, env: pushEvent(before) });
    expect(run.code, run.log).toBe(1);
    expect(run.outputs.verdict).toBe("breaking");
    expect(run.log).toMatch(/^::error file=proto\/example\/example\.proto,line=8,/m);
  }, 120_000);

  it("on the first push of a branch (before is 000…), or when the commit before is gone, says plainly that it could " +
    "not compare", async () => {
    const repo = pullRequest((p) => p.replace("  string body = 1;", "  bytes body = 1;"));
    const first = await runAction({ command: "contract" }, { cwd: repo, env: pushEvent("0".repeat(40)) });
    expect(first.code, first.log).toBe(0);
    expect(first.outputs.verdict).toBe("compatible");
    expect(first.log).toMatch(
      /^::warning title=example-conformance contract%3A breaking not checked::this push created the branch: there is no commit before it to compare with$/m,
    );
    expect(first.summary).toMatch(/breaking not checked: this push created the branch/);
    // A force push: the commit before is in neither the checkout nor the remote.
    const gone = await runAction(
      { command: "contract" },
      { cwd: repo, env: pushEvent("1234567890ab".padEnd(40, "0")) },
    );
    expect(gone.code, gone.log).toBe(0);
    expect(gone.log).toMatch(
      /^::warning title=example-conformance contract%3A breaking not checked::the commit before this push, 1234567890ab, is neither in this checkout nor on the remote/m,
    );
    expect(gone.summary).toMatch(/breaking not checked: the commit before this push, 1234567890ab/);
  }, 120_000);

  it("fails on a deleted .proto file (FILE_NO_DELETE, in no file): annotated on the job, named in the summary", async () => {
    const repo = pullRequest((p) => p);
    execFileSync(
      "git",
      [
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "mv",
        "proto/example/example.proto",
        "proto/example/renamed.proto",
      ],
      { cwd: repo, stdio: "pipe" },
    );
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "rename"], {
      cwd: repo,
      stdio: "pipe",
    });
    const run = await runAction({ command: "contract" }, { cwd: repo, env: { GITHUB_BASE_REF: "main" } });
    expect(run.code, run.log).toBe(1);
    expect(run.outputs.verdict).toBe("breaking");
    expect(run.log).toMatch(
      /^::error title=breaking FILE_NO_DELETE::Previously present file "example\/example\.proto" was deleted/m,
    );
    expect(run.summary).toMatch(/\| breaking \| proto \| FILE\\_NO\\_DELETE \|/);
  }, 120_000);

  it("without buf on PATH (no bufbuild/buf-action step), fails in one line saying what to add, exit 2", async () => {
    const repo = pullRequest((p) => p);
    const run = await runAction({ command: "contract" }, { cwd: repo, env: { GITHUB_BASE_REF: "main" }, buf: false });
    expect(run.code, run.log).toBe(2);
    expect(run.outputs.verdict).toBe("usage-error");
    expect(run.log.trim()).toBe(
      "example-conformance: buf is not installed: add bufbuild/buf-action with setup_only: true before this step " +
        "(or put buf on PATH)",
    );
    // A check that runs contract.lint needs it too, and says so the same way.
    const check = await runAction({ grpc: reference.grpcAddress, only: "contract.lint" }, { buf: false });
    expect(check.code, check.log).toBe(2);
    expect(check.outputs.verdict).toBe("usage-error");
    expect(check.log).toMatch(
      /^example-conformance: buf is not installed: add bufbuild\/buf-action with setup_only: true before this step/m,
    );
  }, 60_000);

  it("refuses a base that is not in the checkout, in one line, exit 2", async () => {
    const repo = pullRequest((p) => p);
    const run = await runAction({ command: "contract", base: "nope" }, { cwd: repo });
    expect(run.code).toBe(2);
    expect(run.outputs.verdict).toBe("usage-error");
    expect(run.log).toMatch(
      /^example-conformance: base nope: no such branch or commit in this checkout \(fetch it: actions\/checkout with fetch-depth: 0\)$/m,
    );
  }, 60_000);
});

interface WorkflowStep extends Step {
  with?: Record<string, unknown>;
}

describe("docs/ci examples, run as written", () => {
  const workflow = parse(readFileSync(join(ROOT, "docs", "ci", "github-actions.yml"), "utf8")) as {
    on: Record<string, unknown>;
    jobs: Record<string, { steps: WorkflowStep[] }>;
  };
  const signingKey = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const secrets: Record<string, string> = {
    EXAMPLE_API_KEY: API_KEY,
    EXAMPLE_METADATA: "authorization=Bearer any",
    EXAMPLE_SIGNING_KEY: signingKey,
  };

  /**
   * The step's `with`, its expressions as the runner fills them (secrets from the test's store), addresses to the
   * test's server.
   */
  function withInputs(step: WorkflowStep, addresses: Record<string, string>): Record<string, string> {
    return Object.fromEntries(
      Object.entries(step.with ?? {}).map(([k, v]) => {
        let value = String(v).replace(/\$\{\{\s*secrets\.(\w+)\s*\}\}/g, (_, name: string) => secrets[name] ?? "");
        expect(value, `an expression the test does not know in ${k}`).not.toMatch(/\$\{\{/);
        for (const [from, to] of Object.entries(addresses)) value = value.split(from).join(to);
        return [k, value];
      }),
    );
  }

  /** Runs a job's steps: the runner's own actions and the implementation's start are the runner's and the test's. */
  async function runJob(name: string, addresses: Record<string, string>, options: RunOptions = {}): Promise<ActionRun> {
    const steps = workflow.jobs[name]?.steps ?? [];
    const checkout = steps.find((s) => s.uses?.startsWith("actions/checkout") && s.with?.path !== undefined);
    const local = steps.filter((s) => s.uses?.startsWith("./"));
    expect(local).toHaveLength(1);
    // The action is used from where the job checked this repository out, as `uses: ./PATH` reads it.
    expect(local[0]?.uses).toBe(`./${String(checkout?.with?.path)}`);
    // buf on PATH is what the test's runs have (TOOLS), as bufbuild/buf-action with setup_only leaves it.
    const buf = steps.find((s) => s.uses?.startsWith("bufbuild/buf-action@"));
    expect(buf?.with?.setup_only).toBe(true);
    for (const s of steps)
      expect(
        s.uses === undefined ||
          s.uses.startsWith("actions/") ||
          s.uses.startsWith("./") ||
          s === buf ||
          s.name === "Start the implementation",
        JSON.stringify(s),
      ).toBe(true);
    return runAction(withInputs(local[0] as WorkflowStep, addresses), options);
  }

  it("GitHub, the conformance job: the action checks the implementation with its secrets, and the reports are the " +
    "ones uploaded", async () => {
    expect(Object.keys(workflow.on)).toEqual(["pull_request"]);
    const run = await runJob("conformance", {
      "127.0.0.1:50051": keyed.grpcAddress,
      "http://127.0.0.1:8080": keyed.httpUrl,
    });
    // One instance: partial, accepted by the example's require: partial, with the warning that says what was not
    // judged.
    expect(run.code, run.log).toBe(0);
    expect(run.outputs.verdict).toBe("partial");
    expect(run.log).toMatch(
      /^::warning title=example-conformance%3A partial verdict::.*accepted \(require: partial\)/m,
    );
    expect(run.outputs["report-json"]).toBe(join(run.work, "reports", "conformance.json"));
    expectSecretKept(run, API_KEY);
    expectSecretKept(run, signingKey.split("\n")[1] as string);
    const steps = workflow.jobs.conformance?.steps ?? [];
    const upload = steps.find((s) => (s.uses ?? "").startsWith("actions/upload-artifact"));
    const reportDir = String(steps.find((s) => s.uses === "./.example-conformance")?.with?.["report-dir"]);
    expect(upload?.with?.path).toBe(`${reportDir}/`);
    // The attestation is written inside what is uploaded, and the trace folder would be (no check failed: none).
    expect(run.outputs.attestation).toBe(join(run.work, reportDir, "conformance.intoto.json"));
    expect(existsSync(run.outputs.attestation as string)).toBe(true);
    expect(String(steps.find((s) => s.uses === "./.example-conformance")?.with?.trace)).toMatch(
      new RegExp(`^${reportDir}/`),
    );
  }, 180_000);

  it("GitHub, the contract job: a breaking change on the pull request fails it with an annotation", async () => {
    const checkout = workflow.jobs.contract?.steps[0];
    expect(checkout?.with?.["fetch-depth"]).toBe(0);
    const repo = pullRequest((p) => p.replace("  string body = 1;", "  int32 body = 1;"));
    const run = await runJob("contract", {}, { cwd: repo, env: { GITHUB_BASE_REF: "main" } });
    expect(run.code, run.log).toBe(1);
    expect(run.log).toMatch(/^::error file=proto\/example\/example\.proto,line=8,/m);
  }, 120_000);

  it("GitLab: the job's script, in the image's PATH (example-conformance), checks the service and writes the JUnit " +
    "report", async () => {
    const pipeline = parse(readFileSync(join(ROOT, "docs", "ci", "gitlab-ci.yml"), "utf8")) as Record<
      string,
      { image: { entrypoint: string[] }; script: string[]; artifacts: { reports: { junit: string } } }
    >;
    const job = pipeline.conformance;
    expect(job?.image.entrypoint).toEqual([""]);
    // The image the repository's Dockerfile builds puts the command on PATH (it cannot be built here: no registry).
    expect(readFileSync(join(ROOT, "Dockerfile"), "utf8")).toMatch(
      /ln -s \/app\/bin\/example-conformance\.js \/usr\/local\/bin\/example-conformance/,
    );
    const bin = mkdtempSync(join(tmpdir(), "image-path-"));
    execFileSync("ln", ["-s", join(ROOT, "bin", "example-conformance.js"), join(bin, "example-conformance")]);
    const work = mkdtempSync(join(tmpdir(), "gitlab-"));
    const script = (job?.script ?? [])
      .join("\n")
      .split("impl:50051")
      .join(keyed.grpcAddress)
      .split("http://impl:8080")
      .join(keyed.httpUrl);
    const result = await new Promise<{ code: number; out: string }>((done) => {
      const child = spawn("bash", ["-eo", "pipefail", "-c", script], {
        cwd: work,
        env: { PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: work, ...secrets },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
      child.on("close", (c) => done({ code: c ?? 1, out }));
    });
    expect(result.code, result.out).toBe(0);
    expect(result.out).toMatch(/partial/);
    expect(readFileSync(join(work, job?.artifacts.reports.junit ?? ""), "utf8")).toMatch(/<testsuites/);
  }, 180_000);
});
