// The committed bundle of the GitHub Action (action-dist/, which action.yml runs) is what `npm run bundle` makes of
// the sources today, byte for byte: a change to the harness that is not bundled again fails here, never silently
// ships the old code. (npm test does not rebuild it, so that staleness cannot hide.)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

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

describe("action-dist/, the Action's committed bundle", () => {
  it("is exactly what npm run bundle builds from the sources now (else: run npm run bundle and commit action-dist/)", () => {
    const fresh = mkdtempSync(join(tmpdir(), "action-bundle-"));
    execFileSync(process.execPath, [join(ROOT, "scripts", "bundle-action.js"), "--out", fresh], {
      cwd: ROOT,
      stdio: "pipe",
      timeout: 120_000,
    });
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
  }, 180_000);
});
