// The engine: selects checks, runs each with a time bound, and returns the results as data.
import { createHash, randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { CheckDefinition, CheckOutcome, Profile, ReplicaMode } from "./check.js";
import { claimAnswering, claimList, type Claims } from "./claims.js";
import type { Implementation } from "./config/config-file.js";
import { ConformanceError } from "./errors.js";
import { failingCall, grpcurlCommand, recording, type RecordedCall } from "./grpcurl.js";
import { expectationFor, expired, loadExpectations, type Expectation } from "./expectations.js";
import { CONTRACT_DIR } from "../contract/paths.js";
import { hasCredentials, withoutCredentials } from "./_internals/url-credentials.js";
import type { CheckResult, ReplayArgs, Reporter, RunReport, Unjudged, Verdict, Waiver } from "./report.js";
import { DEFAULT_CONCURRENCY, schedule } from "./scheduler.js";
export { DEFAULT_CONCURRENCY };
import { matches, selectChecks } from "./selection.js";
import { openSession, runCheck, type HttpRunTarget } from "./session.js";
import type { GrpcTargetOptions } from "./targets/create-grpc-target.js";
import { parseHttpBaseUrl } from "./targets/http-base-url.js";
import { API_KEY_PLACEHOLDER } from "./targets/http-curl.js";
import { SUITE_VERSION } from "./version.js";

export interface RunOptions {
  /** Folder of the contract under check; default the shipped one. */
  contract?: string;
  only?: readonly string[];
  skip?: readonly string[];
  /** fast-check seed; random when absent, and always reported. */
  seed?: number;
  /** Cases per property. */
  runs?: number;
  /** fast-check replay path, with --only and --seed. */
  path?: string;
  /** SHOULD failures and protocol-profile failures gate too. */
  strict?: boolean;
  /** Profiles that gate; contract always does. */
  profiles?: readonly Profile[];
  /** Bound on one check's run, in milliseconds. */
  checkTimeoutMs?: number;
  /** Checks run side by side, at most this many at once (see CheckDefinition.sharing); and a check's own independent cases. */
  concurrency?: number;
  reporters?: readonly Reporter[];
  /** The checks to choose from, in the order a run reports them: the engine is given its checks (the CLI gives it the catalogue). */
  checks: readonly CheckDefinition[];
  /** The gRPC target; grpc checks are skipped without one. */
  grpc?: GrpcTargetOptions;
  /** Other instances of the same service, reached with the same options. */
  replicas?: readonly string[];
  /** How replicas are judged (see CheckContext.replicaMode). */
  replicaMode?: ReplicaMode;
  /** The HTTP target; http checks are skipped without one. */
  http?: HttpRunTarget;
  /** The implementation under check, as the configuration names it: the report names it. */
  implementation?: Implementation;
  /** What the implementation declares about itself: a check that needs what a claim rules out is not applicable. */
  claims?: Claims;
  /** Expected failures given as data (the configuration file's), beside those of `expectFailures`. */
  expectations?: readonly Expectation[];
  /** File of check-ID patterns, each with a # reason, whose failures are expected. */
  expectFailures?: string;
  /** The targets are the built-in reference server (the report says so). */
  builtIn?: boolean;
  /** The targets run in a container started from this image: the report names it, and a failed run keeps its log. */
  image?: { name: string; digest?: string; logTail(): string[] };
  /** SHA-256 fingerprint of the TLS certificate the target presented, when the run spoke TLS: the report names it. */
  tlsFingerprint?: string;
  /**
   * Renders the command line that replays one check (the CLI renders the user's own invocation); without it
   * each result carries only its replay arguments as data.
   */
  replayCommand?: (args: ReplayArgs) => string;
}

export const METADATA_PLACEHOLDER = "<METADATA_VALUE>";
/** Shorter values are not taken for secrets: replacing every "1" of a report would hide what it says. */
const MIN_SECRET_LENGTH = 3;

/** Replaces every secret of the run (the API key, metadata values) in text bound for a report or the console. */
function createRedactor(options: RunOptions): (text: string) => string {
  const secrets: [string, string][] = [];
  if (options.http?.apiKey !== undefined) secrets.push([options.http.apiKey, API_KEY_PLACEHOLDER]);
  for (const v of Object.values(options.grpc?.metadata ?? {})) secrets.push([v, METADATA_PLACEHOLDER]);
  const live = secrets.filter(([s]) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b[0].length - a[0].length);
  // A value derived from a secret (the key with "-wrong" after it, say) contains it, so it is replaced too.
  return (text) => live.reduce((t, [secret, placeholder]) => t.split(secret).join(placeholder), text);
}

/** What the run judged, in words and as data: the verdict, its scope, the waivers and the gating checks left unjudged. */
function judge(
  all: readonly CheckDefinition[],
  selected: readonly CheckDefinition[],
  results: readonly CheckResult[],
  options: RunOptions,
  expectations: readonly Expectation[],
): Pick<RunReport, "verdict" | "waivers" | "unjudged"> {
  const inScope = (c: Pick<CheckDefinition, "area">) => c.area === "contract" || (c.area === "grpc" && options.grpc !== undefined) || (c.area === "http" && options.http !== undefined);
  const chosen = new Set(selected.map((c) => c.id));
  const unjudged: Unjudged[] = [];
  for (const c of all) {
    if (!inScope(c) || !gates(c, options)) continue;
    if (!chosen.has(c.id)) {
      const skippedBy = (options.skip ?? []).find((p) => matches(p, c.id));
      unjudged.push({ id: c.id, severity: c.severity, why: "selection", reason: skippedBy !== undefined ? `--skip ${skippedBy}` : `not in --only ${(options.only ?? []).join(",")}` });
      continue;
    }
    const r = results.find((x) => x.id === c.id);
    if (r?.status !== "skip") continue;
    const base = { id: c.id, severity: c.severity, reason: r.message };
    if (r.claim !== undefined) unjudged.push({ ...base, why: "claimed", claim: r.claim, ...(r.needs !== undefined && { needs: r.needs }) });
    else if (r.needs !== undefined) unjudged.push({ ...base, why: "needs", needs: r.needs });
    else unjudged.push({ ...base, why: "skipped" });
  }
  const waivers: Waiver[] = results
    .filter((r) => r.status === "expected-fail")
    .map((r) => {
      const e = expectationFor(r.id, expectations) as Expectation;
      return { id: r.id, pattern: e.pattern, reason: e.reason, ...(e.expires !== undefined && { expires: e.expires }) };
    });
  const judgedAny = results.some((r) => r.status !== "skip");
  const verdict: Verdict = results.some((r) => r.gating)
    ? "not conformant"
    : !judgedAny || unjudged.some((u) => u.why === "selection" || u.why === "needs")
      ? "partial"
      : waivers.length > 0
        ? "conformant with waivers"
        : "conformant";
  return { verdict, waivers, unjudged };
}

/**
 * Every implementation of the service speaks gRPC (Connect and gRPC-Web are its choice): a check of gRPC's own wire
 * rules, skipped because the run spoke another protocol, could be judged with --grpc. A check of an optional
 * protocol's rules on a gRPC run needs nothing: the server need not speak it.
 */
function protocolNeeded(check: CheckDefinition, options: RunOptions): string | undefined {
  const spoken = options.grpc?.protocol ?? "grpc";
  if (check.area !== "grpc" || !options.grpc || !check.protocols || (check.protocols as readonly string[]).includes(spoken)) return undefined;
  return check.protocols.includes("grpc") ? "--grpc" : undefined;
}

/**
 * For a failed RPC check: the grpcurl command that sends the request that shows it (failingCall). Not for a property
 * check, whose calls include shrinking steps: its counterexample and replay path say what failed.
 */
function grpcurlOf(outcome: CheckOutcome, calls: readonly RecordedCall[] | undefined, options: RunOptions, contractDir: string, redact: (t: string) => string): Pick<CheckResult, "grpcurl"> {
  if ((outcome.status !== "fail" && outcome.status !== "error") || outcome.path !== undefined || outcome.counterexample !== undefined) return {};
  const last = failingCall(calls ?? []);
  if (!last || !options.grpc) return {};
  const line = grpcurlCommand(last, options.grpc, contractDir, METADATA_PLACEHOLDER);
  return line !== undefined ? { grpcurl: redact(line) } : {};
}

/** "listed in --expect-failures (pattern, line 3)" or "listed in example-conformance.yaml:12 (pattern)". */
function listedWords(e: Expectation): string {
  return e.source !== undefined ? `listed in ${e.source}:${e.line} (${e.pattern})` : `listed in --expect-failures (${e.pattern}, line ${e.line})`;
}

const DEFAULT_RUNS = 100;
const DEFAULT_CHECK_TIMEOUT_MS = 60_000;

export function contractSha256(dir: string): string {
  const file = join(dir, "example", "example.proto");
  try {
    return createHash("sha256").update(readFileSync(file)).digest("hex");
  } catch {
    throw new ConformanceError("usage", `--contract ${dir}: no example/example.proto in it`);
  }
}

async function timed<T>(run: () => Promise<T>): Promise<{ outcome: T; ms: number }> {
  const t0 = performance.now();
  const outcome = await run();
  return { outcome, ms: performance.now() - t0 };
}

/** Whether a failure of this check fails the run under these options. */
export function gates(check: Pick<CheckDefinition, "severity" | "profile">, options: Pick<RunOptions, "strict" | "profiles">): boolean {
  if (options.strict) return true;
  const profiles = new Set<Profile>(["contract", ...(options.profiles ?? [])]);
  return profiles.has(check.profile) && check.severity === "MUST";
}

/** Runs the selected checks and returns the report; throws only for usage errors and unreachable targets. */
export async function runConformance(options: RunOptions): Promise<RunReport> {
  const all = options.checks;
  const contractDir = resolve(options.contract ?? CONTRACT_DIR);
  const sha = contractSha256(contractDir);
  const checks = selectChecks(all, {
    ...(options.only && { only: options.only }),
    ...(options.skip && { skip: options.skip }),
  });
  const inScope = checks.filter((c) => c.area === "contract" || (c.area === "grpc" && options.grpc) || (c.area === "http" && options.http));
  if (inScope.length === 0) {
    const given = [options.grpc && "gRPC", options.http && "HTTP"].filter(Boolean).join(" and ") || "no";
    throw new ConformanceError(
      "usage",
      checks.length === 0
        ? "--only/--skip: the selection leaves no check to run, so nothing would be judged"
        : `--only/--skip: the ${checks.length} selected check(s) need an interface that was not given (${given} target given), so nothing would be judged`,
    );
  }
  const redact = createRedactor(options);
  const expectations = [...(options.expectFailures ? loadExpectations(options.expectFailures, all) : []), ...(options.expectations ?? [])];
  if (options.http) {
    if (hasCredentials(options.http.baseUrl)) {
      throw new ConformanceError("usage", `http.baseUrl ${withoutCredentials(options.http.baseUrl)}: credentials in the URL are not supported (give the key as http.apiKey)`);
    }
    parseHttpBaseUrl(options.http.baseUrl);
  }
  const seed = options.seed ?? randomInt(0, 2 ** 31 - 1);
  const reporters = options.reporters ?? [];
  const target: RunReport["target"] = {
    contract: options.contract ?? "proto (shipped)",
    ...(options.grpc && {
      grpc: `${options.grpc.address}${(options.grpc.protocol ?? "grpc") === "grpc" ? "" : ` (${options.grpc.protocol})`}${options.builtIn ? " (built-in reference server)" : ""}`,
    }),
    ...(options.http && { http: options.builtIn ? `${options.http.baseUrl} (built-in reference server)` : options.http.baseUrl }),
    ...(options.image && { image: options.image.name }),
    ...(options.image?.digest !== undefined && { imageDigest: options.image.digest }),
    ...(options.tlsFingerprint !== undefined && { tlsFingerprint: options.tlsFingerprint }),
  };
  const session = await openSession(
    {
      ...(options.contract !== undefined && { contract: options.contract }),
      ...(options.grpc && { grpc: options.grpc }),
      ...(options.replicas && { replicas: options.replicas }),
      ...(options.replicaMode !== undefined && { replicaMode: options.replicaMode }),
      ...(options.http && { http: options.http }),
      seed,
      runs: options.runs ?? DEFAULT_RUNS,
      ...(options.path !== undefined && { path: options.path }),
      parallelism: options.concurrency ?? DEFAULT_CONCURRENCY,
    },
    { grpc: checks.some((c) => c.area === "grpc"), http: checks.some((c) => c.area === "http") },
  );
  const startedAt = new Date();
  const t0 = performance.now();
  for (const r of reporters) r.onRunStart?.({ total: checks.length, target, seed });

  const results: CheckResult[] = [];
  const checkTimeout = options.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  // Each RPC check's unary calls are remembered, so that its failure can name the grpcurl command that repeats it.
  const calls = new Map<string, RecordedCall[]>();
  const contextFor = (c: CheckDefinition) => {
    const ctx = session.context();
    if (c.area !== "grpc" || !ctx.grpc) return ctx;
    const mine: RecordedCall[] = [];
    calls.set(c.id, mine);
    return { ...ctx, grpc: recording(ctx.grpc, mine) };
  };
  const runOne = (c: CheckDefinition) => timed(() => runCheck(c, contextFor(c), checkTimeout));
  // Contract checks read files and run buf, never the target: they start now, beside the target's checks, which
  // run side by side within --concurrency as each declares it may. Results are reported in catalogue order.
  const contract = checks.filter((c) => c.area === "contract");
  const onTarget = checks.filter((c) => c.area !== "contract");
  const started = new Map([
    ...contract.map((c) => [c.id, runOne(c)] as const),
    ...schedule(onTarget, concurrency, runOne).map((p, i) => [(onTarget[i] as CheckDefinition).id, p] as const),
  ]);
  // Awaited in order below; until then a rejection (a usage error) must not count as unhandled.
  for (const p of started.values()) p.catch(() => undefined);
  try {
    for (const check of checks) {
      for (const r of reporters) r.onCheckStart?.(check);
      const { outcome, ms } = await (started.get(check.id) as ReturnType<typeof runOne>);
      const expected = expectationFor(check.id, expectations);
      const listing = expected && listedWords(expected);
      let status: CheckResult["status"] = outcome.status;
      let note: string | undefined;
      // An expected failure the list holds to account (the configuration's): expired, or no longer failing, fails the run.
      let stale = false;
      if (expected && expired(expected, startedAt) && outcome.status !== "skip") {
        stale = true;
        note = `${listing} expired on ${expected.expires}: it waives nothing now (renew it with a reason, or fix the failure)`;
      } else if (expected && (outcome.status === "fail" || outcome.status === "error")) {
        status = "expected-fail";
        note = `expected to fail: ${expected.reason}`;
      } else if (expected && outcome.status === "pass") {
        stale = expected.mustStillFail === true;
        if (stale) status = "fail";
        note = `${listing} but passed: remove it from the list`;
      }
      const needs = outcome.status === "skip" ? (outcome.needs ?? protocolNeeded(check, options)) : undefined;
      const claim = needs !== undefined ? claimAnswering(options.claims, needs) : undefined;
      const replayArgs: ReplayArgs = { only: check.id, seed, ...(outcome.path !== undefined && { path: outcome.path }) };
      const result: CheckResult = {
        id: check.id,
        title: check.title,
        severity: check.severity,
        area: check.area,
        profile: check.profile,
        spec: check.spec,
        status,
        message: claim !== undefined ? `not applicable by claim (${claim}: declared by the implementation, not judged); ${redact(outcome.message)}` : stale ? `${note}; the check: ${redact(outcome.message)}` : redact(outcome.message),
        gating: stale || (gates(check, options) && (status === "fail" || status === "error")),
        durationMs: Math.round(ms),
        replayArgs,
        ...(options.replayCommand && { replay: options.replayCommand(replayArgs) }),
        ...(outcome.counterexample !== undefined && { counterexample: redact(outcome.counterexample) }),
        ...(outcome.details && { details: outcome.details.map(redact) }),
        ...(note !== undefined && { note }),
        ...grpcurlOf(outcome, calls.get(check.id), options, contractDir, redact),
        ...(needs !== undefined && { needs }),
        ...(claim !== undefined && { claim }),
      };
      results.push(result);
      for (const r of reporters) r.onCheckResult?.(result);
    }
  } finally {
    await session.close();
  }
  const report: RunReport = {
    ...(options.implementation && { implementation: options.implementation }),
    suiteVersion: SUITE_VERSION,
    contractSha256: sha,
    target,
    seed,
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    checks: results,
    ...judge(all, checks, results, options, expectations),
    claims: claimList(options.claims),
    scope: {
      interfaces: [...(options.grpc ? (["grpc"] as const) : []), ...(options.http ? (["http"] as const) : [])],
      contract: target.contract,
    },
    selection: {
      profiles: [...new Set<Profile>(["contract", ...(options.profiles ?? [])])],
      strict: options.strict === true,
      only: [...(options.only ?? [])],
      skip: [...(options.skip ?? [])],
    },
    exitCode: results.some((r) => r.gating) ? 1 : 0,
  };
  if (report.exitCode !== 0 && options.image) report.containerLog = options.image.logTail().map(redact);
  for (const r of reporters) await r.onRunEnd?.(report);
  return report;
}
