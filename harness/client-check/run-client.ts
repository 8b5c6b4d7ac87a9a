// Runs the client under test once, contained (a PID namespace, else its own session and process group, swept), bounded
// in time: at the bound it is killed with all it started, and the run is "hung", the client's defect. Its stdout and
// stderr are kept bounded for the report.
import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { ConformanceError } from "../errors.js";
import { findOnPath, isExecutable } from "./_internals/executable.js";
import { createSweeper, INIT_SCRIPT, namespaceUnshare, UNSHARE_FLAGS } from "./_internals/contain.js";

/** Bytes of stdout and of stderr kept: the last ones, where a failing client says why. */
export const KEPT_OUTPUT_BYTES = 4096;
/**
 * After the client exits, how long its pipes may stay open (a child it left behind holds them) before the group goes.
 */
const DRAIN_MS = 500;

export interface ClientCommand {
  command: string;
  args: readonly string[];
}

export interface ClientRun {
  exitCode: number | null;
  signal: string | null;
  /** Killed at the bound. */
  hung: boolean;
  durationMs: number;
  /** The last KEPT_OUTPUT_BYTES of each stream, and how many bytes came before them. */
  stdout: string;
  stderr: string;
  /**
   * Processes of the client's found alive after it ended and killed (outside a PID namespace; inside, none survive).
   */
  leftRunning?: readonly number[];
}

/** The tail of a stream, bounded however much the client writes. */
function tail() {
  let kept = Buffer.alloc(0);
  let dropped = 0;
  return {
    add(chunk: Buffer) {
      kept = Buffer.concat([kept, chunk]);
      if (kept.length > KEPT_OUTPUT_BYTES) {
        dropped += kept.length - KEPT_OUTPUT_BYTES;
        kept = Buffer.from(kept.subarray(kept.length - KEPT_OUTPUT_BYTES));
      }
    },
    text: () => (dropped > 0 ? `[${dropped} bytes before this left out] ` : "") + kept.toString("utf8"),
  };
}

const killGroup = (pid: number | undefined) => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
};

/**
 * Where the command is: a path is checked as given, a bare name on PATH. A client that cannot be started is a usage
 * error of the run (exit 2), never the client's defect.
 */
export function resolveCommand(command: string, env: Readonly<Record<string, string | undefined>>): string {
  if (command.includes("/")) {
    if (isExecutable(command)) return command;
    throw new ConformanceError("usage", `client command ${command}: no such executable file (or it is not executable)`);
  }
  if (findOnPath(command, env.PATH) !== undefined) return command;
  throw new ConformanceError("usage", `client command ${command}: not found on PATH`);
}

/** How often the descendants of a client outside a namespace are walked while it runs. */
const WALK_MS = 100;
/** Bound on the namespace's init starting the client, beyond the client's own. */
const INIT_START_MS = 10_000;
/** PIDs named in the warning line; the rest are counted. */
const NAMED_PIDS = 20;

/** A line on the run's stderr naming what the client left running; PIDs only, since a process names itself. */
function warnLeftRunning(pids: readonly number[]): void {
  if (pids.length === 0) return;
  const named =
    pids.slice(0, NAMED_PIDS).join(", ") + (pids.length > NAMED_PIDS ? ` and ${pids.length - NAMED_PIDS} more` : "");
  process.stderr.write(
    `example-conformance: warning: the client left ${pids.length} process(es) running after its run; killed: PID ` +
      `${named}\n`,
  );
}

interface InitMessage {
  spawned?: true;
  exit?: [number | null, string | null];
  error?: string;
}

const cannotStart = (client: ClientCommand, code: string | undefined) =>
  new ConformanceError("usage", `client command ${client.command}: cannot be started (${code})`);

/**
 * Runs the client once. Where the machine allows (Linux, root, unshare), in a PID namespace of its own under a small
 * init that reports the client's own exit, so that every process of the run ends with it; elsewhere as the leader of
 * its own session and process group, swept at the end (see createSweeper).
 */
