// Two runs' reports compared check by check: what newly fails, what newly passes, what still fails, and what the
// newer run no longer judged; and the exit code a team asks for with --fail-on, so a gate can ratchet.
import type { CheckStatus, RunReport } from "../report.js";

/** When the comparison fails a job: never; on a gating failure the baseline did not have; on any gating failure. */
export const FAIL_ON = ["none", "new", "any"] as const;
export type FailOn = (typeof FAIL_ON)[number];

/** What a compared report must hold: the checks and what the run was about (the rest is not read). */
export type ComparableReport = Pick<RunReport, "checks"> &
  Partial<Pick<RunReport, "target" | "suiteVersion" | "contractSha256" | "seed" | "verdict">>;

export interface DiffEntry {
  id: string;
  /**
   * Whether the failure gates: the newer run's (for one newly passing or no longer judged, the older one's); false for
   * a pass.
   */
  gating: boolean;
  before?: CheckStatus;
  after?: CheckStatus;
  /** The newer run's message (the older one's for a check no longer judged): target text, shown inert. */
  message: string;
}

export interface RunDiff {
  /** Failing now, and passing, skipped or absent in the baseline. */
  newlyFailing: DiffEntry[];
  /** Passing now, failing in the baseline. */
  newlyPassing: DiffEntry[];
  /** Failing in both: the known failures. */
  stillFailing: DiffEntry[];
  /** Judged (passed or failed) in the baseline, skipped or not run now: neither better nor worse, unknown. */
  noLongerJudged: DiffEntry[];
  /** Why the two runs may not be comparable: another target, suite version or contract. */
  notes: string[];
}

/** A failure, waived or not: `expected-fail` is a known failure the run was told about. */
const failing = (s: CheckStatus | undefined): boolean => s === "fail" || s === "error" || s === "expected-fail";
const judged = (s: CheckStatus | undefined): boolean => s !== undefined && s !== "skip";

function differences(before: ComparableReport, after: ComparableReport): string[] {
  const notes: string[] = [];
  const b = before.target ?? { contract: "" };
  const a = after.target ?? { contract: "" };
  for (const key of ["grpc", "http", "image"] as const) {
    if (b[key] !== a[key])
      notes.push(`the runs checked different targets (${key}: ${b[key] ?? "none"} then ${a[key] ?? "none"})`);
  }
  if (before.suiteVersion !== after.suiteVersion)
    notes.push(
      `the runs used different suite versions (${before.suiteVersion ?? "?"} then ${after.suiteVersion ?? "?"})`,
    );
  if (before.contractSha256 !== after.contractSha256)
    notes.push("the runs judged different contracts (another SHA-256)");
  return notes;
}

export function compareRuns(before: ComparableReport, after: ComparableReport): RunDiff {
  const old = new Map(before.checks.map((c) => [c.id, c]));
  const diff: RunDiff = {
    newlyFailing: [],
    newlyPassing: [],
    stillFailing: [],
    noLongerJudged: [],
    notes: differences(before, after),
  };
  const seen = new Set<string>();
  for (const now of after.checks) {
    seen.add(now.id);
    const was = old.get(now.id);
    const entry: DiffEntry = {
      id: now.id,
      gating: now.gating,
      ...(was && { before: was.status }),
      after: now.status,
      message: now.message,
    };
    if (failing(now.status)) (failing(was?.status) ? diff.stillFailing : diff.newlyFailing).push(entry);
    else if (now.status === "pass" && failing(was?.status))
      diff.newlyPassing.push({ ...entry, gating: was?.gating ?? false });
    else if (!judged(now.status) && judged(was?.status))
      diff.noLongerJudged.push({ ...entry, gating: was?.gating ?? false, message: was?.message ?? "" });
  }
  for (const was of before.checks) {
    if (seen.has(was.id) || !judged(was.status)) continue;
    diff.noLongerJudged.push({ id: was.id, gating: was.gating, before: was.status, message: was.message });
  }
  return diff;
}

/** A gating failure of the newer run that the baseline did not have: what `--fail-on new` fails on. */
export const newGatingFailures = (diff: RunDiff): DiffEntry[] =>
  diff.newlyFailing.filter((e) => e.gating && e.after !== "expected-fail");

/**
 * The exit code: 1 when the newer run fails as --fail-on asks, else 0. `any` is the newer run's own verdict
 * (its exit code, 1 on any gating failure); `new` only a gating failure the baseline did not have.
 */
export function diffExitCode(diff: RunDiff, failOn: FailOn, afterExitCode: number): 0 | 1 {
  if (failOn === "any") return afterExitCode === 1 ? 1 : 0;
  if (failOn === "new") return newGatingFailures(diff).length > 0 ? 1 : 0;
  return 0;
}
