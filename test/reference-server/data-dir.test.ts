// The embedded store's data directory is leased, not locked by a PID: two serves in separate PID namespaces (as
// containers on one volume) never both write, and every acknowledged write survives SIGKILL and a restart; an
// older version's PID file is honoured or retired. (Takeovers: data-dir-takeover.test.ts.)
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  IN_PID_NAMESPACE,
  isRoot,
  killAll,
  killHard,
  lines,
  listAll,
  ports,
  removeDataDirs,
  serveDataDir,
  tempDataDir,
  writeMany,
} from "../helpers/serve-data-dir.js";

afterEach(killAll);
afterAll(removeDataDirs);

const IN_USE =
  /^example-conformance: the data directory \S+ is in use by example-conformance on host \S+, process \d+ in its PID namespace, started \S+, which renews its lease; give each server its own --data-dir/;

describe.skipIf(!isRoot)("two serves on one data directory in separate PID namespaces (unshare, as containers)", () => {
  it("the second refuses with one line naming the holder; 100 writes acknowledged by the first survive SIGKILL of " +
    "both and a restart in a namespace and outside one", async () => {
    const dir = tempDataDir();
    const first = serveDataDir(dir, [], IN_PID_NAMESPACE);
    const { httpPort } = await ports(first);
    expect(readFileSync(join(dir, "example-conformance.holder.json"), "utf8")).toMatch(/"pid":1,/);

    // Both are process 1 in their namespaces: the PID file this replaces let both start here.
    const second = serveDataDir(dir, [], IN_PID_NAMESPACE);
    expect(await second.listening).toBeUndefined();
    expect((await second.exited).code).toBe(75);
    expect(lines(second.stderr())).toHaveLength(1);
    expect(second.stderr()).toMatch(IN_USE);
    expect(second.stderr()).toContain(`the data directory ${dir} `);
    expect(second.stderr()).toContain("process 1 in its PID namespace");

    const { ids, others } = await writeMany(httpPort, 100, "kept");
    expect(others).toEqual([]);
    expect(ids).toHaveLength(100);
    killHard(first);
    await first.exited;

    const third = serveDataDir(dir, [], IN_PID_NAMESPACE);
    const listed = await listAll((await ports(third)).httpPort);
    expect([...listed.keys()].sort()).toEqual([...ids].sort());
    killHard(third);
    await third.exited;

    const fourth = serveDataDir(dir);
    const again = await listAll((await ports(fourth)).httpPort);
    expect([...again.keys()].sort()).toEqual([...ids].sort());
  }, 300_000);
});

describe("an older version's lock file (a bare PID)", () => {
  it("naming a process running here refuses with one line, exit 75; naming none is removed, said on stderr", async () => {
    const dir = tempDataDir();
    const old = join(dir, "example-conformance.lock");
    // This test's own process: running in this namespace, and not the serve's.
    writeFileSync(old, String(process.pid));
    const refused = serveDataDir(dir);
    expect(await refused.listening).toBeUndefined();
    expect((await refused.exited).code).toBe(75);
    expect(lines(refused.stderr())).toHaveLength(1);
    expect(refused.stderr()).toContain(
      `an older example-conformance's lock (${old}) naming process ${process.pid}, which is running here`,
    );
    // Nothing was left behind by the refusal, and the old file is still there.
    expect(readFileSync(old, "utf8")).toBe(String(process.pid));
    expect(() => statSync(join(dir, "example-conformance.lease"))).toThrow(/ENOENT/);
    expect(() => statSync(join(dir, "example-conformance.holder.json"))).toThrow(/ENOENT/);

    // A PID no process has: the maximum PID is below 2^22 on Linux.
    writeFileSync(old, String(2 ** 22 + 1));
    const started = serveDataDir(dir);
    await ports(started);
    expect(() => statSync(old)).toThrow(/ENOENT/);
    expect(started.stderr()).toContain(`removed ${old}, an older version's lock naming process ${2 ** 22 + 1}`);
  }, 90_000);
});
