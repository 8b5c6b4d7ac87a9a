// `example-conformance lint` and `breaking`: exit codes, messages and formats as a user meets them.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { lintContract } from "../../../harness/buf/buf.js";
import { CONTRACTS_DIR } from "../../../fixtures/contracts/index.js";
import { PACKAGE_ROOT } from "../../../common/paths.js";
import { cli } from "../../helpers/cli.js";

describe("example-conformance lint", () => {
  it("exits 0 on the shipped contract", async () => {
    expect(await cli(["lint"])).toMatchObject({ code: 0, stdout: "" });
  });

  // One run for both: the same command line.
  it(
    "exits 1 and names GO_PACKAGE_DEFINED with file:line on a copy without go_package, with the rule's ID in the " +
      "text format, which an ignore comment or except entry needs",
    async () => {
      const run = await cli(["lint", join(CONTRACTS_DIR, "no-go-package")]);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/example\/example\.proto:3:1:.*go_package/);
      expect(run.stdout).toMatch(
        /^.*example\/example\.proto:3:1:\[GO_PACKAGE_DEFINED\] .*go_package.*\(buf-plugin-example\)$/m,
      );
    },
  );

  it("writes config-ignore-yaml in the configuration's version (v2, as the shipped buf.yaml), which silences every " +
    "finding when merged", async () => {
    const run = await cli(["lint", join(CONTRACTS_DIR, "no-go-package"), "--format", "config-ignore-yaml"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^version: v2$/m);
    expect(run.stdout).toMatch(/ignore_only:\n\s+GO_PACKAGE_DEFINED:\n\s+- example\/example\.proto/);
    // Merged into the contract's own buf.yaml, as a user would: lint is then clean.
    const dir = mkdtempSync(join(tmpdir(), "ignore-yaml-"));
    cpSync(join(CONTRACTS_DIR, "no-go-package"), dir, { recursive: true });
    const config = parse(readFileSync(join(dir, "buf.yaml"), "utf8")) as { lint: Record<string, unknown> };
    config.lint.ignore_only = (parse(run.stdout) as { lint: { ignore_only: unknown } }).lint.ignore_only;
    writeFileSync(join(dir, "buf.yaml"), stringify(config));
    expect(await cli(["lint", dir])).toMatchObject({ code: 0 });
    // Two buf runs, each building its plugin's process: a bound for a loaded machine, not a measure.
  }, 180_000);

  it("returns every finding as data from code, whatever the format", async () => {
    // junit: a format buf writes itself, so the findings come from a run of their own (the shipped contract's
    // empty findings are test/harness/buf/buf.test.ts's).
    const run = await lintContract({ dir: join(CONTRACTS_DIR, "no-go-package"), format: "junit" });
    expect(run.output).toMatch(/<testsuites/);
    expect(run.findings).toEqual([
      expect.objectContaining({ path: "example/example.proto", line: 3, column: 1, rule: "GO_PACKAGE_DEFINED" }),
    ]);
  });

  it("carries file and line in the github-actions format", async () => {
    const run = await cli(["lint", join(CONTRACTS_DIR, "no-go-package"), "--format", "github-actions"]);
    expect(run.stdout).toMatch(/^::error file=[^,]*example\/example\.proto,line=3,col=1,/m);
  });

  it("writes JSON with --format json", async () => {
    const run = await cli(["lint", join(CONTRACTS_DIR, "no-go-package"), "--format", "json"]);
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ type: "GO_PACKAGE_DEFINED", start_line: 3 });
  });

  it("exits 2 with one line for a folder that does not exist", async () => {
    const run = await cli(["lint", "/nonexistent/contract"]);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: "example-conformance: contract /nonexistent/contract: no such directory\n",
    });
  });

  it("exits 2 with one line for a format it does not know", async () => {
    const run = await cli(["lint", "--format", "xml"]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(
      /--format.*xml.*text, json, junit, github-actions, msvs, gitlab-code-quality, config-ignore-yaml/,
    );
  });
});

