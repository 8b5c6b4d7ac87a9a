// The results of a run as data: what reporters read and runConformance returns.
import type { Area, CheckOutcome, Profile, Severity } from "./check.js";

export type CheckStatus = CheckOutcome["status"] | "expected-fail";

export interface CheckResult {
  id: string;
  title: string;
  severity: Severity;
  area: Area;
  profile: Profile;
  spec: string;
  status: CheckStatus;
  message: string;
  /** Whether this result fails the run (a MUST failure in a gating profile, or any failure under --strict). */
  gating: boolean;
  durationMs: number;
  /** The command line that replays this check alone. */
  replay: string;
  counterexample?: string;
  details?: string[];
  /** For an expected failure that now passes: the expectation to remove. */
  note?: string;
}

export interface RunReport {
  suiteVersion: string;
  contractSha256: string;
  target: { grpc?: string; http?: string; image?: string; contract: string };
  seed: number;
  startedAt: string;
  durationMs: number;
  checks: CheckResult[];
  /** 0 conformant, 1 a gating check failed. */
  exitCode: 0 | 1;
  /** With --image, when a check failed: the container's last log lines. */
  containerLog?: string[];
}

export interface Reporter {
  onRunStart?(info: { total: number; target: RunReport["target"]; seed: number }): void;
  onCheckStart?(check: { id: string; title: string }): void;
  onCheckResult?(result: CheckResult): void;
  onRunEnd?(report: RunReport): void | Promise<void>;
}
