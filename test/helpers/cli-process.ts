// Runs the real CLI as its own process, as CI does: the process must end by itself, and its raw bytes are kept.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../contract/paths.js";

export interface CliProcessRun {
  code: number | null;
  signal: string | null;
  /** The bytes as written, decoded as UTF-8. */
  stdout: string;
  stderr: string;
  ms: number;
}

/** A backstop against a hung harness, far above what a run needs: not a speed claim. */
export const BACKSTOP_MS = 90_000;

export function runCliProcess(
  args: string[],
  env: Record<string, string> = {},
  backstopMs = BACKSTOP_MS,
): Promise<CliProcessRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // Only what the run needs from this process's environment: a GITHUB_ACTIONS or EXAMPLE_API_KEY of the
    // machine running the tests must not change what is asserted.
    const base = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...(process.env.CI !== undefined && { CI: process.env.CI }),
    };
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, "bin", "example-conformance.js"), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...base, ...env },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    const backstop = setTimeout(() => child.kill("SIGKILL"), backstopMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(backstop);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ms: Math.round(performance.now() - started),
      });
    });
  });
}
