// buf lint's verdict is reused only for exactly the same contract: any change to a file runs buf again.
import { randomUUID } from "node:crypto";
import { appendFileSync, cpSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTRACT_DIR, PACKAGE_ROOT } from "../../../common/paths.js";
import type { BufRun } from "../../../harness/buf/buf.js";
import { cachedLint } from "../../../harness/buf/lint-cache.js";

describe("the lint cache", () => {
  it("runs buf once per distinct contract, and again after any change", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lint-cache-"));
    cpSync(join(CONTRACT_DIR, "example"), join(dir, "example"), { recursive: true });
    // A contract no earlier run has seen, so the cache starts empty for it.
    writeFileSync(join(dir, "README.md"), `lint cache test ${randomUUID()}\n`);
    let runs = 0;
    const lint = async (): Promise<BufRun> => ({ exitCode: 0, output: `run ${++runs}`, findings: [] });
    expect(await cachedLint(dir, "text", lint)).toMatchObject({ exitCode: 0, output: "run 1" });
    expect(await cachedLint(dir, "text", lint)).toMatchObject({ exitCode: 0, output: "run 1" });
    expect(await cachedLint(dir, "json", lint)).toMatchObject({ exitCode: 0, output: "run 2" });
    writeFileSync(join(dir, "example", "extra.proto"), 'syntax = "proto3";\npackage example;\n');
    expect(await cachedLint(dir, "text", lint)).toMatchObject({ exitCode: 0, output: "run 3" });
    expect(runs).toBe(3);
  });

  it("runs buf again when any of the plugin's code changes, not only its rules", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lint-cache-"));
    cpSync(join(CONTRACT_DIR, "example"), join(dir, "example"), { recursive: true });
    writeFileSync(join(dir, "README.md"), `lint cache test ${randomUUID()}\n`);
    let runs = 0;
    const lint = async (): Promise<BufRun> => ({ exitCode: 0, output: `run ${++runs}`, findings: [] });
    await cachedLint(dir, "text", lint);
    // The plugin's wire handling, not its rules: a comment keeps it valid for any buf run beside this test.
    const wire = join(PACKAGE_ROOT, "dist", "harness", "buf", "buf-plugin", "wire.js");
    const original = readFileSync(wire);
    const { atime, mtime } = statSync(wire);
    try {
      appendFileSync(wire, `\n// ${randomUUID()}\n`);
      expect(await cachedLint(dir, "text", lint)).toMatchObject({ exitCode: 0, output: "run 2" });
    } finally {
      writeFileSync(wire, original);
      // Its time too: the buf plugin's entry answers buf's questions about the plugin from files the build wrote
      // while they are newer than every plugin module, so a wire.js left newer made every later buf run start node
      // eight times (the contract tests after this one ran 3.6 times as long).
      utimesSync(wire, atime, mtime);
    }
  });
});
