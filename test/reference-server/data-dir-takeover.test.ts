// Taking over the embedded store's lease: a killed holder's lease once it is stale, and no sooner; one winner
// when two serves race for it, and a loser that backs out without removing the winner's lease; a holder stopped
// past the bound (SIGSTOP) loses it and acknowledges nothing more.
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { LEASE_RENEW_MS, LEASE_STALE_MS } from "../../reference-server/http/data-dir-lease.js";
import {
  create,
  killAll,
  killHard,
  lines,
  listAll,
  ports,
  removeDataDirs,
  serveDataDir,
  tempDataDir,
  writeMany,
  type DataDirServe,
} from "../helpers/serve-data-dir.js";

afterEach(killAll);
afterAll(removeDataDirs);

describe("a killed holder's lease", () => {
  it(`is taken over once stale, ${LEASE_STALE_MS / 1000} s after its last renewal, and the restart says on stderr ` +
    `that it waits`, async () => {
    const dir = tempDataDir();
    const first = serveDataDir(dir);
    const { httpPort } = await ports(first);
    const { ids } = await writeMany(httpPort, 5, "before");
    expect(ids).toHaveLength(5);
    killHard(first);
    const killedAt = Date.now();
    await first.exited;

    const second = serveDataDir(dir);
    // Its first look at the lease comes once node has started it: on a loaded machine that alone can take longer than
    // the lease lives, and a lease already stale is taken at once, with nothing to say.
    const { httpPort: secondPort } = await ports(second);
    const readyAfter = Date.now() - killedAt;
    const listed = await listAll(secondPort);
    expect([...listed.keys()].sort()).toEqual([...ids].sort());
    // The new holder writes its holder file as it takes the lease: not before the lease was stale (the last
    // renewal was at most one interval before the kill), and before it serves.
    const takenAfter = statSync(join(dir, "example-conformance.holder.json")).mtimeMs - killedAt;
    expect(takenAfter).toBeGreaterThanOrEqual(LEASE_STALE_MS - LEASE_RENEW_MS - 500);
    expect(takenAfter).toBeLessThanOrEqual(readyAfter + 50);
    // A restart that looked while the lease was fresh waited for it, and said so in one line; one that came up after
    // it was stale (node's own start took that long) took it at once and had nothing to say.
    const said = second.stderr().split("\n").filter(Boolean);
    expect(said.length).toBeLessThanOrEqual(1);
    if (said.length === 1)
      expect(said[0]).toMatch(
        new RegExp(
          `^example-conformance: the data directory ${dir} is leased by example-conformance on host \\S+, ` +
            `process ${first.child.pid} .* which has not renewed it for \\d+ s: waiting up to \\d+ s for the lease ` +
            `to lapse`,
        ),
      );
  }, 180_000);

  it("is taken by exactly one of two serves that start together when it lapses", async () => {
    const dir = tempDataDir();
    const first = serveDataDir(dir);
    await ports(first);
    killHard(first);
    await first.exited;
    const racers = [serveDataDir(dir), serveDataDir(dir)];
    const outcomes = await Promise.all(racers.map((r) => r.listening));
    expect(outcomes.filter((o) => o !== undefined)).toHaveLength(1);
    const loser = racers[outcomes.indexOf(undefined)] as DataDirServe;
    expect((await loser.exited).code).toBe(75);
    expect(loser.stderr()).toMatch(/is in use by example-conformance on host \S+, process \d+ in its PID namespace/);
  }, 90_000);
});

describe("a lease taken by two at the same moment", () => {
  it("the one whose holder file was overwritten while it settled backs out without removing the lease, naming the " +
    "other, exit 75", async () => {
    const dir = tempDataDir();
    const holderFile = join(dir, "example-conformance.holder.json");
    const s = serveDataDir(dir);
    // As a racer that removed this serve's new lease and made its own would: its holder file replaces this one's
    // within the second the new holder waits before it checks.
    const other = { host: "racer-host", pid: 4242, started: "2026-01-01T00:00:00.000Z", token: "the racer's" };
    let replaced = false;
    for (let i = 0; i < 3000 && !replaced; i++) {
      await new Promise((r) => setTimeout(r, 5));
      if (existsSync(holderFile) && readFileSync(holderFile, "utf8").includes(`"pid":${s.child.pid},`)) {
        writeFileSync(holderFile, JSON.stringify(other));
        replaced = true;
      }
    }
    expect(replaced).toBe(true);
    expect(await s.listening).toBeUndefined();
    expect((await s.exited).code).toBe(75);
    expect(lines(s.stderr())).toEqual([
      `example-conformance: the data directory ${dir} is in use by example-conformance on host racer-host, ` +
        `process 4242 in its PID namespace, started 2026-01-01T00:00:00.000Z, which took its lease at the same ` +
        `moment; give each server its own --data-dir, or share a PostgreSQL server (--store postgres://...)`,
    ]);
    // The lease is the racer's now: left in place, and the racer's holder file too.
    expect(statSync(join(dir, "example-conformance.lease")).isDirectory()).toBe(true);
    expect(JSON.parse(readFileSync(holderFile, "utf8"))).toEqual(other);
  }, 60_000);
});

describe("a holder stopped past the stale bound (SIGSTOP, as a frozen container or VM)", () => {
  it("loses its lease to a second serve: once continued it acknowledges no write and exits 75 with one line", async () => {
    const dir = tempDataDir();
    const first = serveDataDir(dir);
    const a = (await ports(first)).httpPort;
    const before = await writeMany(a, 5, "first");
    expect(before.ids).toHaveLength(5);

    process.kill(first.nodePid(), "SIGSTOP");
    const second = serveDataDir(dir);
    const b = (await ports(second)).httpPort;
    const during = await writeMany(b, 5, "second");
    expect(during.ids).toHaveLength(5);

    process.kill(first.nodePid(), "SIGCONT");
    const late = await create(a, "written by a holder that lost its lease");
    expect(late.status).not.toBe(201);
    const ended = await Promise.race([
      first.exited,
      new Promise((r) => setTimeout(() => r("still running after 20 s"), 20_000)),
    ]);
    expect(ended).toEqual({ code: 75, signal: null });
    expect(lines(first.stderr())).toHaveLength(1);
    expect(first.stderr()).toMatch(
      new RegExp(
        `^example-conformance: the data directory ${dir}: this server's lease (was not renewed for \\d+ s|was ` +
          `taken over by)`,
      ),
    );

    // The second kept serving, and holds exactly what was acknowledged.
    const listed = await listAll(b);
    expect([...listed.keys()].sort()).toEqual([...before.ids, ...during.ids].sort());
    expect([...listed.values()]).not.toContain("written by a holder that lost its lease");
    second.child.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
  }, 90_000);
});
