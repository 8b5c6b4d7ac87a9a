// What a check is: declared once with a stable ID, a severity, the spec section it enforces, and a run that
// returns its outcome as data.
import type { CapabilityLog } from "./capabilities.js";
import type { Protocol } from "./protocols/index.js";
import type { GrpcTarget } from "./targets/grpc-target.js";
import type { HttpConfig, HttpTarget } from "./targets/http-target.js";

export type Severity = "MUST" | "SHOULD";
export type Area = "contract" | "grpc" | "http" | "client";
/**
 * contract: what the implementer controls; gates by default.
 * protocol: what the gRPC library underneath controls; shown, and gates only when asked.
 */
export type Profile = "contract" | "protocol";

export type ReplicaMode = "stateless" | "equal";

/** The protocols an RPC target may speak: the keys of PROTOCOLS (harness/protocols/index.ts). */
export type { Protocol };

/**
 * How a check shares the targets with the other checks of a run while it runs:
 * - "shared" (the default): beside any other check;
 * - "serial": one at a time with the other serial checks of its area, in catalogue order (HTTP checks that create,
 *   change and read resources of one space), beside the rest; those next to each other that say they are
 *   `independent` run side by side (with a limit above 1);
 * - "alone": before the others, one at a time, with nothing else in flight. For checks that compare replies and
 *   call the targets directly (not through the gate below): what other checks send (data they store, which may
 *   legally change a reply; calls of their own) would change what they see.
 * - "history": after the "alone" checks and before the rest, beside the other "history" checks only (each sends
 *   bodies of its own, and nothing a legal server is sent changes its reply to another's new request). For the
 *   checks that compare replies over time or count calls through suites/grpc/_internals/calls.ts: a probe among
 *   them whose question is what came between two of its calls (counting calls, sampling a reply, a leak) takes the
 *   target to itself for that moment (suites/grpc/_internals/exclusive.ts). With --concurrency 1, one at a time.
 *   When every history check of the catalogue runs, the HTTP serial lane runs beside them (another target's calls):
 *   their results stand when each passed, and are judged again after the lane otherwise, since the data it stores
 *   may legally change a reply (harness/runner.ts, historyBesideLane).
 */
export type Sharing = "shared" | "serial" | "alone" | "history";

export type OutcomeStatus = "pass" | "fail" | "skip" | "error";

export interface CheckOutcome {
  status: OutcomeStatus;
  /** Why: for a failure the defect, for a skip the reason, for a pass what was shown. */
  message: string;
  /** The smallest failing input, after shrinking, for property checks. */
  counterexample?: string;
  /** fast-check's replay path, with the run's seed. */
  path?: string;
  /** Extra lines worth reading: evidence, the curl or grpcurl command that reproduces it. */
  details?: string[];
  /**
   * For a check ended because the target stopped answering: the requests it had been sent and never answered when it
   * went silent, likeliest first (harness/targets/guards.ts); the report names each with what replays it.
   */
  suspects?: readonly (Uint8Array | undefined)[];
  /**
   * For a skip: the flag that would let the check judge, when what it lacked is something the user can give
   * (`--replica`, `--api-key`). A gating check skipped so makes the run "partial", never "conformant"; a skip without
   * it (the target's own legal behaviour) does not.
   */
  needs?: string;
}

export interface CheckContext {
  /** The contract under check: the folder that holds example/example.proto. */
  contractDir: string;
  /** Present when a gRPC target was given or started; grpc checks are skipped without one. */
  grpc?: GrpcTarget;
  /**
   * Every RPC target of the run, one a protocol, grpc first (--grpc, --connect and --grpc-web together; the built-in
   * reference gives all three): `grpc` is the one the check runs over, chosen among them by its protocols.
   */
  rpcTargets?: readonly GrpcTarget[];
  /** Present when an HTTP base URL was given; http checks are skipped without one. */
  http?: HttpTarget;
  /** What the HTTP checks are told about the target: collections, OpenAPI document, API key. */
  httpConfig?: HttpConfig;
  /** Other instances of the same service (--replica). */
  replicas: readonly GrpcTarget[];
  /**
   * How replicas are judged: "stateless" (default), history built on one instance does not change another's replies;
   * "equal", every instance gives the same reply to the same request.
   */
  replicaMode?: ReplicaMode;
  /** Bound on one call, in milliseconds. */
  timeoutMs: number;
  /** Facts about the target shared between checks of one run (computed once, on first use). */
  memo: Map<string, Promise<unknown>>;
  /** What the run learned the target offers, for the report; absent where nothing reports it (a unit test). */
  capabilities?: CapabilityLog;
  seed: number;
  /** Cases per property. */
  runs: number;
  /** fast-check path to replay one failing case. */
  path?: string;
  /** Aborted when the run's time is up. */
  signal: AbortSignal;
  /**
   * Calls a check may have in flight at once, for cases of its own that do not depend on each other (--concurrency).
   */
  parallelism: number;
}

export interface CheckDefinition {
  /** Stable snake.dotted ID; never renamed, only retired. */
  id: string;
  title: string;
  severity: Severity;
  area: Area;
  profile: Profile;
  /** The part of the interface specification (or protocol document) the check enforces. */
  spec: string;
  /** How it shares the targets with other checks; default "shared". */
  sharing?: Sharing;
  /**
   * For a "serial" check: what it judges is only what it stores itself, read by the URIs it was given, and the status
   * of what it reads beside (never a listing's contents, an order of requests or a connection), so data other checks
   * store or delete meanwhile cannot change its verdict. Serial checks that say so and stand next to each other in
   * the catalogue run side by side, within the limit, and never beside a serial check that does not
   * (harness/scheduler.ts).
   */
  independent?: boolean;
  /**
   * For an RPC check (area "grpc"): the protocols it applies to; default every one. A check that builds requests by
   * hand for one protocol's wire rules names that protocol alone; over another it is skipped, saying so.
   */
  protocols?: readonly (Protocol | (string & {}))[];
  /** "all": the check speaks to every RPC target of the run itself (ctx.rpcTargets), and its replay keeps them all. */
  rpcTargets?: "one" | "all";
  /**
   * Starts work the check will need that asks no target anything (a file read, a table built in memory), as the
   * run's checks start, so that it goes on beside the checks ahead of it instead of after them; `run` awaits it
   * itself (what it starts is memoised). Never throws, never calls a target.
   */
  prepare?(ctx: CheckContext): void;
  run(ctx: CheckContext): Promise<CheckOutcome>;
}

export const pass = (message: string, extra: Partial<CheckOutcome> = {}): CheckOutcome => ({
  status: "pass",
  message,
  ...extra,
});
export const fail = (message: string, extra: Partial<CheckOutcome> = {}): CheckOutcome => ({
  status: "fail",
  message,
  ...extra,
});
export const skip = (message: string, needs?: string): CheckOutcome => ({
  status: "skip",
  message,
  ...(needs !== undefined && { needs }),
});

/**
 * The target an RPC check runs over: the first of the run's RPC targets (grpc first, then as given) whose protocol
 * the check applies to; the first target when none is (the check is then skipped, saying which protocols it needs).
 */
export function rpcTargetFor<T extends { protocol: string }>(
  check: Pick<CheckDefinition, "protocols">,
  targets: readonly T[],
): T | undefined {
  const applies = check.protocols as readonly string[] | undefined;
  return targets.find((t) => applies === undefined || applies.includes(t.protocol)) ?? targets[0];
}
