// `serve` ends with what started it: SIGTERM, SIGINT or SIGHUP to the bin script or to the whole process group, and
// SIGTERM or SIGHUP to the npx wrapper, end the server: its ports refuse connections within 5 s, its data directory
// is free.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../contract/paths.js";

const BIN = join(PACKAGE_ROOT, "bin", "example-conformance.js");
/** What the issue asks: the ports closed within 5 s of the signal. */
const CLOSED_WITHIN_MS = 5_000;
const SERVE = ["serve", "--grpc-port", "0", "--http-port", "0", "--log-level", "silent"];

interface Started {
  child: ChildProcess;
  ports: number[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

const started: ChildProcess[] = [];
let project: string;
let dataRoot: string;

/** A consumer's project with the package installed as npm would link it: `npx --no-install` runs its bin from there. */
beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "serve-npx-"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
  symlinkSync(PACKAGE_ROOT, join(project, "node_modules", "example-conformance"));
  symlinkSync(
    join("..", "example-conformance", "bin", "example-conformance.js"),
    join(project, "node_modules", ".bin", "example-conformance"),
  );
  dataRoot = mkdtempSync(join(tmpdir(), "serve-signals-data-"));
});
afterAll(() => {
  rmSync(project, { recursive: true, force: true });
  rmSync(dataRoot, { recursive: true, force: true });
});
afterEach(() => {
  // Each child leads a process group of its own: whatever is left of it goes with the group.
  for (const c of started.splice(0)) {
    try {
      if (c.pid !== undefined) process.kill(-c.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

/** Starts serve, leading a process group of its own as a job of a shell does, and waits for both ports. */
async function start(via: "bin" | "npx", args: string[]): Promise<Started> {
  const child =
    via === "bin"
      ? spawn(process.execPath, [BIN, ...SERVE, ...args], { stdio: ["ignore", "pipe", "pipe"], detached: true })
      : spawn("npx", ["--no-install", "example-conformance", ...SERVE, ...args], {
          cwd: project,
          stdio: ["ignore", "pipe", "pipe"],
          detached: true,
          env: { ...process.env, npm_config_offline: "true", npm_config_update_notifier: "false" },
        });
  started.push(child);
  let err = "";
  child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const ports = await new Promise<number[]>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const g = /^grpc 127\.0\.0\.1:(\d+)$/m.exec(out);
      const h = /^http http:\/\/127\.0\.0\.1:(\d+)$/m.exec(out);
      if (g && h) resolve([Number(g[1]), Number(h[1])]);
    });
    child.once("exit", () => reject(new Error(`serve exited before listening: ${out} ${err}`)));
  });
  return { child, ports, exited, stderr: () => err };
}

/** Whether a connection to the port is refused (nothing listens), within a second. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const done = (closed: boolean) => {
      socket.destroy();
      resolve(closed);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(false));
    socket.once("error", (e: NodeJS.ErrnoException) => done(e.code === "ECONNREFUSED"));
  });
}

/** Polls until every port refuses; how long that took, or undefined when one still accepted at the bound. */
async function closedWithin(ports: number[], boundMs: number): Promise<number | undefined> {
  const t0 = performance.now();
  while (performance.now() - t0 < boundMs) {
    if ((await Promise.all(ports.map(refused))).every(Boolean)) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

describe("serve ends with what started it", () => {
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    it(`${signal} to the bin script: the ports refuse within 5 s and it exits 0`, async () => {
      const s = await start("bin", ["--store", "memory:"]);
      process.kill(s.child.pid as number, signal);
      expect(await closedWithin(s.ports, CLOSED_WITHIN_MS)).toBeDefined();
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(s.stderr()).toContain(`${signal}: finishing in-flight calls`);
    }, 30_000);
  }

  // SIGINT to npx alone is not among them: npm hands it to the `sh -c` it runs serve under, which waits for serve to
  // end, as POSIX shells do for a Ctrl-C that reaches every process of the group (docs/reference-server.md says so).
  for (const [signal, to] of [
    ["SIGTERM", "wrapper"],
    ["SIGHUP", "wrapper"],
    ["SIGINT", "group"],
    ["SIGTERM", "group"],
  ] as const) {
    it(`${signal} to the npx ${to === "group" ? "process group" : "wrapper"}: the server ends and its ports refuse ` +
      `within 5 s`, async () => {
      const s = await start("npx", ["--store", "memory:"]);
      process.kill(to === "group" ? -(s.child.pid as number) : (s.child.pid as number), signal);
      expect(await closedWithin(s.ports, CLOSED_WITHIN_MS)).toBeDefined();
    }, 60_000);
  }

  it("SIGHUP to the process group of npx: the ports refuse within 5 s, and the data directory is free for the next " +
    "server", async () => {
    const dir = join(dataRoot, "hup");
    const s = await start("npx", ["--data-dir", dir]);
    process.kill(-(s.child.pid as number), "SIGHUP");
    expect(await closedWithin(s.ports, CLOSED_WITHIN_MS)).toBeDefined();
    // The lease is let go on the way out: a server started at once on the same directory serves, not exit 75.
    const next = await start("bin", ["--data-dir", dir]);
    expect(next.ports).toHaveLength(2);
    process.kill(next.child.pid as number, "SIGTERM");
    expect((await next.exited).code).toBe(0);
  }, 90_000);
});