describe("example-conformance breaking", () => {
  it("exits 1 for a renumbered field and names the rule", async () => {
    const run = await cli([
      "breaking",
      join(CONTRACTS_DIR, "body-renumbered"),
      "--against",
      "proto",
      "--format",
      "json",
    ]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ type: "FIELD_NO_DELETE" });
  });

  it("shows the rule's ID and the fix, reserving the old number and name, in the text format", async () => {
    const run = await cli(["breaking", join(CONTRACTS_DIR, "body-renumbered"), "--against", "proto"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/example\.proto:7:1:\[FIELD_NO_DELETE\] Previously present field "1" with name "body"/);
    expect(run.stdout).toMatch(/^ {2}fix: .*`reserved 1;` and `reserved "body";`$/m);
  });

  it("gives the same fix for a field removed outright, and file and line in the github-actions format", async () => {
    const dir = mkdtempSync(join(tmpdir(), "body-removed-"));
    mkdirSync(join(dir, "example"));
    const proto = readFileSync(join("proto", "example", "example.proto"), "utf8");
    const removed = proto.replace(/^\s*string body = 1;\n/m, "");
    expect(removed).not.toBe(proto);
    writeFileSync(join(dir, "example", "example.proto"), removed);
    const run = await cli(["breaking", dir, "--against", "proto"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /example\.proto:\d+:\d+:\[FIELD_NO_DELETE\] Previously present field "1" with name "body"/,
    );
    expect(run.stdout).toMatch(/^ {2}fix: .*`reserved 1;` and `reserved "body";`$/m);
    const annotations = await cli(["breaking", dir, "--against", "proto", "--format", "github-actions"]);
    expect(annotations.stdout).toMatch(
      /^::error file=[^,]*example\/example\.proto,line=\d+,col=\d+,.*field "1" with name "body"/m,
    );
  });

  it("refuses config-ignore-yaml, which buf writes for lint only", async () => {
    const run = await cli(["breaking", join(CONTRACTS_DIR, "body-renumbered"), "--format", "config-ignore-yaml"]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("exits 0 for the shipped contract against itself", async () => {
    expect((await cli(["breaking", "proto"])).code).toBe(0);
  });

  it("exits 2 when the changed folder is missing", async () => {
    const run = await cli(["breaking"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/missing required argument 'dir'/);
  });
});

/** The CLI as a plain CI step runs it: its own process, started in `cwd`. */
function cliIn(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(PACKAGE_ROOT, "bin", "example-conformance.js"), ...args],
      { cwd, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("lint and breaking show paths from the working directory, as buf does from its input", () => {
  // realpath: the folder as the process sees it, so that no form of it (symlinked /tmp or not) can hide in the output.
  const root = realpathSync(mkdtempSync(join(tmpdir(), "relative-paths-")));
  cpSync(join(CONTRACTS_DIR, "no-go-package"), join(root, "contracts", "broken"), { recursive: true });
  cpSync(join(CONTRACTS_DIR, "body-renumbered"), join(root, "contracts", "renumbered"), { recursive: true });
  mkdirSync(join(root, "ci"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const absolute = new RegExp(
    `${root.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}|${PACKAGE_ROOT.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`,
  );

  it("lint --format github-actions: the file relative to the working directory, from the folder above it, the " +
    "folder itself and a sibling", async () => {
    const cases = [
      [root, "contracts/broken", "contracts/broken/example/example.proto"],
      [join(root, "contracts"), "broken", "broken/example/example.proto"],
      [join(root, "contracts", "broken"), ".", "example/example.proto"],
      [join(root, "ci"), "../contracts/broken", "../contracts/broken/example/example.proto"],
      // An absolute folder is shown from the working directory too.
      [join(root, "ci"), join(root, "contracts", "broken"), "../contracts/broken/example/example.proto"],
    ] as const;
    for (const [cwd, dir, file] of cases) {
      const run = await cliIn(cwd, ["lint", dir, "--format", "github-actions"]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toMatch(new RegExp(`^::error file=${file.replace(/\./g, "\\.")},line=3,col=1,`, "m"));
      expect(run.stdout).not.toMatch(absolute);
    }
  }, 180_000);

  it.each(["text", "json", "junit", "msvs", "gitlab-code-quality"])(
    "lint --format %s names no absolute path",
    async (format) => {
      const run = await cliIn(root, ["lint", "contracts/broken", "--format", format]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toContain("contracts/broken/example/example");
      expect(run.stdout).not.toMatch(absolute);
    },
    60_000,
  );

  it.each(["text", "json", "junit", "github-actions", "msvs", "gitlab-code-quality"])(
    "breaking --format %s names no absolute path",
    async (format) => {
      const run = await cliIn(join(root, "ci"), [
        "breaking",
        "../contracts/renumbered",
        "--against",
        join(PACKAGE_ROOT, "proto"),
        "--format",
        format,
      ]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toContain("../contracts/renumbered/example/example");
      expect(run.stdout).not.toMatch(absolute);
    },
    60_000,
  );

  it.each(["json", "junit", "gitlab-code-quality"])(
    '--format %s, of a folder whose name XML and JSON escape (& < > "), names no absolute path',
    async (format) => {
      const odd = join(root, `a&b<c>"d`);
      cpSync(join(CONTRACTS_DIR, "no-go-package"), join(odd, "broken"), { recursive: true });
      const run = await cliIn(odd, ["lint", "broken", "--format", format]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toContain("broken/example/example");
      // Any form of the folder's name: as written, XML-escaped, or JSON-escaped as Go writes it.
      expect(run.stdout).not.toMatch(/a(&|&amp;|\\u0026)b/);
    },
    60_000,
  );

  it("reports a deleted file, a finding buf places in no file, instead of failing", async () => {
    const dir = join(root, "contracts", "renamed");
    mkdirSync(join(dir, "example"), { recursive: true });
    cpSync(join(PACKAGE_ROOT, "proto", "example", "example.proto"), join(dir, "example", "renamed.proto"));
    try {
      const text = await cliIn(root, ["breaking", "contracts/renamed", "--against", join(PACKAGE_ROOT, "proto")]);
      expect(text.code, text.stderr).toBe(1);
      expect(text.stdout).toMatch(/\[FILE_NO_DELETE\] Previously present file "example\/example\.proto" was deleted/);
      const annotations = await cliIn(root, [
        "breaking",
        "contracts/renamed",
        "--against",
        join(PACKAGE_ROOT, "proto"),
        "--format",
        "github-actions",
      ]);
      expect(annotations.code, annotations.stderr).toBe(1);
      expect(annotations.stdout).toMatch(/^::error .*Previously present file "example\/example\.proto" was deleted/m);
      expect(annotations.stdout).not.toMatch(absolute);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("the command line", () => {
  it("exits 2 with one line for an unknown flag", async () => {
    const run = await cli(["check", "--bogus"]);
    expect(run).toEqual({ code: 2, stdout: "", stderr: "example-conformance: unknown option '--bogus'\n" });
  });

  it("exits 2 for an unknown command", async () => {
    const run = await cli(["chekc"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown command 'chekc'.*check/s);
  });

  it("exits 0 for --help", async () => {
    const run = await cli(["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Usage: example-conformance/);
  });
});
