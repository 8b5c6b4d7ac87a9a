// Runs the real CLI as its own process and measures its peak resident memory (VmHWM of /proc/PID/status, the
// kernel's own high-water mark) and the CPU it used, so a test can bound what a hostile target makes the harness hold
// and spend.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../common/paths.js";
import { BACKSTOP_MS, type CliProcessRun } from "./cli-process.js";

/** The bound docs/reliability.md documents on a run's peak RSS, whatever the target does. */
export const PEAK_RSS_BOUND_MIB = 512;

export interface MeasuredRun extends CliProcessRun {
  /** The process's peak resident set in MiB, as last read before it ended (VmHWM only grows). */
  peakRssMib: number;
  /**
   * The CPU the process had used (user and system, /proc/PID/stat), as last read before it ended: what its work cost,
   * whatever else the machine was doing.
   */
  cpuMs: number;
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

/** Clock ticks a second, as /proc reports CPU times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

function cpuMsOf(pid: number): number | undefined {
  try {
    // After the name in parentheses: field 3 is the state, 14 and 15 (index 11 and 12 here) utime and stime.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
      .replace(/^.*\) /s, "")
      .split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
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
    let cpuMs = 0;
    const sample = () => {
      if (child.pid === undefined) return;
      peak = Math.max(peak, highWaterMib(child.pid) ?? 0);
      cpuMs = Math.max(cpuMs, cpuMsOf(child.pid) ?? 0);
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
        cpuMs,
      });
    });
  });
}
