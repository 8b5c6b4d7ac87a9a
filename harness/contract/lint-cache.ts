// Remembers buf lint's verdict on a contract, keyed by everything the verdict depends on: the contract's files,
// the configuration, buf's version and the plugin's code. A CI pipeline that checks the same contract on every run
// pays for buf and its plugin (about 1.5 s) once.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { BUF_CONFIG, PACKAGE_ROOT } from "../../contract/paths.js";
import type { BufRun } from "./buf.js";

const CACHE_DIR = join(PACKAGE_ROOT, "node_modules", ".cache", "example-conformance", "lint");
const PLUGIN_DIST = join(PACKAGE_ROOT, "dist", "harness", "contract", "buf-plugin");
const PLUGIN_ENTRY = join(PACKAGE_ROOT, "proto", "plugin", "buf-plugin-example");
/** Past this many files the folder is not a contract but, say, a repository root: no cache then. */
const MAX_FILES = 200;

function filesUnder(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (out.length > MAX_FILES) return out;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && !entry.name.startsWith(".")) filesUnder(path, out);
    } else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** The cache key, or undefined when the inputs cannot be pinned down. */
function keyOf(dir: string, format: string): string | undefined {
  try {
    const abs = resolve(dir);
    const files = filesUnder(abs).sort();
    if (files.length > MAX_FILES) return undefined;
    const require = createRequire(import.meta.url);
    // The shape of what is cached: a BufRun with its findings (a change to BufRun bumps it).
    const hash = createHash("sha256").update(`bufrun 2\nformat ${format}\n`);
    // The output names files from the working directory: the same contract seen from elsewhere is another entry.
    hash.update(`seen from ${relative(process.cwd(), abs)}\n`);
    hash.update(`buf ${(require("@bufbuild/buf/package.json") as { version: string }).version}\n`);
    // All of the plugin's code (its compiled folder and the entry buf starts) and the shipped configuration are
    // inputs too: a change to how the plugin reads or answers can change the verdict as much as a rule can.
    const plugin = [
      ...filesUnder(PLUGIN_DIST)
        .filter((f) => f.endsWith(".js"))
        .sort(),
      PLUGIN_ENTRY,
      BUF_CONFIG,
    ];
    for (const file of plugin) hash.update(`${relative(PACKAGE_ROOT, file)}\n`).update(readFileSync(file));
    for (const file of files) {
      if (statSync(file).size > 1024 * 1024) return undefined;
      hash.update(`${relative(abs, file)}\n`).update(readFileSync(file));
    }
    return hash.digest("hex");
  } catch {
    return undefined;
  }
}

export async function cachedLint(dir: string, format: string, lint: () => Promise<BufRun>): Promise<BufRun> {
  const key = keyOf(dir, format);
  const file = key === undefined ? undefined : join(CACHE_DIR, `${key}.json`);
  if (file) {
    try {
      return JSON.parse(readFileSync(file, "utf8")) as BufRun;
    } catch {
      // Not cached yet, or unreadable: run buf.
    }
  }
  const run = await lint();
  if (file) {
    try {
      mkdirSync(CACHE_DIR, { recursive: true });
      writeFileSync(file, JSON.stringify(run));
    } catch {
      // A read-only install still works, without the cache.
    }
  }
  return run;
}
