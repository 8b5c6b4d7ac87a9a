// The plugin's entry, as buf starts it: the eight questions about the plugin itself are answered from the files the
// build wrote, without node, and only while they are newer than every module of the plugin; Check always runs the
// plugin. Checked on a copy of the entry and the compiled plugin, so no buf run beside this test sees a planted answer.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import { runPlugin } from "../../harness/contract/buf-plugin/server.js";

const SERVICE = "/buf.plugin.check.v1.CheckService/";
const QUESTIONS: Record<string, string[]> = {
  protocol: ["--protocol"],
  spec: ["--spec", "--format", "binary"],
  "list-rules": [`${SERVICE}ListRules`, "--format", "binary"],
  "list-categories": [`${SERVICE}ListCategories`, "--format", "binary"],
};

let root: string;
let answers: string;
/** A PATH of the tools the entry uses and no node. */
let noNode: string;
/** Runs the copy's entry through a symlink, as npm's .bin link reaches it; with node on PATH or not. */
const ask = (args: string[], { node = true } = {}): Uint8Array =>
  new Uint8Array(
    execFileSync(join(root, "node_modules", ".bin", "buf-plugin-example"), args, {
      input: new Uint8Array(),
      timeout: 30_000,
      env: { PATH: node ? `${dirname(process.execPath)}:${noNode}` : noNode },
    }),
  );

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "buf-plugin-entry-"));
  cpSync(join(PACKAGE_ROOT, "proto", "plugin"), join(root, "proto", "plugin"), {
    recursive: true,
    preserveTimestamps: true,
  });
  for (const part of [
    ["harness", "contract", "buf-plugin"],
    ["harness", "_internals", "gen"],
  ]) {
    cpSync(join(PACKAGE_ROOT, "dist", ...part), join(root, "dist", ...part), {
      recursive: true,
      preserveTimestamps: true,
    });
  }
  mkdirSync(join(root, "node_modules", ".bin"), { recursive: true });
  symlinkSync(join(PACKAGE_ROOT, "node_modules", "@bufbuild"), join(root, "node_modules", "@bufbuild"));
  symlinkSync("../proto/plugin", join(root, "node_modules", "buf-plugin-example"));
  symlinkSync("../buf-plugin-example/buf-plugin-example", join(root, "node_modules", ".bin", "buf-plugin-example"));
  answers = join(root, "dist", "harness", "contract", "buf-plugin", "answers");
  noNode = join(root, "tools");
  mkdirSync(noNode);
  for (const tool of ["cat", "dirname", "find", "head", "readlink"]) {
    symlinkSync(execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim(), join(noNode, tool));
  }
});

describe("the buf plugin's entry", () => {
  it("gives the compiled plugin's own bytes for each question about itself", async () => {
    for (const [name, args] of Object.entries(QUESTIONS)) {
      expect(ask(args), name).toEqual(new Uint8Array((await runPlugin(args, new Uint8Array())).stdout));
    }
  });

  it("answers them from the build's files, without node", () => {
    const planted = new TextEncoder().encode("planted");
    for (const [name, args] of Object.entries(QUESTIONS)) {
      writeFileSync(join(answers, `${name}.bin`), planted);
      expect(ask(args, { node: false }), name).toEqual(planted);
    }
  });

  it("runs the plugin for Check, and for any question once a module of the plugin is newer than its answer", async () => {
    const check = [`${SERVICE}Check`, "--format", "binary"];
    expect(ask(check)).toEqual(new Uint8Array((await runPlugin(check, new Uint8Array())).stdout));
    writeFileSync(join(answers, "list-rules.bin"), "stale");
    // Older than any module of the plugin, however long ago the build ran.
    utimesSync(join(answers, "list-rules.bin"), new Date(0), new Date(0));
    const args = QUESTIONS["list-rules"] as string[];
    expect(ask(args)).toEqual(new Uint8Array((await runPlugin(args, new Uint8Array())).stdout));
  });
});