export function runClient(
  client: ClientCommand,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ClientRun> {
  return new Promise((resolve, reject) => {
    const unshare = namespaceUnshare();
    // The init's environment is empty (NODE_OPTIONS and the like are the client's, not for our init); the client's
    // own arrives with its command on the init's stdin.
    const child =
      unshare === undefined
        ? spawn(client.command, [...client.args], { stdio: ["ignore", "pipe", "pipe"], env, detached: true })
        : spawn(unshare, [...UNSHARE_FLAGS, process.execPath, "-e", INIT_SCRIPT], {
            stdio: ["pipe", "pipe", "pipe", "pipe"],
            env: {},
            detached: true,
          });
    const sweeper = unshare === undefined && child.pid !== undefined ? createSweeper(child.pid) : undefined;
    const run: ClientProcess = {
      client,
      child,
      inNamespace: unshare !== undefined,
      sweeper,
      out: tail(),
      err: tail(),
      leftRunning: new Set(),
      hung: false,
      settled: false,
      t0: performance.now(),
      bound: undefined,
      walk: undefined,
      status: undefined,
      signal,
      resolve,
      reject,
      stop: () => {
        killGroup(child.pid);
        for (const pid of sweeper?.sweep() ?? []) run.leftRunning.add(pid);
      },
    };
    child.stdout?.on("data", (c: Buffer) => run.out.add(c));
    child.stderr?.on("data", (c: Buffer) => run.err.add(c));
    // In a namespace the bound is set again, to timeoutMs, when the init says the client runs: the init's own start (a
    // node start, slow on a loaded machine) is not the client's time. Until then it may take INIT_START_MS more.
    run.bound = setTimeout(() => onBound(run), unshare === undefined ? timeoutMs : timeoutMs + INIT_START_MS);
    run.walk = sweeper !== undefined ? setInterval(() => sweeper.record(), WALK_MS) : undefined;
    sweeper?.record();
    signal?.addEventListener("abort", run.stop, { once: true });
    if (unshare !== undefined) listenToInit(run, env, timeoutMs);
    child.once("error", (e: NodeJS.ErrnoException) =>
      fail(run, e.code === "ENOENT" || e.code === "EACCES" ? cannotStart(client, e.code) : e),
    );
    child.once("exit", (exitCode, exitSignal) => onExit(run, exitCode, exitSignal));
  });
}

/** One run of the client: its process, what it wrote, its bound, and how the promise of its run settles (once). */
interface ClientProcess {
  client: ClientCommand;
  child: ChildProcess;
  inNamespace: boolean;
  sweeper: ReturnType<typeof createSweeper> | undefined;
  out: ReturnType<typeof tail>;
  err: ReturnType<typeof tail>;
  leftRunning: Set<number>;
  hung: boolean;
  settled: boolean;
  /** When the client started: the bound and the duration count from there. */
  t0: number;
  bound: NodeJS.Timeout | undefined;
  walk: NodeJS.Timeout | undefined;
  /** The client's own exit, as the namespace's init reports it. */
  status: InitMessage["exit"];
  signal: AbortSignal | undefined;
  resolve: (run: ClientRun) => void;
  reject: (err: unknown) => void;
  /** Kills the client's group, and sweeps (outside a namespace) what it started. */
  stop: () => void;
}

function onBound(run: ClientProcess): void {
  run.hung = true;
  run.stop();
}

function ended(run: ClientProcess): void {
  clearTimeout(run.bound);
  clearInterval(run.walk);
  run.signal?.removeEventListener("abort", run.stop);
}

function fail(run: ClientProcess, e: unknown): void {
  if (run.settled) return;
  run.settled = true;
  ended(run);
  run.stop();
  run.reject(e);
}

/**
 * The init's word on the client: when it started (the bound and the duration count from there, as they did when the
 * harness started it itself) and how it ended.
 */
function listenToInit(run: ClientProcess, env: NodeJS.ProcessEnv, timeoutMs: number): void {
  const { child, client } = run;
  child.stdin?.on("error", () => undefined); // An init that died before reading: its exit says the rest.
  child.stdin?.end(JSON.stringify({ command: client.command, args: client.args, env }));
  let lines = "";
  child.stdio[3]?.on("data", (c: Buffer) => {
    lines += c.toString("utf8");
    for (let nl = lines.indexOf("\n"); nl >= 0; nl = lines.indexOf("\n")) {
      let m: InitMessage;
      try {
        m = JSON.parse(lines.slice(0, nl)) as InitMessage;
      } catch {
        m = {}; // Only our init writes here; a line it did not write says nothing.
      }
      lines = lines.slice(nl + 1);
      if (m.spawned === true && !run.settled) {
        run.t0 = performance.now();
        clearTimeout(run.bound);
        run.bound = setTimeout(() => onBound(run), timeoutMs);
      }
      if (m.exit !== undefined) run.status = m.exit;
      if (m.error !== undefined)
        fail(
          run,
          m.error === "ENOENT" || m.error === "EACCES"
            ? cannotStart(client, m.error)
            : new ConformanceError("internal", `client command ${client.command}: ${m.error}`),
        );
    }
  });
}

/**
 * The client exited: its pipes are read to their end (within DRAIN_MS), what it left running is killed, the run
 * settles.
 */
function onExit(run: ClientProcess, exitCode: number | null, exitSignal: NodeJS.Signals | null): void {
  const { child } = run;
  ended(run);
  run.sweeper?.record();
  const durationMs = Math.round(performance.now() - run.t0);
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(drain);
    // Whatever the client left running goes with it: nothing it started outlives its run.
    run.stop();
    if (run.settled) return;
    run.settled = true;
    const left = [...run.leftRunning].sort((a, b) => a - b);
    warnLeftRunning(left);
    const [code, sig] = run.status ?? [exitCode, exitSignal];
    run.resolve({
      exitCode: code,
      signal: sig,
      hung: run.hung,
      durationMs,
      stdout: run.out.text(),
      stderr: run.err.text(),
      ...(left.length > 0 && { leftRunning: left }),
    });
  };
  const pipes = [child.stdout, child.stderr, ...(run.inNamespace ? [child.stdio[3] as Readable | null] : [])];
  const drain = setTimeout(() => {
    for (const p of pipes) p?.destroy();
    finish();
  }, DRAIN_MS);
  let open = pipes.length;
  const closed = () => --open === 0 && finish();
  for (const p of pipes) {
    if (p === null || p === undefined || p.readableEnded || p.destroyed) closed();
    else p.once("close", closed);
  }
}
