// The committed bundle of the GitHub Action (action-dist/, which action.yml runs) is what `npm run bundle` makes of
// the sources today, byte for byte: a change to the harness that is not bundled again fails here, never silently
// ships the old code. (npm test does not rebuild it, so that staleness cannot hide.)
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const COMMITTED = join(ROOT, "action-dist");

/** Every file under a folder, by its path from there, with its bytes' digest-free identity: content and mode. */
function files(
  dir: string,
  out = new Map<string, { bytes: Buffer; executable: boolean }>(),
  top = dir,
): Map<string, { bytes: Buffer; executable: boolean }> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files(path, out, top);
    else out.set(relative(top, path), { bytes: readFileSync(path), executable: (statSync(path).mode & 0o100) !== 0 });
  }
  return out;
}

/** The eight of buf's nine starts of the plugin in a lint or breaking run that ask about the plugin itself. */
const QUESTIONS = [
  ["--protocol"],
  ["--spec", "--format", "binary"],
  ["/buf.plugin.check.v1.CheckService/ListRules", "--format", "binary"],
  ["/buf.plugin.check.v1.CheckService/ListCategories", "--format", "binary"],
];

/** The bundle as npm run bundle builds it from the sources now, into a temporary folder. */
let fresh: string;
beforeAll(() => {
  fresh = mkdtempSync(join(tmpdir(), "action-bundle-"));
  execFileSync(process.execPath, [join(ROOT, "scripts", "bundle-action.js"), "--out", fresh], {
    cwd: ROOT,
    stdio: "pipe",
    timeout: 120_000,
  });
}, 180_000);

describe("action-dist/, the Action's committed bundle", () => {
  it("is exactly what npm run bundle builds from the sources now (else: run npm run bundle and commit action-dist/)", () => {
    const built = files(fresh);
    const committed = files(COMMITTED);
    const stale = "action-dist/ is stale: run npm run bundle and commit it";
    expect([...committed.keys()].sort(), stale).toEqual([...built.keys()].sort());
    for (const [name, file] of built) {
      const old = committed.get(name);
      expect(old?.executable, `${stale} (${name}: mode)`).toBe(file.executable);
      expect(old?.bytes.equals(file.bytes), `${stale} (${name} differs)`).toBe(true);
    }
    expect(built.get("index.js")?.bytes.length).toBeGreaterThan(100_000);
  });

  it("answers buf's questions about its plugin without node, byte for byte as the bundled plugin does", () => {
    const dir = join(fresh, "proto", "plugin");
    // A `node` first on PATH that only records that it was started: buf finds the entry and node the same way.
    const fake = mkdtempSync(join(tmpdir(), "no-node-"));
    const started = join(fake, "started.log");
    writeFileSync(join(fake, "node"), `#!/bin/sh\necho "$*" >> "${started}"\nexit 99\n`);
    chmodSync(join(fake, "node"), 0o755);
    const env = { PATH: `${fake}:/usr/bin:/bin` };
    const entry = join(dir, "buf-plugin-example");
    for (const args of QUESTIONS) {
      const answered = spawnSync(entry, args, { input: "", env, timeout: 30_000 });
      expect(answered.status, `${args.join(" ")}: ${answered.stderr}`).toBe(0);
      const bundled = execFileSync(process.execPath, [join(dir, "buf-plugin.js"), ...args], {
        input: "",
        timeout: 30_000,
      });
      expect(answered.stdout.equals(bundled), args.join(" ")).toBe(true);
    }
    expect(existsSync(started), "node was started for a question about the plugin").toBe(false);
    // Check, the one question about the contract, goes to the bundled plugin, with its arguments.
    const check = spawnSync(entry, ["/buf.plugin.check.v1.CheckService/Check", "--format", "binary"], {
      input: "",
      env,
      timeout: 30_000,
    });
    expect(check.status).toBe(99);
    expect(readFileSync(started, "utf8")).toBe(
      `${join(dir, "buf-plugin.js")} /buf.plugin.check.v1.CheckService/Check --format binary\n`,
    );
  });
});
