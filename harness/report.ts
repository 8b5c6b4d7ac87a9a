// The results of a run as data: what reporters read and runConformance returns.
import type { ResourceCapabilities } from "./capabilities.js";
import type { Area, CheckOutcome, Profile, Severity } from "./check.js";
import type { CheckTraffic } from "./traffic.js";

export type CheckStatus = CheckOutcome["status"] | "expected-fail";

/** What replays one check alone: the run's own options with these three replaced. */
export interface ReplayArgs {
  only: string;
  seed: number;
  /** fast-check's replay path, for a property check that failed. */
  path?: string;
  /**
   * The flags of the run's RPC targets the check did not use, left out of its replay line (the one it used is kept).
   */
  leaveOut?: readonly string[];
}

export interface CheckResult {
  id: string;
  title: string;
  severity: Severity;
  area: Area;
  profile: Profile;
  spec: string;
  status: CheckStatus;
  /** Why. Text the target sent may be in it, whole: every output medium neutralises it for itself. */
  message: string;
  /** Whether this result fails the run (a MUST failure in a gating profile, or any failure under --strict). */
  gating: boolean;
  durationMs: number;
  /**
   * What it sent its targets: exchanges, request bytes, round trips (harness/traffic.ts); absent for a contract or
   * client check.
   */
  traffic?: CheckTraffic;
  /** What replays this check alone, as data. */
  replayArgs: ReplayArgs;
  /** The command line that replays this check alone, when the caller gave RunOptions.replayCommand. */
  replay?: string;
  /** For a failed gRPC check: the grpcurl command that sends the last request it made, without the harness. */
  grpcurl?: string;
  /**
   * With --trace DIR, for a failed or erring check: its trace file, relative to the report's folder, or absolute as DIR
   * was given.
   */
  trace?: string;
  counterexample?: string;
  details?: string[];
  /** For an expected failure that now passes: the expectation to remove. */
  note?: string;
  /** For a skip for want of something the user can give: the flag that would judge it (CheckOutcome.needs). */
  needs?: string;
  /**
   * For such a skip that a claim of the implementation answers: the claim, "replicas: single" (declared, not judged).
   */
  claim?: string;
}

/**
 * conformant: every gating check in scope ran and none failed; conformant with waivers: the same, with failures
 * waived by --expect-failures; partial: a gating check went unjudged because the run lacked something the user can
 * give (--only/--skip left it out, or it needs a flag such as --replica), or nothing was judged at all;
 * not conformant: a gating check failed.
 */
export type Verdict = "conformant" | "conformant with waivers" | "partial" | "not conformant";

/** What was judged: the interfaces given and the contract. A gRPC-only run certifies no HTTP interface. */
export interface RunScope {
  interfaces: ("grpc" | "http" | "client")[];
  contract: string;
}

/** What gates and what was asked for. */
export interface RunSelection {
  profiles: Profile[];
  strict: boolean;
  only: string[];
  skip: string[];
}

/** A failure that did not fail the run because --expect-failures lists it. */
export interface Waiver {
  id: string;
  pattern: string;
  reason: string;
  /** YYYY-MM-DD, for an entry of the configuration file that expires. */
  expires?: string;
}

/** A gating check in scope that was not judged: left out by --only/--skip, or skipped when it ran. */
export interface Unjudged {
  id: string;
  severity: Severity;
  reason: string;
  /**
   * "selection": --only/--skip left it out; "needs": it ran and lacked an input the user can give (the flag in
   * `needs`); both make the run partial. "claimed": it needed such an input and a claim of the implementation says it
   * does not apply (`claim`, declared, not judged); "skipped": the target's own legal behaviour left nothing to judge.
   */
  why: "selection" | "needs" | "claimed" | "skipped";
  needs?: string;
  claim?: string;
}

/**
 * Where a run's signed attestation went, and the key that signed it (its securesystemslib key ID, as the envelope names
 * it).
 */
export interface RunAttestation {
  file: string;
  keyId: string;
}

export interface RunReport {
  /** The implementation under check, as the configuration file names it. */
  implementation?: { name: string; version?: string; url?: string };
  suiteVersion: string;
  contractSha256: string;
  /**
   * What was checked: the addresses, the image and its digest, the TLS certificate's SHA-256 fingerprint, the contract.
   */
  target: {
    grpc?: string;
    http?: string;
    client?: string;
    image?: string;
    imageDigest?: string;
    tlsFingerprint?: string;
    contract: string;
  };
  seed: number;
  startedAt: string;
  durationMs: number;
  checks: CheckResult[];
  verdict: Verdict;
  scope: RunScope;
  selection: RunSelection;
  waivers: Waiver[];
  unjudged: Unjudged[];
  /** What the implementation declared about itself (config `claims`), as "key: value": declared, not judged. */
  claims: string[];
  /** 0 conformant (with waivers, or partial), 1 a gating check failed. */
  exitCode: 0 | 1;
  /** With --image, when a check failed: the container's last log lines. */
  containerLog?: string[];
  /**
   * With --attestation: the signed statement of this run is written to `file`, signed by the ed25519 key of ID `keyId`.
   */
  attestation?: RunAttestation;
  /**
   * When a target asked the run to slow down (HTTP 429, or 503 with Retry-After; RESOURCE_EXHAUSTED with
   * grpc-retry-pushback-ms): the waits made, and how long.
   */
  backpressure?: { waits: number; waitedMs: number };
  /**
   * What the run learned the target offers, resource by resource, with the evidence (how a collection creates, what it
   * refuses).
   */
  capabilities?: ResourceCapabilities[];
}

export interface Reporter {
  onRunStart?(info: { total: number; target: RunReport["target"]; seed: number }): void;
  /** When a check starts running: checks run side by side, so several may be running at once. */
  onCheckStart?(check: { id: string; title: string }): void;
  /** When a check's outcome is in, as checks end; its result follows in catalogue order (onCheckResult). */
  onCheckEnd?(check: { id: string; title: string }): void;
  onCheckResult?(result: CheckResult): void;
  onRunEnd?(report: RunReport): void | Promise<void>;
}
