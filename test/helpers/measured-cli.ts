// Runs the real CLI as its own process and measures its peak resident memory (VmHWM of /proc/PID/status, the
// kernel's own high-water mark), so a test can bound what a hostile target makes the harness hold.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import { BACKSTOP_MS, type CliProcessRun } from "./cli-process.js";

/** The bound docs/reliability.md documents on a run's peak RSS, whatever the target does. */
export const PEAK_RSS_BOUND_MIB = 512;

export interface MeasuredRun extends CliProcessRun {
  /** The process's peak resident set in MiB, as last read before it ended (VmHWM only grows). */
  peakRssMib: number;
}

function highWaterMib(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith("VmHWM:"));
    return line === undefined ? undefined : Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024;
  } catch {
    return undefined;
  }
}

export function runMeasured(
  args: string[],
  env: Record<string, string> = {},
  backstopMs = BACKSTOP_MS,
): Promise<MeasuredRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const base = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, "bin", "example-conformance.js"), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...base, ...env },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let peak = 0;
    const sample = () => {
      if (child.pid !== undefined) peak = Math.max(peak, highWaterMib(child.pid) ?? 0);
    };
    // VmHWM is the kernel's peak: sampling often enough only to read it before the process is gone.
    const sampler = setInterval(sample, 20);
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    // The last sample, as the process ends and before it is reaped.
    child.stdout.once("end", sample);
    const backstop = setTimeout(() => child.kill("SIGKILL"), backstopMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearInterval(sampler);
      clearTimeout(backstop);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ms: Math.round(performance.now() - started),
        peakRssMib: Math.round(peak),
      });
    });
  });
}
