// A data directory serve cannot use: damaged (a truncated pg_control; a pgdata without PG_VERSION) or not
// readable by its user. Each ends serve with one line naming the directory, the cause and what to do, and a
// documented exit code, and leaves the directory as it was: nothing overwritten, "repaired" or initialised over.
// (A full disk: data-dir-full.test.ts.)
import { createHash } from "node:crypto";
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  asNobody,
  isRoot,
  killAll,
  lines,
  ports,
  removeDataDirs,
  serveDataDir,
  tempDataDir,
  writeMany,
  type Wrapper,
} from "../helpers/serve-data-dir.js";

afterEach(killAll);
afterAll(removeDataDirs);

/** Every entry below `dir`, by its path, with its mode and its bytes' digest: what "left as it was" compares. */
function snapshot(dir: string, into = new Map<string, string>(), root = dir): Map<string, string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    const mode = (statSync(path).mode & 0o7777).toString(8);
    if (e.isDirectory()) {
      into.set(relative(root, path), `dir ${mode}`);
      snapshot(path, into, root);
    } else into.set(relative(root, path), `${mode} ${createHash("sha1").update(readFileSync(path)).digest("hex")}`);
  }
  return into;
}

/** A copy of a data directory a serve wrote three messages into and stopped cleanly. */
let written: string;
beforeAll(async () => {
  written = tempDataDir();
  const s = serveDataDir(written);
  expect((await writeMany((await ports(s)).httpPort, 3, "stored")).ids).toHaveLength(3);
  s.child.kill("SIGTERM");
  expect((await s.exited).code).toBe(0);
}, 90_000);

function copyOfWritten(): string {
  const dir = tempDataDir();
  for (const path of snapshot(written).keys()) {
    const from = join(written, path);
    if (statSync(from).isDirectory()) mkdirSync(join(dir, path), { recursive: true });
    else writeFileSync(join(dir, path), readFileSync(from), { mode: statSync(from).mode });
  }
  return dir;
}

/** serve on `dir` must end by itself with `code` and one line, and leave `dir` as it found it. */
async function refuses(dir: string, code: number, wrap?: Wrapper): Promise<string> {
  const before = snapshot(dir);
  const s = serveDataDir(dir, [], wrap);
  expect(await s.listening).toBeUndefined();
  expect((await s.exited).code).toBe(code);
  expect(lines(s.stderr())).toHaveLength(1);
  expect(snapshot(dir)).toEqual(before);
  return s.stderr();
}

describe("a damaged data directory", () => {
  it("a truncated pg_control: exit 65, one line naming the directory, PostgreSQL's cause and how to recover, not " +
    "the engine's Aborted()", async () => {
    const dir = copyOfWritten();
    truncateSync(join(dir, "pgdata", "global", "pg_control"), 100);
    const said = await refuses(dir, 65);
    expect(said).toBe(
      `example-conformance: the data directory ${dir} is damaged (PostgreSQL: PANIC: could not read file ` +
        `"global/pg_control": read 100 of 296); nothing in it was changed: restore it from a backup, or move it ` +
        `aside to start an empty store\n`,
    );
  }, 60_000);

  it("a pgdata with files but no PG_VERSION is not initialised over: exit 65, one line", async () => {
    const dir = copyOfWritten();
    // What PGlite would take for an empty directory, and write a new database into.
    rmSync(join(dir, "pgdata", "PG_VERSION"));
    const said = await refuses(dir, 65);
    expect(said).toMatch(
      new RegExp(
        `^example-conformance: the data directory ${dir} is damaged: ${dir}/pgdata holds \\d+ entries but no ` +
          `PG_VERSION, so it is not a whole PostgreSQL data directory; nothing in it was changed`,
      ),
    );
  }, 60_000);
});

describe.skipIf(!isRoot)("a data directory its user may not use (serve as nobody, uid 65534, via setpriv)", () => {
  it.for([
    // mkdtemp made it root's, mode 0700.
    { what: "a directory only root may enter", mode: 0o700, denied: "" },
    // The store in it is root's: its directories 0755, as PostgreSQL made them.
    {
      what: "a directory open to all whose store root wrote (a volume written by another user)",
      mode: 0o777,
      denied: "/pgdata",
    },
  ])(
    "$what: exit 77, one line naming the first entry it may not use and the user",
    { timeout: 60_000 },
    async ({ mode, denied }, t) => {
      const nobody = asNobody();
      if ("unusable" in nobody) {
        t.skip(nobody.unusable);
        return;
      }
      const dir = copyOfWritten();
      chmodSync(dir, mode);
      const said = await refuses(dir, 77, nobody);
      expect(said).toBe(
        `example-conformance: the data directory ${dir} cannot be used by this user (uid 65534): EACCES: ` +
          `permission denied, access '${dir}${denied}'; give this user read and write access to the directory and ` +
          `everything in it (chown -R or chmod), or run serve as their owner\n`,
      );
    },
  );
});
