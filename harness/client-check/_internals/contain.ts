// Keeps a client's processes inside its run: a PID namespace where the machine allows one, else a sweep of its
// session, its process group and the descendants seen while it ran, so nothing it started outlives check-client.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { findOnPath } from "./executable.js";

/**
 * Set to 1 in check-client's environment to refuse the PID namespace and take the sweep, as a machine without root or
 * unshare does; meant for tests of the sweep on a machine that has both.
 */
export const NO_NAMESPACE_ENV = "EXAMPLE_CONFORMANCE_NO_PID_NAMESPACE";

/**
 * When the client's init dies, the kernel kills every process of the namespace; --kill-child ends init with unshare.
 */
export const UNSHARE_FLAGS = ["--pid", "--fork", "--kill-child", "--mount-proc"] as const;

/** How long the probe may take: a machine where unshare hangs is a machine without it. */
const PROBE_MS = 5000;

let probed: string | null | undefined;

/**
 * unshare's path when a client can run in a PID namespace of its own: Linux, root, and unshare seen to work once (a
 * container may refuse the namespace or the proc mount) with an exit status passed through. Probed once per process.
 */
export function namespaceUnshare(): string | undefined {
  if (process.env[NO_NAMESPACE_ENV] === "1") return undefined;
  if (probed === undefined) {
    probed = null;
    const unshare =
      process.platform === "linux" && process.getuid?.() === 0 ? findOnPath("unshare", process.env.PATH) : undefined;
    if (unshare !== undefined) {
      const r = spawnSync(unshare, [...UNSHARE_FLAGS, "/bin/sh", "-c", "exit 7"], {
        stdio: "ignore",
        timeout: PROBE_MS,
      });
      if (r.status === 7) probed = unshare;
    }
  }
  return probed ?? undefined;
}

/**
 * The namespace's init, run by node (`node -e`), so that the client is not PID 1: the kernel shields PID 1 from signals
 * it has no handler for, so a client's abort() or kill of itself would end differently than outside. It reads
 * {command, args, env} as JSON on stdin (never argv: any local user can read a command line, and env holds the key),
 * runs the client as the harness would (stdin closed, stdout and stderr inherited) and writes JSON lines on fd 3:
 * {"spawned":true} once it runs, then {"exit":[code,signal]} or {"error":errno code}. Its exit ends the namespace.
 */
export const INIT_SCRIPT = `
const { spawn } = require("node:child_process");
const { writeSync } = require("node:fs");
const say = (o) => writeSync(3, JSON.stringify(o) + "\\n");
let text = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (c) => (text += c));
process.stdin.on("end", () => {
  const spec = JSON.parse(text);
  const child = spawn(spec.command, spec.args, { stdio: ["ignore", "inherit", "inherit"], env: spec.env });
  child.once("spawn", () => say({ spawned: true }));
  child.once("error", (e) => { say({ error: String(e.code) }); process.exit(0); });
  child.once("exit", (code, signal) => { say({ exit: [code, signal] }); process.exit(0); });
});
`;

/** A process as /proc/PID/stat tells it; starttime tells a PID reused from one kept. */
interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  starttime: string;
  /** Dead, not yet reaped: nothing to kill. */
  zombie: boolean;
}

/** Bound on the /proc entries one walk reads. */
const MAX_PROCS = 100_000;

function readProcs(): Proc[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const procs: Proc[] = [];
  for (const name of names.slice(0, MAX_PROCS)) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "latin1");
    } catch {
      continue; // Gone since the listing.
    }
    // The name (field 2) is the process's own choice and may hold spaces and parentheses: read after its last ")".
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    procs.push({
      pid: Number(name),
      ppid: Number(f[1]),
      pgrp: Number(f[2]),
      session: Number(f[3]),
      starttime: f[19] ?? "",
      zombie: f[0] === "Z",
    });
  }
  return procs;
}

/** Rounds of the final sweep: each kills what the last found and looks again for what they started meanwhile. */
const SWEEP_ROUNDS = 5;

/**
 * For a client run without a namespace: remembers its descendants while it runs (after its exit they belong to init
 * and only this memory names them), then kills every process of its session, its process group, those remembered and
 * their own descendants. A child detached in the instant between two walks and the client's exit can escape it.
 */
export function createSweeper(leader: number) {
  const seen = new Map<number, string>();
  const tree = (procs: Proc[], roots: Set<number>) => {
    const found: Proc[] = [];
    const inTree = new Set(roots);
    // Parents before children is not /proc's order: repeat until a pass adds nothing (bounded by the table's size).
    for (let grew = true, pass = 0; grew && pass < procs.length + 1; pass++) {
      grew = false;
      for (const p of procs) {
        if (inTree.has(p.pid) || !inTree.has(p.ppid)) continue;
        inTree.add(p.pid);
        found.push(p);
        grew = true;
      }
    }
    return found;
  };
  return {
    /** One walk while the client runs. */
    record() {
      const procs = readProcs();
      for (const p of procs) if (p.pid === leader) seen.set(p.pid, p.starttime);
      for (const p of tree(procs, new Set([leader]))) seen.set(p.pid, p.starttime);
    },
    /** Kills what is left and returns the PIDs killed, the client's own excepted. */
    sweep(): number[] {
      const killed = new Set<number>();
      for (let round = 0; round < SWEEP_ROUNDS; round++) {
        const procs = readProcs();
        // The leader's PID only as seen alive (a reaped one may be another's now); a session or group of that number
        // is still its own, since the kernel does not hand out a PID that names a live session or group.
        const roots = new Set<number>(killed);
        for (const p of procs)
          if (p.session === leader || p.pgrp === leader || seen.get(p.pid) === p.starttime) roots.add(p.pid);
        const live = procs.filter((p) => !p.zombie);
        const targets = new Set([...live.filter((p) => roots.has(p.pid)), ...tree(live, roots)].map((p) => p.pid));
        targets.delete(process.pid);
        const fresh = [...targets].filter((pid) => !killed.has(pid));
        if (fresh.length === 0) break;
        for (const pid of fresh) {
          try {
            process.kill(pid, "SIGKILL");
            killed.add(pid);
          } catch {
            // Already gone.
          }
        }
      }
      killed.delete(leader);
      return [...killed].sort((a, b) => a - b);
    },
  };
}
