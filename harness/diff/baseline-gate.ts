// `check --baseline FILE --fail-on new|any|none`: the run compared with an earlier report when it ends, and the exit
// code the comparison asks for. The verdict and every report stay the run's own: only the exit code follows --fail-on.
import { ConformanceError } from "../errors.js";
import type { Reporter, RunReport } from "../report.js";
import { compareRuns, diffExitCode, FAIL_ON, type ComparableReport, type FailOn } from "./compare-runs.js";
import { diffText } from "./format-diff.js";
import { loadReport } from "./load-report.js";

export interface BaselineGate {
  reporter: Reporter;
  /**
   * The exit code to use in place of the run's own (1, 0) when the run ended; other codes (2, 3, 5, 70) pass through.
   */
  exitCode(runExitCode: number): number;
}

/**
 * Reads the baseline before the run (a file that cannot be read is exit 2 before the first call). Without
 * --baseline, --fail-on other than its default is a usage error: there is nothing to compare with.
 */
export async function createBaselineGate(
  baseline: string | undefined,
  failOn: string | undefined,
  write: (text: string) => void,
): Promise<BaselineGate | undefined> {
  if (failOn !== undefined && !(FAIL_ON as readonly string[]).includes(failOn))
    throw new ConformanceError("usage", `--fail-on ${failOn}: expected one of ${FAIL_ON.join(", ")}`);
  if (baseline === undefined) {
    if (failOn !== undefined)
      throw new ConformanceError(
        "usage",
        `--fail-on ${failOn} compares with a baseline: give --baseline FILE (an earlier run's --report-json)`,
      );
    return undefined;
  }
  const before: ComparableReport = await loadReport(baseline, "--baseline");
  const mode = (failOn ?? "any") as FailOn;
  let decided: 0 | 1 | undefined;
  return {
    reporter: {
      onRunEnd(report: RunReport) {
        const diff = compareRuns(before, report);
        decided = diffExitCode(diff, mode, report.exitCode);
        write(`\nagainst the baseline ${baseline}:\n${diffText(diff, mode, decided)}`);
      },
    },
    exitCode: (code) => (code <= 1 && decided !== undefined ? decided : code),
  };
}
