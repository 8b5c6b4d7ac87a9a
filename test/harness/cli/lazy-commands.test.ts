// A command loads its own modules and not the others': `lint` and `serve` never load the checks, `--version` loads
// no command. Seen in a child process through node's module hooks, which log every module it loads.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../contract/paths.js";

/** The package's own modules (paths under dist/) that the CLI loads for these arguments. */
function modulesLoadedFor(args: string[]): string[] {
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
  const dist = `file://${join(PACKAGE_ROOT, "dist")}/`;
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((u) => u.startsWith(dist))
    .map((u) => u.slice(dist.length));
}

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
