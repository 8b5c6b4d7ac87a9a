// Remembers the plugin's answers to buf's questions about the plugin itself (its protocol, its spec, its rules and
// categories), which buf asks in a fresh process twice before each lint or breaking run: eight of its nine starts.
// An answer is a pure function of the question and the plugin's code, so it is keyed by both, and the code is read
// whole (every module the plugin imports, and each package's manifest) on each start: a changed rule is a new key.
// This module imports nothing but node's own (and the package's paths), so a remembered answer costs a bare node start.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { PACKAGE_ROOT } from "../../../contract/paths.js";

const SERVICE = "/buf.plugin.check.v1.CheckService/";
/** The questions about the plugin itself; Check (about a contract) is never remembered. */
const ABOUT_ITSELF = new Set([`${SERVICE}ListRules`, `${SERVICE}ListCategories`]);
/** A question's input past this is not remembered (buf's are a few bytes). */
const MAX_INPUT_BYTES = 64 * 1024;
/** The modules walked from the server; past this the walk gives up and nothing is remembered. */
const MAX_MODULES = 64;

/** The server buf's plugin entry runs: always the compiled one (proto/plugin/buf-plugin-example). */
const PLUGIN_SERVER = join(PACKAGE_ROOT, "dist", "harness", "contract", "buf-plugin", "server.js");
const CACHE_DIR = join(PACKAGE_ROOT, "node_modules", ".cache", "example-conformance", "buf-plugin");

/** Whether an invocation asks about the plugin itself: `--protocol`, `--spec`, ListRules or ListCategories. */
export function isAboutItself(args: readonly string[], input: Uint8Array): boolean {
  if (input.length > MAX_INPUT_BYTES) return false;
  const rest = args.filter((a, i) => a !== "--format" && args[i - 1] !== "--format");
  return rest.length === 1 && (rest[0] === "--protocol" || rest[0] === "--spec" || ABOUT_ITSELF.has(rest[0] as string));
}

const IMPORT = /\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/** The manifest (name and version) of the package a bare specifier names, found from the importing module. */
function manifestOf(specifier: string, from: string): string {
  let dir = createRequire(from).resolve(specifier);
  for (let up = 0; up < 8; up++) {
    dir = dirname(dir);
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (manifest.name !== undefined) return `${specifier} ${manifest.name}@${String(manifest.version)}\n`;
    } catch {
      // not this folder
    }
  }
  throw new Error(`no package.json above ${specifier}`);
}

/** A hash of all the code the plugin's answers come from: the server's modules, transitively, and its packages. */
function codeKey(): string {
  const hash = createHash("sha256").update(`${process.version}\n`);
  const seen = new Set<string>();
  const queue = [PLUGIN_SERVER];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (seen.has(file)) continue;
    if (seen.size >= MAX_MODULES) throw new Error("too many modules");
    seen.add(file);
    const text = readFileSync(file, "utf8");
    hash.update(`${file}\n${text}\n`);
    for (const m of text.matchAll(IMPORT)) {
      const specifier = (m[1] ?? m[2]) as string;
      if (specifier.startsWith(".")) queue.push(join(dirname(file), specifier));
      else if (!specifier.startsWith("node:")) hash.update(manifestOf(specifier, file));
    }
  }
  return hash.digest("hex");
}

function entryFile(args: readonly string[], input: Uint8Array): string {
  const key = createHash("sha256").update(codeKey()).update(JSON.stringify(args)).update(input).digest("hex");
  return join(CACHE_DIR, `${key}.bin`);
}

/** The remembered answer to this question, or undefined (never asked, or the code changed, or no cache). */
export function recall(args: readonly string[], input: Uint8Array): Uint8Array | undefined {
  try {
    return readFileSync(entryFile(args, input));
  } catch {
    return undefined;
  }
}

/** Keeps an answer the plugin gave; a cache that cannot be written is no error (the next start asks again). */
export function remember(args: readonly string[], input: Uint8Array, answer: Uint8Array): void {
  try {
    const file = entryFile(args, input);
    mkdirSync(CACHE_DIR, { recursive: true });
    // Written whole then renamed, so a buf run beside this one never reads half an answer.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, answer);
    renameSync(partial, file);
  } catch {
    // not remembered
  }
}
