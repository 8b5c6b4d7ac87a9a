// Runs the CLI in process with captured output, as a user would see it.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createProgram, main } from "../../harness/cli/main.js";
import type { RunReport } from "../../harness/report.js";

// The CLI loads a command's modules when the command runs; loaded here, with the test file, they are not paid for
// inside the first test's time bound.
await createProgram({ stdout: () => undefined, stderr: () => undefined, isTty: false, env: {} }, () => undefined);

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    isTty: false,
    env: { ...env },
  });
  return { code, stdout, stderr };
}

/** Runs `check` as a user would, with a JSON report, and returns the verdicts: the IDs that failed or errored. */
export async function checkVerdicts(args: string[]): Promise<CliRun & { report: RunReport; failed: string[] }> {
  const file = join(mkdtempSync(join(tmpdir(), "verdicts-")), "report.json");
  try {
    const run = await cli(["check", ...args, "--report-json", file]);
    if (run.code === 2 || run.code > 3) throw new Error(`check ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
    const report = JSON.parse(readFileSync(file, "utf8")) as RunReport;
    const failed = report.checks
      .filter((c) => c.status === "fail" || c.status === "error")
      .map((c) => c.id)
      .sort();
    return { ...run, report, failed };
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

/**
 * stderr without check's progress lines (one every 10 s off a terminal), which a slow or loaded machine adds to a long
 * run.
 */
export const withoutProgress = (stderr: string): string => stderr.replace(/^example-conformance: progress: .*\n/gm, "");
