// The embedded store on a full disk (a small tmpfs, mounted for the test): writes are refused 507 while reads go
// on, or, when PostgreSQL's WAL cannot grow, the engine stops and serve ends 74 with one line having
// acknowledged nothing more; either way every write acknowledged before is there after space returns.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  create,
  isRoot,
  killAll,
  lines,
  listAll,
  ports,
  removeDataDirs,
  serveDataDir,
  tempDataDir,
  type DataDirServe,
} from "../helpers/serve-data-dir.js";

const mounts: string[] = [];
afterEach(async () => {
  await killAll();
  // Lazily if still busy, so that one mount left in use does not keep the others.
  for (const m of mounts.splice(0).reverse()) execFileSync("umount", ["--lazy", m]);
  removeDataDirs();
});

function mountTmpfs(dir: string, mib: number): void {
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${mib}m`, "tmpfs", dir]);
  mounts.push(dir);
}

const remount = (dir: string, mib: number) => execFileSync("mount", ["-o", `remount,size=${mib}m`, dir]);

/** 512 KiB of text that does not compress: PostgreSQL writes each such body in full, to its WAL and its table. */
const body = () => randomBytes(384 * 1024).toString("base64");

/**
 * POSTs bodies until one is not acknowledged (bounded: 200 writes): the acknowledged ids, the first other answer,
 * and a few answers after it (none of which may be 201).
 */
async function fill(httpPort: number): Promise<{ ids: string[]; refused: Array<number | string>; why: string }> {
  const ids: string[] = [];
  for (let i = 0; i < 200; i++) {
    const a = await create(httpPort, body());
    if (a.id === undefined) {
      const after = [];
      for (let k = 0; k < 3; k++) after.push((await create(httpPort, body())).status);
      return { ids, refused: [a.status, ...after], why: a.text ?? "" };
    }
    ids.push(a.id);
  }
  throw new Error("200 writes of 512 KiB fit on a disk meant to hold fewer");
}

async function restartHolds(dir: string, ids: string[]): Promise<DataDirServe> {
  const s = serveDataDir(dir);
  const { httpPort } = await ports(s);
  const listed = await listAll(httpPort);
  expect([...listed.keys()].sort()).toEqual([...ids].sort());
  expect((await create(httpPort, "after space returned")).status).toBe(201);
  return s;
}

/** A data directory on a tmpfs of `mib` MiB of its own. */
function onTmpfs(mib: number): string {
  const mnt = tempDataDir();
  mountTmpfs(mnt, mib);
  return join(mnt, "data");
}

/** serve with a reserve of `reserveMib` on a 96 MiB tmpfs, written to until a write is refused. */
async function fillTmpfs(reserveMib: number) {
  const dir = onTmpfs(96);
  const s = serveDataDir(dir, ["--store-min-free-mib", String(reserveMib)]);
  const { httpPort } = await ports(s);
  const filled = await fill(httpPort);
  expect(filled.ids.length).toBeGreaterThan(5);
  return { dir, s, httpPort, ...filled };
}

/** The status of a GET of one stored message, read to its end. */
async function read(httpPort: number, id: string | undefined): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/messages/${id}`);
  await res.arrayBuffer();
  return res.status;
}

describe.skipIf(!isRoot)("the embedded store on a full disk (tmpfs)", () => {
  it("past the reserve kept free, POST is refused 507 and reads go on; after the disk grows and serve restarts, " +
    "every acknowledged write is there", async () => {
    const { dir, s, httpPort, ids, refused, why } = await fillTmpfs(24);
    expect(refused).toEqual([507, 507, 507, 507]);
    // Refused by the reserve, before PostgreSQL met the end of the disk, which still has the reserve free.
    expect(why).toContain(`the disk of the data directory ${dir} has `);
    expect(why).toContain("MiB free, and keeps 24 MiB in reserve (--store-min-free-mib)");
    // Deleting messages would not help: the remedy named is the disk's, not the store's bound.
    expect(why).toContain("free space on that disk");
    expect(why).not.toContain("delete messages to make room");
    const disk = statfsSync(dir);
    expect(disk.bavail * disk.bsize).toBeGreaterThan(16 * 1024 * 1024);
    expect(await read(httpPort, ids[0])).toBe(200);
    expect((await fetch(`http://127.0.0.1:${httpPort}/`)).status).toBe(200);
    remount(join(dir, ".."), 400);
    s.child.kill("SIGTERM");
    expect((await s.exited).code).toBe(0);
    await restartHolds(dir, ids);
  }, 240_000);

  it("with no reserve, PostgreSQL's own out-of-space is answered 507, or ends serve 74 with one line: never a 500, " +
    "never a write acknowledged after", async () => {
    const { dir, s, httpPort, ids, refused, why } = await fillTmpfs(0);
    if (refused[0] === 507) {
      expect(refused).toEqual([507, 507, 507, 507]);
      expect(why).toMatch(
        /the disk of the data directory \S+ is full \(could not (extend|write to) file .*No space left on device\)/,
      );
      expect(await read(httpPort, ids[0])).toBe(200);
      s.child.kill("SIGTERM");
    }
    for (const r of refused) expect(String(r)).toMatch(/^(507|503|no answer)/);
    const ended = await s.exited;
    if (refused[0] !== 507) {
      expect(ended.code).toBe(74);
      expect(lines(s.stderr())).toHaveLength(1);
      expect(s.stderr()).toMatch(
        /^example-conformance: the embedded PostgreSQL in the data directory \S+ stopped \(PANIC: .*No space left on device\): its disk is full/,
      );
    }
    remount(join(dir, ".."), 400);
    await restartHolds(dir, ids);
  }, 240_000);

  it("its WAL's disk full (pg_wal on a tmpfs of its own): the engine stops, serve ends 74 with one line naming the " +
    "cause, and every acknowledged write survives", async () => {
    const dir = onTmpfs(200);
    const first = serveDataDir(dir);
    await ports(first);
    first.child.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);
    // The WAL on a disk with room for what it holds and 2 MiB more: the next segment (16 MiB) cannot be made.
    const wal = join(dir, "pgdata", "pg_wal");
    const kept = mkdtempSync(join(tmpdir(), "example-conformance-wal-"));
    cpSync(wal, kept, { recursive: true });
    const used = Number(execFileSync("du", ["-sm", wal], { encoding: "utf8" }).split("\t")[0]);
    mountTmpfs(wal, used + 2);
    cpSync(kept, wal, { recursive: true });
    rmSync(kept, { recursive: true, force: true });
    mkdirSync(join(wal, "archive_status"), { recursive: true });

    const s = serveDataDir(dir, ["--store-min-free-mib", "0"]);
    const { httpPort } = await ports(s);
    const { ids, refused } = await fill(httpPort);
    for (const r of refused) expect(String(r)).toMatch(/^(503|no answer)/);
    expect((await s.exited).code).toBe(74);
    expect(lines(s.stderr())).toHaveLength(1);
    expect(s.stderr()).toBe(
      `example-conformance: the embedded PostgreSQL in the data directory ${dir} stopped (PANIC: could not write ` +
        `to file "pg_wal/xlogtemp.42": No space left on device): its disk is full; free space on it, and start ` +
        `serve again: every write acknowledged before is kept\n`,
    );
    remount(wal, 100);
    await restartHolds(dir, ids);
  }, 240_000);
});
