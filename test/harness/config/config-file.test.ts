// --config: the file under the flags, validated with errors that name the line and the key; claims shown as
// declared; expected failures that expire or no longer fail fail the run.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../../contract/message.js";
import type { RunReport } from "../../../harness/report.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { cli } from "../../helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";

const dir = mkdtempSync(join(tmpdir(), "config-"));
let n = 0;
const file = (text: string) => {
  const path = join(dir, `c${++n}.yaml`);
  writeFileSync(path, text);
  return path;
};

let reference: ReferenceServer;
let grpcJs: TestServer;
beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" });
  grpcJs = await startGrpcJsServer((req) => {
    const d = decodeMessage(req);
    return d.ok ? Buffer.from(encodeMessage(`hi ${d.message.body}`)) : { code: 13, details: d.reason };
  });
});
afterAll(async () => {
  await Promise.all([reference?.close(), grpcJs?.close()]);
});

describe("a configuration file", () => {
  it("with claims: {replicas: single}, the reference is conformant and every report shows the claim as declared", async () => {
    const config = file(
      `implementation:\n  name: reference\n  version: 1.2.3\ntargets:\n  grpc: ` +
        `${reference.grpcAddress}\nclaims:\n  replicas: single\n`,
    );
    const json = join(dir, "claimed.json");
    const html = join(dir, "claimed.html");
    const run = await cli([
      "check",
      "--config",
      config,
      "--seed",
      "3",
      "--runs",
      "10",
      "--report-json",
      json,
      "--report-html",
      html,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toMatch(/^conformant: /);
    expect(run.stdout).toMatch(
      /^not applicable by claim replicas: single \(declared, not judged\): grpc\.stateless\.replicas$/m,
    );
    expect(run.stdout).toMatch(/^certifies: implementation reference 1\.2\.3$/m);
    const report = JSON.parse(readFileSync(json, "utf8")) as RunReport;
    expect(report).toMatchObject({
      verdict: "conformant",
      claims: ["replicas: single"],
      implementation: { name: "reference", version: "1.2.3" },
      target: { grpc: reference.grpcAddress },
    });
    expect(report.unjudged).toContainEqual(
      expect.objectContaining({ id: "grpc.stateless.replicas", why: "claimed", claim: "replicas: single" }),
    );
    expect(readFileSync(html, "utf8")).toMatch(
      /not applicable by claim \(claim <code>replicas: single<\/code>, declared, not judged\)/,
    );
  }, 60_000);

  it("is overridden by a flag: --grpc replaces the file's target", async () => {
    const config = file(`targets:\n  grpc: 127.0.0.1:1\n`);
    const run = await cli([
      "check",
      "--config",
      config,
      "--grpc",
      grpcJs.address,
      "--only",
      "grpc.defaults.decodes",
      "--seed",
      "1",
    ]);
    expect(run.code, run.stderr).toBe(0);
  });

  it("is ./example-conformance.yaml when --config is not given", async () => {
    const here = mkdtempSync(join(tmpdir(), "config-cwd-"));
    writeFileSync(
      join(here, "example-conformance.yaml"),
      `targets:\n  grpc: ${grpcJs.address}\nonly: [grpc.defaults.decodes]\n`,
    );
    const { spawn } = await import("node:child_process");
    const { PACKAGE_ROOT } = await import("../../../contract/paths.js");
    const out = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [join(PACKAGE_ROOT, "bin", "example-conformance.js"), "check", "--seed", "1"],
        { cwd: here, env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      const backstop = setTimeout(() => child.kill("SIGKILL"), 60_000);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(backstop);
        resolve({ code, stdout });
      });
    });
    expect(out.code).toBe(0);
    // The file's target and selection, not the built-in reference server.
    expect(out.stdout).toMatch(
      new RegExp(`^example-conformance: 1 checks against grpc ${grpcJs.address.replace(/\./g, "\\.")},`, "m"),
    );
  }, 60_000);

  it("names the line and the key of what is wrong, exit 2", async () => {
    const unknown = await cli(["check", "--config", file(`implementation:\n  name: x\ntragets:\n  grpc: a:1\n`)]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^example-conformance: .*c\d+\.yaml:3: tragets: is not a key of the configuration/);
    const bad = await cli(["check", "--config", file(`targets:\n  grpc: a:1\nclaims:\n  replicas: many\n`)]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/c\d+\.yaml:4: claims\.replicas: must be one of single\n$/);
    const typed = await cli(["check", "--config", file(`strict: yes please\n`)]);
    expect(typed.stderr).toMatch(/c\d+\.yaml:1: strict: must be boolean\n$/);
    const yaml = await cli(["check", "--config", file(`targets: [\n`)]);
    expect(yaml.code).toBe(2);
    expect(yaml.stderr).toMatch(/c\d+\.yaml:\d+: not valid YAML: /);
    expect(`${unknown.stderr}${bad.stderr}${yaml.stderr}`).not.toMatch(/\n\s+at /);
  });

  it("names the line of the first YAML error, exit 2: a duplicate key, an alias with no anchor, a second document", async () => {
    const duplicate = await cli(["check", "--config", file(`targets:\n  grpc: a:1\n  grpc: b:2\n`)]);
    expect(duplicate.code).toBe(2);
    expect(duplicate.stderr).toMatch(
      /^example-conformance: .*c\d+\.yaml:3: not valid YAML: Map keys must be unique\n$/,
    );
    // An exit 70 (internal error) before the configuration was read with bounds.
    const alias = await cli(["check", "--config", file(`implementation:\n  name: x\n  version: *v\n`)]);
    expect(alias.code).toBe(2);
    expect(alias.stderr).toMatch(
      /^example-conformance: .*c\d+\.yaml:3: not valid YAML: alias \*v has no anchor &v before it\n$/,
    );
    const documents = await cli(["check", "--config", file(`strict: true\n---\nstrict: [\n`)]);
    expect(documents.code).toBe(2);
    expect(documents.stderr).toMatch(
      /^example-conformance: .*c\d+\.yaml:2: not valid YAML: more than one document \(a configuration is one\)\n$/,
    );
  });

  it("names credentials by environment variable: an unset one is a config error naming it, never a value", async () => {
    const config = file(`targets:\n  http: http://127.0.0.1:2\ncredentials:\n  api-key-env: MY_SERVICE_KEY\n`);
    const run = await cli(["check", "--config", config]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/credentials\.api-key-env names MY_SERVICE_KEY, which is not set in the environment\n$/);
    const schema = await cli(["check", "--config", file(`credentials:\n  api-key-env: "s3cret value!"\n`)]);
    expect(schema.code).toBe(2);
    expect(schema.stderr).toMatch(/:2: credentials\.api-key-env: must match pattern/);
  });
});

