// A command loads its own modules and not the others': `lint` and `serve` never load the checks, `--version` loads
// no command. Seen in a child process through node's module hooks, which log every module it loads.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../common/paths.js";

/** Every module (its URL) that the CLI loads for these arguments through ES module resolution. */
function urlsLoadedFor(args: string[]): string[] {
  const log = join(mkdtempSync(join(tmpdir(), "lazy-commands-")), "loaded.txt");
  const hooks =
    `import { appendFileSync } from "node:fs"; export async function resolve(s, c, next) { const r = await next(s, ` +
    `c); appendFileSync(${JSON.stringify(log)}, r.url + "\\n"); return r; }`;
  const register =
    `import { register } from "node:module"; ` +
    `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  const run = spawnSync(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(register)}`,
      join(PACKAGE_ROOT, "bin", "example-conformance.js"),
      ...args,
    ],
    {
      encoding: "utf8",
      timeout: 30_000,
    },
  );
  expect(run.status, run.stderr).toBe(0);
  return readFileSync(log, "utf8").split("\n");
}

/** The package's own modules (paths under dist/) among them. */
function ownModules(urls: string[]): string[] {
  const dist = `file://${join(PACKAGE_ROOT, "dist")}/`;
  return urls.filter((u) => u.startsWith(dist)).map((u) => u.slice(dist.length));
}

const modulesLoadedFor = (args: string[]): string[] => ownModules(urlsLoadedFor(args));

describe("the CLI loads only the command it runs", () => {
  it("lint --help loads neither the checks, the runner nor the reference server", () => {
    const loaded = modulesLoadedFor(["lint", "--help"]);
    expect(loaded).toContain("harness/cli/contract-commands.js");
    expect(
      loaded.filter((m) => m.startsWith("suites/") || m.startsWith("reference-server/") || m === "harness/runner.js"),
    ).toEqual([]);
  });

  it("serve --help loads no check and not the runner", () => {
    const loaded = modulesLoadedFor(["serve", "--help"]);
    expect(loaded).toContain("harness/cli/serve-command.js");
    expect(
      loaded.filter(
        (m) => m.startsWith("suites/") || m === "harness/runner.js" || m === "harness/cli/check-command.js",
      ),
    ).toEqual([]);
  });

  it("check loads no module of what it was not asked for: client checks, signing, baseline, trace, TLS, ajv", () => {
    const urls = urlsLoadedFor(["check", "--list"]);
    // The golden case format is checked by the build's standalone validator: ajv is neither loaded nor compiling.
    expect(urls.filter((u) => u.includes("/node_modules/ajv/"))).toEqual([]);
    const loaded = ownModules(urls);
    expect(loaded).toContain("harness/cli/check-command.js");
    expect(loaded).toContain("harness/runner.js");
    // Each feature's own entry (what it shares with a plain run, such as the protocols' recording sides, may load).
    const entries = [
      "harness/client-check/run-scenario.js",
      "harness/attest/attestation.js",
      "harness/attest/dsse.js",
      "harness/attest/tls-fingerprint.js",
      "harness/diff/baseline-gate.js",
      "harness/trace/trace-writer.js",
    ];
    expect(loaded.filter((m) => m.startsWith("suites/client/") || entries.includes(m))).toEqual([]);
  });

  it("--version loads no command, and --help every one", () => {
    expect(
      modulesLoadedFor(["--version"]).filter((m) => m.startsWith("harness/cli/") && m.endsWith("-command.js")),
    ).toEqual([]);
    const all = modulesLoadedFor(["--help"]);
    for (const m of [
      "check-command",
      "check-client-command",
      "serve-command",
      "load-command",
      "verify-command",
      "diff-command",
    ]) {
      expect(all).toContain(`harness/cli/${m}.js`);
    }
  });
});
