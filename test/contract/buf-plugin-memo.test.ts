// buf asks the plugin about itself in eight fresh processes per run; the answers come from memory when the same code
// gave them before, and never when any of that code has changed. Check, which reads the contract, is always run.
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import { isAboutItself, recall, remember } from "../../harness/contract/buf-plugin/memo.js";
import { runPlugin } from "../../harness/contract/buf-plugin/server.js";

const SERVICE = "/buf.plugin.check.v1.CheckService/";
const ENTRY = join(PACKAGE_ROOT, "proto", "plugin", "buf-plugin-example");

const bytes = (b: Uint8Array | undefined) => (b === undefined ? undefined : new Uint8Array(b));

/** Runs the plugin's entry as buf does, in a process of its own. */
const spawnPlugin = (args: string[], input: Uint8Array = new Uint8Array()): Buffer =>
  execFileSync(ENTRY, args, { input, timeout: 30_000 });

describe("the plugin's memory of its answers about itself", () => {
  it("is consulted only for --protocol, --spec, ListRules and ListCategories", () => {
    const empty = new Uint8Array();
    expect(isAboutItself(["--protocol"], empty)).toBe(true);
    expect(isAboutItself(["--spec", "--format", "binary"], empty)).toBe(true);
    expect(isAboutItself([`${SERVICE}ListRules`, "--format", "binary"], empty)).toBe(true);
    expect(isAboutItself([`${SERVICE}ListCategories`], empty)).toBe(true);
    expect(isAboutItself([`${SERVICE}Check`, "--format", "binary"], empty)).toBe(false);
    expect(isAboutItself(["--protocol", "--spec"], empty)).toBe(false);
    expect(isAboutItself([`${SERVICE}ListRules`], new Uint8Array(64 * 1024 + 1))).toBe(false);
  });

  it("answers from memory what the same code answered, in the entry buf starts", async () => {
    // A question no earlier run asked (its input differs), answered once by the server and remembered by the entry.
    const args = [`${SERVICE}ListCategories`, "--format", "binary"];
    const input = new TextEncoder().encode(randomUUID());
    expect(recall(args, input)).toBeUndefined();
    const first = spawnPlugin(args, input);
    expect(new Uint8Array(first)).toEqual(new Uint8Array((await runPlugin(args, input)).stdout));
    expect(bytes(recall(args, input))).toEqual(new Uint8Array(first));
    // What the entry answers next is what memory holds: planted here, it comes back without the server.
    const planted = new TextEncoder().encode(`planted ${randomUUID()}`);
    remember(args, input, planted);
    expect(new Uint8Array(spawnPlugin(args, input))).toEqual(planted);
  });

  it("gives the server's own bytes for each question about itself", async () => {
    for (const args of [["--protocol"], ["--spec", "--format", "binary"], [`${SERVICE}ListRules`, "--format", "binary"]]) {
      const input = new Uint8Array();
      const expected = (await runPlugin(args, input)).stdout;
      expect(new Uint8Array(spawnPlugin(args, input)), args.join(" ")).toEqual(new Uint8Array(expected));
      expect(bytes(recall(args, input)), args.join(" ")).toEqual(new Uint8Array(expected));
    }
  });

  it("never remembers Check", async () => {
    const args = [`${SERVICE}Check`, "--format", "binary"];
    const input = new Uint8Array();
    expect(new Uint8Array(spawnPlugin(args, input))).toEqual(new Uint8Array((await runPlugin(args, input)).stdout));
    expect(recall(args, input)).toBeUndefined();
  });

  it("forgets everything when any of the plugin's code changes", () => {
    const args = ["--protocol"];
    const input = new TextEncoder().encode(randomUUID());
    remember(args, input, new TextEncoder().encode("old"));
    expect(recall(args, input)).toBeDefined();
    // A module of the plugin's, changed by a comment (valid for any buf run beside this test): a new key.
    const rules = join(PACKAGE_ROOT, "dist", "harness", "contract", "buf-plugin", "rules.js");
    const rulesOriginal = readFileSync(rules);
    try {
      appendFileSync(rules, `\n// ${randomUUID()}\n`);
      expect(recall(args, input)).toBeUndefined();
    } finally {
      writeFileSync(rules, rulesOriginal);
    }
    expect(recall(args, input)).toBeDefined();
  });
});