describe("expected failures in the configuration file", () => {
  // grpc-js serves the compressed flag without an encoding: grpc.encoding.flag-without-encoding fails (not gating).
  const FLAG = "grpc.encoding.flag-without-encoding";
  const run = (entries: string, only: string) =>
    cli([
      "check",
      "--config",
      file(`targets:\n  grpc: ${grpcJs.address}\nexpected-failures:\n${entries}`),
      "--only",
      only,
      "--seed",
      "2",
      "--report-json",
      join(dir, `x${n}.json`),
    ]);

  it("waive a failure with their reason until they expire", async () => {
    const r = await run(`  - check: ${FLAG}\n    reason: grpc-js accepts it\n    expires: 2999-01-01\n`, FLAG);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(
      /^waived: grpc\.encoding\.flag-without-encoding \(grpc\.encoding\.flag-without-encoding\): grpc-js accepts it$/m,
    );
  });

  it("fail the run once expired", async () => {
    const r = await run(`  - check: ${FLAG}\n    reason: grpc-js accepts it\n    expires: 2020-01-01\n`, FLAG);
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toMatch(/^FAIL grpc\.encoding\.flag-without-encoding /m);
    expect(r.stdout).toMatch(/c\d+\.yaml:4 \(grpc\.encoding\.flag-without-encoding\) expired on 2020-01-01/);
  });

  it("fail the run when the check no longer fails", async () => {
    const r = await run(`  - check: grpc.defaults.decodes\n    reason: listed by mistake\n`, "grpc.defaults.decodes");
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toMatch(/but passed: remove it from the list/);
  });

  it("refuse a pattern that matches no check, naming its line", async () => {
    const r = await run(`  - check: grpc.nothing.here\n    reason: typo\n`, FLAG);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/c\d+\.yaml:4: expected-failures: grpc\.nothing\.here matches no check/);
  });
});
