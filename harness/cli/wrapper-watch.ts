// Whether the npm that started this process (`npx example-conformance serve`, `npm run serve`) is still there. npm
// runs a command through `sh -c`, forwards only SIGINT and SIGTERM, and to that shell alone, which does not pass them
// on: `kill $!` after `npx example-conformance serve &` ended npm and its shell and left node serving. So serve
// watches the wrappers between it and npm, npm included, and ends when one goes.
import { readFileSync } from "node:fs";
import { basename } from "node:path";

/**
 * A process as /proc shows it: its parent, and its start time, so a pid reused by another process is not taken for it.
 */
interface ProcStat {
  ppid: number;
  start: string;
}

/** One wrapper as first seen: a change of its start time or its parent means it, or the npm above it, ended. */
export interface Wrapper extends ProcStat {
  pid: number;
}

/** How often the wrappers are looked at: a server left behind is gone within about this much after its wrapper. */
export const WRAPPER_POLL_MS = 500;

/** Wrappers looked through at most: npm, and the shell or two it may run the command under. */
const MAX_DEPTH = 4;

function procStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces: the fields are counted after its closing one.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(fields[1]);
    const start = fields[19];
    return Number.isInteger(ppid) && start !== undefined ? { ppid, start } : undefined;
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** npm itself: its title ("npm exec ...", "npm run ..."), or node running npm-cli.js or npx-cli.js. */
const isNpm = (args: readonly string[]): boolean =>
  /^np[mx](\s|$)/.test(args.join(" ")) || args.some((a) => /np[mx]-cli\.js$/.test(a));

/** A shell running one command string, as npm runs every command. */
const isShell = (args: readonly string[]): boolean =>
  ["sh", "bash", "dash", "zsh"].includes(basename(args[0] ?? "")) && args[1] === "-c";

/**
 * The processes from this one's parent up to the npm that started it, when npm did (npm sets npm_command in what it
 * runs) and /proc says so; none otherwise, so that a server started by a shell, a supervisor or a container's init
 * is not tied to it.
 */
export function npmWrappers(env: Readonly<Record<string, string | undefined>>, ppid: number = process.ppid): Wrapper[] {
  if (env.npm_command === undefined) return [];
  const chain: Wrapper[] = [];
  let pid = ppid;
  for (let depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
    const stat = procStat(pid);
    const args = commandLine(pid);
    if (stat === undefined) return [];
    chain.push({ pid, ...stat });
    if (isNpm(args)) return chain;
    if (!isShell(args)) return [];
    pid = stat.ppid;
  }
  return [];
}

/**
 * Calls `gone` once, when one of the wrappers (npmWrappers, found as early as the process can, before npm may be
 * gone) has ended or lost its parent; returns the function that stops watching. Watches nothing when there are none.
 */
export function onWrapperGone(wrappers: readonly Wrapper[], gone: () => void): () => void {
  if (wrappers.length === 0) return () => undefined;
  const timer = setInterval(() => {
    // A shell whose npm ended is still there, adopted by init: its parent changed.
    if (
      wrappers.every((w) => {
        const now = procStat(w.pid);
        return now?.start === w.start && now.ppid === w.ppid;
      })
    )
      return;
    clearInterval(timer);
    gone();
  }, WRAPPER_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
