// A command loads its own modules and not the others': `lint` and `serve` never load the checks, `--version` loads
// no command. Seen in a child process through node's module hooks, which log every module it loads.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../common/paths.js";

/**
 * Every module (its URL) that the CLI loads for these arguments through ES module resolution, in its main thread, or
 * in its worker threads with `thread` "worker".
 */
function urlsLoadedFor(args: string[], thread: "main" | "worker" = "main"): string[] {
  const log = join(mkdtempSync(join(tmpdir(), "lazy-commands-")), "loaded.txt");
  // Each thread registers the hooks anew (a worker runs the --import preload too), told which thread it is.
  const hooks =
    `import { appendFileSync } from "node:fs"; let thread; export function initialize(d) { thread = d.thread; } ` +
    `export async function resolve(s, c, next) { const r = await next(s, c); ` +
    `appendFileSync(${JSON.stringify(log)}, thread + " " + r.url + "\\n"); return r; }`;
  const register =
    `import { register } from "node:module"; import { isMainThread } from "node:worker_threads"; ` +
    `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)}, ` +
    `{ data: { thread: isMainThread ? "main" : "worker" } });`;
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
      timeout: 60_000,
    },
  );
  expect(run.status, run.stderr).toBe(0);
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${thread} `))
    .map((line) => line.slice(thread.length + 1));
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
    expect(loaded).toContain("suites/index.js");
    // Listing runs nothing: the engine is loaded only by a run.
    expect(loaded).not.toContain("harness/runner.js");
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

  it("check given no target begins the built-in reference's start before it loads the checks and the engine", () => {
    const main = ownModules(urlsLoadedFor(["check", "--only", "contract.lint", "--quiet"]));
    // The command's own module loads neither the checks nor the engine: they load as it runs, after the server.
    const started = main.indexOf("reference-server/start.js");
    expect(started).toBeGreaterThan(main.indexOf("harness/cli/check-command.js"));
    for (const later of ["suites/index.js", "harness/runner.js"]) expect(main.indexOf(later)).toBeGreaterThan(started);
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
