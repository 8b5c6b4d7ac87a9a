// Runs the client under test once, as its own process group, bounded in time: at the bound the whole group is
// killed and the run is "hung", the client's defect. Its stdout and stderr are kept bounded for the report.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { ConformanceError } from "../errors.js";

/** Bytes of stdout and of stderr kept: the last ones, where a failing client says why. */
export const KEPT_OUTPUT_BYTES = 4096;
/** After the client exits, how long its pipes may stay open (a child it left behind holds them) before the group goes. */
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
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes("/")) {
    if (executable(command)) return command;
    throw new ConformanceError("usage", `client command ${command}: no such executable file (or it is not executable)`);
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) if (dir !== "" && executable(join(dir, command))) return command;
  throw new ConformanceError("usage", `client command ${command}: not found on PATH`);
}

export function runClient(client: ClientCommand, env: NodeJS.ProcessEnv, timeoutMs: number, signal?: AbortSignal): Promise<ClientRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(client.command, [...client.args], { stdio: ["ignore", "pipe", "pipe"], env, detached: true });
    const out = tail();
    const err = tail();
    child.stdout.on("data", (c: Buffer) => out.add(c));
    child.stderr.on("data", (c: Buffer) => err.add(c));
    let hung = false;
    const stop = () => killGroup(child.pid);
    const bound = setTimeout(() => {
      hung = true;
      stop();
    }, timeoutMs);
    signal?.addEventListener("abort", stop, { once: true });
    child.once("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(bound);
      signal?.removeEventListener("abort", stop);
      reject(e.code === "ENOENT" || e.code === "EACCES" ? new ConformanceError("usage", `client command ${client.command}: cannot be started (${e.code})`) : e);
    });
    child.once("exit", (exitCode, exitSignal) => {
      clearTimeout(bound);
      signal?.removeEventListener("abort", stop);
      const durationMs = Math.round(performance.now() - t0);
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(drain);
        // Whatever the client left running goes with it: nothing it started outlives its run.
        stop();
        resolve({ exitCode, signal: exitSignal, hung, durationMs, stdout: out.text(), stderr: err.text() });
      };
      const drain = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, DRAIN_MS);
      let open = 2;
      const closed = () => --open === 0 && finish();
      if (child.stdout.readableEnded || child.stdout.destroyed) closed();
      else child.stdout.once("close", closed);
      if (child.stderr.readableEnded || child.stderr.destroyed) closed();
      else child.stderr.once("close", closed);
    });
  });
}
