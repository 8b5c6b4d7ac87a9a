// buf lint and buf breaking with the plugin: the shipped contract, file:line findings, buf's own config and formats.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { breakingContract, lintContract } from "../../../harness/contract/buf.js";
import { ConformanceError } from "../../../harness/errors.js";
import { BUF_CONFIG, CONTRACT_DIR, PACKAGE_ROOT } from "../../../contract/paths.js";
import { CONTRACTS_DIR } from "../../../fixtures/contracts/index.js";

const run = promisify(execFile);
const noGoPackage = join(CONTRACTS_DIR, "no-go-package");
const scratch = mkdtempSync(join(tmpdir(), "example-conformance-buf-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of the shipped contract with one edit to example.proto and, optionally, to buf.yaml. */
function variant(name: string, editProto: (s: string) => string, editConfig?: (s: string) => string): string {
  const dir = join(scratch, name);
  cpSync(CONTRACT_DIR, dir, { recursive: true, filter: (src) => !src.includes(`${join(CONTRACT_DIR, "plugin")}`) });
  const proto = join(dir, "example", "example.proto");
  writeFileSync(proto, editProto(readFileSync(proto, "utf8")));
  if (editConfig) writeFileSync(join(dir, "buf.yaml"), editConfig(readFileSync(join(dir, "buf.yaml"), "utf8")));
  return dir;
}
const dropGoPackage = (s: string) => s.replace(/^option go_package.*\n/m, "");

describe("lintContract", () => {
  it("passes the shipped contract", async () => {
    expect(await lintContract()).toEqual({ exitCode: 0, output: "", findings: [] });
  });

  it("names GO_PACKAGE_DEFINED with file:line when go_package is missing", async () => {
    const result = await lintContract({ dir: noGoPackage });
    expect(result.exitCode).toBe(1);
    // Line 3 is the package statement, where the plugin places the finding.
    expect(result.output).toMatch(
      /example\/example\.proto:3:1:\[GO_PACKAGE_DEFINED\] .*go_package.*\(buf-plugin-example\)/,
    );
  });

  it("honours buf's ignore comments for the plugin's rule", async () => {
    const dir = variant("ignored", (s) =>
      dropGoPackage(s).replace("package example;", "// buf:lint:ignore GO_PACKAGE_DEFINED\npackage example;"),
    );
    expect((await lintContract({ dir })).exitCode).toBe(0);
  });

  it("honours `except` in the folder's own buf.yaml", async () => {
    const dir = variant("excepted", dropGoPackage, (s) =>
      s.replace("  except:\n", "  except:\n    - GO_PACKAGE_DEFINED\n"),
    );
    expect((await lintContract({ dir })).exitCode).toBe(0);
  });

  it.each([
    ["json", /"type":"GO_PACKAGE_DEFINED"/],
    ["junit", /<testcase name="GO_PACKAGE_DEFINED_3_1">/],
    ["github-actions", /^::error file=.*example\.proto,line=3,col=1,.*go_package/m],
    ["config-ignore-yaml", /GO_PACKAGE_DEFINED:\n\s+- example\/example\.proto/],
  ] as const)("writes buf's %s format", async (format, pattern) => {
    const result = await lintContract({ dir: noGoPackage, format });
    expect(result.output).toMatch(pattern);
  });

  it("refuses a folder that does not exist, as a usage error", async () => {
    await expect(lintContract({ dir: join(scratch, "absent") })).rejects.toMatchObject({
      code: "usage",
      message: expect.stringMatching(/no such directory/),
    });
  });

  it("refuses a proto that does not compile, with its first error's file:line", async () => {
    const dir = variant("broken", (s) => s.replace("string body = 1;", "string body = ;"));
    const err = await lintContract({ dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConformanceError);
    expect((err as ConformanceError).exitCode).toBe(2);
    expect((err as ConformanceError).message).toMatch(/^contract does not compile: .*example\.proto:\d+:\d+: /);
  });

  it("refuses an unknown format", async () => {
    // @ts-expect-error: a format the type does not allow, as a JavaScript caller could pass it.
    await expect(lintContract({ format: "xml" })).rejects.toMatchObject({ code: "usage" });
  });
});

describe("plain buf lint with the plugin", () => {
  it("keeps the fixture's buf.yaml equal to the shipped one", () => {
    expect(readFileSync(join(noGoPackage, "buf.yaml"), "utf8")).toBe(readFileSync(BUF_CONFIG, "utf8"));
  });

  it("reports GO_PACKAGE_DEFINED beside buf's own rules in the copy's folder", async () => {
    const env = {
      ...process.env,
      PATH: [join(PACKAGE_ROOT, "node_modules", ".bin"), process.env.PATH].join(delimiter),
    };
    const err = (await run("buf", ["lint", "--error-format", "json"], { cwd: noGoPackage, env }).catch(
      (e: unknown) => e,
    )) as {
      code: number;
      stdout: string;
    };
    expect(err.code).toBe(100);
    expect(JSON.parse(err.stdout.trim())).toMatchObject({
      path: "example/example.proto",
      start_line: 3,
      type: "GO_PACKAGE_DEFINED",
    });
  });
});

describe("breakingContract", () => {
  it("finds no breaking change between the shipped contract and itself", async () => {
    expect((await breakingContract({ dir: CONTRACT_DIR })).exitCode).toBe(0);
  });

  it("names FIELD_NO_DELETE for a renumbered field", async () => {
    const result = await breakingContract({ dir: join(CONTRACTS_DIR, "body-renumbered"), against: CONTRACT_DIR });
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/field "1" with name "body" on message "Message" was deleted/);
  });

  it("refuses a baseline that does not compile", async () => {
    const base = variant("broken-base", (s) => s.replace("message Message {", "message {"));
    await expect(breakingContract({ dir: CONTRACT_DIR, against: base })).rejects.toMatchObject({
      code: "usage",
      message: expect.stringMatching(/^baseline does not compile: /),
    });
  });
});
