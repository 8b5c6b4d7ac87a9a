// Nothing a client starts outlives its run: a child it detaches (setsid) is gone when runClient returns and when
// check-client ends, in a PID namespace and, forced by EXAMPLE_CONFORMANCE_NO_PID_NAMESPACE=1, in the sweep without
// one; the client's own exit code, signal and output come through either way.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../contract/paths.js";
import { NO_NAMESPACE_ENV, namespaceUnshare, UNSHARE_FLAGS } from "../../../harness/client/_internals/contain.js";
import { runClient } from "../../../harness/client/run-client.js";
import { runCliProcess } from "../../helpers/cli-process.js";

const FIXTURE = join(PACKAGE_ROOT, "fixtures", "clients", "detach", "client.sh");

/** Live (not zombie) processes whose command line holds the token: the fixture's child sleeps "600.TOKEN". */
function liveWithToken(token: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc").slice(0, 100_000)) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "latin1");
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      if (cmdline.includes(`600.${token}`) && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z")
        found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** The processes still alive after a SIGKILL has had time to land (generous: a loaded machine), or none. */
async function survivors(token: string): Promise<number[]> {
  for (let i = 0; i < 50; i++) {
    const live = liveWithToken(token);
    if (live.length === 0) return live;
    await new Promise((r) => setTimeout(r, 100));
  }
  return liveWithToken(token);
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A token, a directory for the pid file, and a cleanup that kills whatever a failing run left behind. */
function setup() {
  const token = String(randomBytes(4).readUInt32BE());
  const dir = mkdtempSync(join(tmpdir(), "contain-"));
  cleanups.push(() => {
    for (const pid of liveWithToken(token)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return { token, pidfile: join(dir, "child.pid") };
}

/**
 * The namespace path runs where the product takes it. Not root, not Linux, or a container that refuses the namespace
 * is a machine where check-client sweeps instead (proved above): a skip, in CI too. A machine where unshare works with
 * the product's flags but the product's probe says no is a broken probe: a failure.
 */
function namespaced(skip: (why: string) => void): void {
  if (namespaceUnshare() !== undefined) return;
  if (process.env[NO_NAMESPACE_ENV] === "1")
    return skip(`${NO_NAMESPACE_ENV}=1 in the tests' environment refuses the namespace`);
  const works =
    process.platform === "linux" &&
    process.getuid?.() === 0 &&
    spawnSync("unshare", [...UNSHARE_FLAGS, "true"], { stdio: "ignore", timeout: 10_000 }).status === 0;
  if (works) throw new Error("unshare gives a PID namespace here, but check-client's probe refused it");
  skip("no PID namespace here (not root, not Linux, or unshare refused): check-client sweeps instead");
}

const paths = [
  { name: "in a PID namespace", env: {} as Record<string, string>, namespace: true },
  { name: "swept, without a namespace", env: { [NO_NAMESPACE_ENV]: "1" } as Record<string, string>, namespace: false },
];

describe.each(paths)("check-client's client $name", ({ env, namespace }) => {
  const withEnv = async <T>(f: () => Promise<T>): Promise<T> => {
    const before = process.env[NO_NAMESPACE_ENV];
    Object.assign(process.env, env);
    try {
      return await f();
    } finally {
      if (before === undefined) delete process.env[NO_NAMESPACE_ENV];
      else process.env[NO_NAMESPACE_ENV] = before;
    }
  };
  const ready = (skip: (why: string) => void) => {
    if (namespace) namespaced(skip);
  };

  it("a child it detached is gone when runClient returns; its exit code and output come through", {
    timeout: 60_000,
  }, async (ctx) => {
    ready((why) => ctx.skip(why));
    const { token, pidfile } = setup();
    const run = await withEnv(() =>
      runClient({ command: FIXTURE, args: [pidfile, token] }, { PATH: process.env.PATH ?? "" }, 30_000),
    );
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(3);
    expect(run.signal).toBeNull();
    const pid = Number(readFileSync(pidfile, "utf8"));
    expect(pid).toBeGreaterThan(0);
    expect(run.stdout).toContain(`detached child ${pid}, exiting`);
    expect(await survivors(token)).toEqual([]);
    // Outside a namespace the PID is the machine's: the sweep names it; inside, the namespace's own number.
    if (namespace)
      expect(run.leftRunning).toBeUndefined(); // The kernel ended it: nothing was left to sweep.
    else expect(run.leftRunning).toContain(pid);
  });

  it("a client killed at the bound takes the child it detached with it", { timeout: 60_000 }, async (ctx) => {
    ready((why) => ctx.skip(why));
    const { token, pidfile } = setup();
    const run = await withEnv(() =>
      runClient({ command: FIXTURE, args: [pidfile, token, "hang"] }, { PATH: process.env.PATH ?? "" }, 4_000),
    );
    expect(run.hung).toBe(true);
    expect(run.signal).toBe("SIGKILL");
    expect(readFileSync(pidfile, "utf8").trim()).toMatch(/^\d+$/);
    expect(await survivors(token)).toEqual([]);
  });

  it("after a whole check-client command, no process of the client is alive", { timeout: 120_000 }, async (ctx) => {
    ready((why) => ctx.skip(why));
    const { token, pidfile } = setup();
    const run = await runCliProcess(
      ["check-client", "--only", "client.hello.succeeds", "--timeout", "30s", "--", FIXTURE, pidfile, token],
      env,
    );
    expect(run.code).toBe(1); // The client called nothing: its check fails, nothing else.
    const pid = Number(readFileSync(pidfile, "utf8"));
    expect(await survivors(token)).toEqual([]);
    if (!namespace)
      expect(run.stderr).toMatch(
        new RegExp(`left \\d+ process\\(es\\) running after its run; killed: PID .*\\b${pid}\\b`),
      );
  });
});

describe("check-client's client in a PID namespace", () => {
  // Outside a namespace this one can escape: its parent is gone before any look at /proc could see it
  // (docs/check-client.md).
  it("takes a child orphaned at once by a double fork into a session of its own", { timeout: 60_000 }, async (ctx) => {
    namespaced((why) => ctx.skip(why));
    const { token, pidfile } = setup();
    const run = await runClient(
      { command: FIXTURE, args: [pidfile, token, "double-fork"] },
      { PATH: process.env.PATH ?? "" },
      30_000,
    );
    expect(run.exitCode).toBe(3);
    expect(readFileSync(pidfile, "utf8").trim()).toMatch(/^\d+$/);
    expect(await survivors(token)).toEqual([]);
  });

  it("a client that kills itself ends by its signal, as outside a namespace (PID 1 would ignore it)", {
    timeout: 60_000,
  }, async (ctx) => {
    namespaced((why) => ctx.skip(why));
    const run = await runClient(
      { command: "/bin/sh", args: ["-c", "echo before; kill -TERM $$; echo after"] },
      { PATH: process.env.PATH ?? "" },
      30_000,
    );
    expect(run.signal).toBe("SIGTERM");
    expect(run.exitCode).toBeNull();
    expect(run.stdout).toBe("before\n");
  });
});
