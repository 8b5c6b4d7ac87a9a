// Acknowledged means durable on the default store: a write answered 201 is on the disk, not only in the page cache,
// so it survives a crash of the host (power lost), not only of the process. The server runs over a shim under
// node:fs (test/helpers/lose-unsynced-writes.mjs) that keeps only what was fsynced; after SIGKILL, what was never
// synced is thrown away, as a machine that lost power would, and the restarted server must still hold every write it
// acknowledged, byte for byte.
import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import {
  killAll,
  killHard,
  listAll,
  ports,
  removeDataDirs,
  serveDataDir,
  tempDataDir,
  writeMany,
} from "../helpers/serve-data-dir.js";

afterEach(killAll);
afterAll(removeDataDirs);

const SHIM = join(PACKAGE_ROOT, "test", "helpers", "lose-unsynced-writes.mjs");

/** serve on `dir` with the shim: what a power cut would leave of its pgdata is kept in `shadow`. */
const serveLosingUnsynced = (dir: string, shadow: string) =>
  serveDataDir(dir, [], undefined, {
    nodeArgs: ["--import", SHIM],
    env: { LOSE_UNSYNCED_ROOT: join(dir, "pgdata"), LOSE_UNSYNCED_SHADOW: shadow },
  });

/** The power cut: the data directory as the disk held it. */
function losePageCache(dir: string, shadow: string): void {
  rmSync(join(dir, "pgdata"), { recursive: true, force: true });
  renameSync(shadow, join(dir, "pgdata"));
}

describe("the embedded store under a crash that loses every write not synced to the disk", () => {
  it("keeps every message it answered 201, byte for byte, on a store made in an earlier run", async () => {
    const dir = tempDataDir();
    const shadow = join(tempDataDir(), "pgdata");
    const before = serveDataDir(dir);
    const earlier = await writeMany((await ports(before)).httpPort, 4, "earlier");
    before.child.kill("SIGTERM");
    expect((await before.exited).code).toBe(0);

    const s = serveLosingUnsynced(dir, shadow);
    const { ids, others } = await writeMany((await ports(s)).httpPort, 24, "acknowledged \u{1F600}");
    expect(others).toEqual([]);
    killHard(s);
    await s.exited;
    expect(existsSync(shadow)).toBe(true);
    losePageCache(dir, shadow);

    const after = serveDataDir(dir);
    const held = await listAll((await ports(after)).httpPort);
    for (const [i, id] of ids.entries())
      expect(held.get(id), `acknowledged write ${i} (${id})`).toMatch(/^acknowledged \u{1F600}-\d+$/u);
    for (const id of earlier.ids) expect(held.has(id)).toBe(true);
    expect(held.size).toBe(ids.length + earlier.ids.length);
  }, 300_000);

  it("keeps a new store whole: one made in the run that crashed opens again with what it acknowledged", async () => {
    const dir = tempDataDir();
    const shadow = join(tempDataDir(), "pgdata");
    const s = serveLosingUnsynced(dir, shadow);
    const { ids, others } = await writeMany((await ports(s)).httpPort, 8, "first");
    expect(others).toEqual([]);
    killHard(s);
    await s.exited;
    losePageCache(dir, shadow);

    const after = serveDataDir(dir);
    const held = await listAll((await ports(after)).httpPort);
    expect([...held.keys()].sort()).toEqual([...ids].sort());
  }, 300_000);
});
