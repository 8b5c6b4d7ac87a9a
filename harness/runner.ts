// The engine: selects checks, runs each with a time bound, and returns the results as data.
import { createHash, randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { rpcTargetFor, type CheckContext, type CheckDefinition, type CheckOutcome, type Profile } from "./check.js";
import { GRPC, grpcProtocol } from "./protocols/grpc/index.js";
import { protocolModule } from "./protocols/index.js";
import { claimAnswering, claimList } from "./claims.js";
import { ConformanceError } from "./errors.js";
import { failingCall, recording, type RecordedCall } from "./call-recorder.js";
import { grpcurlCommand } from "./grpcurl.js";
import { expectationFor, expired, loadExpectations, type Expectation } from "./expectations.js";
import { CONTRACT_DIR } from "../common/paths.js";
import type { CheckResult, ReplayArgs, Reporter, RunReport, Unjudged, Verdict, Waiver } from "./report.js";
import { schedule, type Overlap } from "./scheduler.js";
import { matches, selectChecks } from "./selection.js";
import { openResolvedSession, runCheck, type Session } from "./session.js";
import type { Unanswered } from "./targets/answer-tally.js";
import { refusingLine } from "./targets/backpressure.js";
import { resolveRunConfig, type ResolvedGrpcTarget, type RunConfig, type RunOptions } from "./run-config.js";

export type { RunOptions };
import { describeSent } from "./targets/guards.js";
import { API_KEY_PLACEHOLDER } from "./targets/http-curl.js";
import { SUITE_VERSION } from "./version.js";
import type { TraceWriter } from "./trace/trace-writer.js";
import type { TraceSink } from "./trace/exchange-record.js";
import { createTrafficCounter, type TrafficCounter } from "./traffic.js";

import { METADATA_PLACEHOLDER } from "./_internals/metadata-placeholder.js";

export { METADATA_PLACEHOLDER };
/** Shorter values are not taken for secrets: replacing every "1" of a report would hide what it says. */
const MIN_SECRET_LENGTH = 3;

/** Replaces every secret of the run (the API key, metadata values) in text bound for a report or the console. */
function createRedactor(options: RunOptions): (text: string) => string {
  const secrets: [string, string][] = [];
  if (options.http?.apiKey !== undefined) secrets.push([options.http.apiKey, API_KEY_PLACEHOLDER]);
  if (options.clientApiKey !== undefined) secrets.push([options.clientApiKey, API_KEY_PLACEHOLDER]);
  for (const v of Object.values(options.grpc?.metadata ?? {})) secrets.push([v, METADATA_PLACEHOLDER]);
  const live = secrets.filter(([s]) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b[0].length - a[0].length);
  // A value derived from a secret (the key with "-wrong" after it, say) contains it, so it is replaced too.
  return (text) => live.reduce((t, [secret, placeholder]) => t.split(secret).join(placeholder), text);
}

/**
 * What the run judged, in words and as data: the verdict, its scope, the waivers and the gating checks left unjudged.
 */
function judge(
  all: readonly CheckDefinition[],
  selected: readonly CheckDefinition[],
  results: readonly CheckResult[],
  options: RunOptions,
  expectations: readonly Expectation[],
): Pick<RunReport, "verdict" | "waivers" | "unjudged"> {
  const chosen = new Set(selected.map((c) => c.id));
  const unjudged: Unjudged[] = [];
  for (const c of all) {
    if (!inScope(c, options) || !gates(c, options)) continue;
    if (!chosen.has(c.id)) {
      const skippedBy = (options.skip ?? []).find((p) => matches(p, c.id));
      unjudged.push({
        id: c.id,
        severity: c.severity,
        why: "selection",
        reason: skippedBy !== undefined ? `--skip ${skippedBy}` : `not in --only ${(options.only ?? []).join(",")}`,
      });
      continue;
    }
    const r = results.find((x) => x.id === c.id);
    if (r?.status !== "skip") continue;
    const base = { id: c.id, severity: c.severity, reason: r.message };
    if (r.claim !== undefined)
      unjudged.push({ ...base, why: "claimed", claim: r.claim, ...(r.needs !== undefined && { needs: r.needs }) });
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
function protocolNeeded(check: CheckDefinition, options: RunConfig): string | undefined {
  const spoken = usedRpcTarget(check, options)?.protocol;
  if (
    check.area !== "grpc" ||
    !options.grpc ||
    !check.protocols ||
    (check.protocols as readonly string[]).includes(spoken as string)
  )
    return undefined;
  return check.protocols.includes(GRPC) ? grpcProtocol.cli.flag : undefined;
}

/** The RPC target a check runs over: the first of the run's whose protocol it applies to (rpcTargetFor). */
function usedRpcTarget(check: CheckDefinition, options: RunConfig): ResolvedGrpcTarget | undefined {
  return options.grpc && rpcTargetFor(check, [options.grpc, ...options.rpcPeers]);
}

/**
 * The flags of the RPC targets a check did not use, for its replay line to leave out; none for a check that uses them
 * all.
 */
function unusedRpcFlags(check: CheckDefinition, options: RunConfig): string[] {
  if (check.rpcTargets === "all" || !options.grpc || options.rpcPeers.length === 0) return [];
  const used = check.area === "grpc" ? usedRpcTarget(check, options) : undefined;
  return [options.grpc, ...options.rpcPeers]
    .filter((t) => t !== used)
    .flatMap((t) => protocolModule(t.protocol)?.cli.flag ?? []);
}

/**
 * For a failed RPC check: the grpcurl command that sends the request that shows it (failingCall). Not for a property
 * check, whose calls include shrinking steps: its counterexample and replay path say what failed.
 */
function grpcurlOf(
  outcome: CheckOutcome,
  calls: readonly RecordedCall[] | undefined,
  used: ResolvedGrpcTarget | undefined,
  contractDir: string,
  redact: (t: string) => string,
): Pick<CheckResult, "grpcurl"> {
  if (
    (outcome.status !== "fail" && outcome.status !== "error") ||
    outcome.path !== undefined ||
    outcome.counterexample !== undefined
  )
    return {};
  const last = failingCall(calls ?? []);
  if (!last || !used) return {};
  const line = grpcurlCommand(last, used, contractDir, METADATA_PLACEHOLDER);
  return line !== undefined ? { grpcurl: redact(line) } : {};
}

/** Suspects listed in a result's details at most; the rest are counted. */
const SUSPECTS_LISTED = 64;

/**
 * For a check ended because the target stopped answering: each request it never answered before it went silent,
 * likeliest first, with the grpcurl line that sends it alone where grpcurl can say it as it was sent.
 */
function suspectLines(
  suspects: CheckOutcome["suspects"],
  used: ResolvedGrpcTarget | undefined,
  contractDir: string,
): string[] {
  if (!suspects || suspects.length === 0) return [];
  const lines = suspects.slice(0, SUSPECTS_LISTED).map((request, i) => {
    const line =
      request &&
      used &&
      grpcurlCommand({ request, options: {}, answered: false }, used, contractDir, METADATA_PLACEHOLDER);
    return (
      `${i + 1}. ${describeSent(request)}: ` +
      (line
        ? `grpcurl: ${line}`
        : "no grpcurl line sends it as it was sent (hand-built, or over 4 KiB); the check's replay sends it")
    );
  });
  const more = suspects.length > SUSPECTS_LISTED ? [`and ${suspects.length - SUSPECTS_LISTED} more`] : [];
  return [
    `requests the target never answered before it went silent, likeliest first (${suspects.length}):`,
    ...lines,
    ...more,
  ];
}

/** Whether a check's interface was given to the run (the "area in scope" rule, written once). */
function inScope(c: Pick<CheckDefinition, "area">, options: Pick<RunOptions, "grpc" | "http" | "client">): boolean {
  return (
    c.area === "contract" ||
    (c.area === "grpc" && options.grpc !== undefined) ||
    (c.area === "http" && options.http !== undefined) ||
    (c.area === "client" && options.client !== undefined)
  );
}

/**
 * Under --trace: runs a check with its exchanges kept and, as soon as it ends failing or erring, writes them (so that
 * only the checks in flight hold theirs), with the grpcurl line beside each gRPC call that one repeats.
 */
async function runTraced(
  tracer: TraceWriter,
  check: CheckDefinition,
  run: (sink: TraceSink) => Promise<CheckOutcome>,
  record: CheckRecord,
  config: RunConfig,
  contractDir: string,
  redact: (t: string) => string,
): Promise<CheckOutcome> {
  const outcome = await tracer.around(check.id, run);
  const grpc = config.grpc;
  const file = tracer.finish(check.id, outcome, (e) => {
    const line =
      e.call && grpc && grpcurlCommand({ ...e.call, answered: false }, grpc, contractDir, METADATA_PLACEHOLDER);
    return line ? redact(line) : undefined;
  });
  if (file !== undefined) record.traceFile = file;
  return outcome;
}

/** "listed in --expect-failures (pattern, line 3)" or "listed in example-conformance.yaml:12 (pattern)". */
function listedWords(e: Expectation): string {
  return e.source !== undefined
    ? `listed in ${e.source}:${e.line} (${e.pattern})`
    : `listed in --expect-failures (${e.pattern}, line ${e.line})`;
}

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
export function gates(
  check: Pick<CheckDefinition, "severity" | "profile">,
  options: Pick<RunOptions, "strict" | "profiles">,
): boolean {
  if (options.strict) return true;
  const profiles = new Set<Profile>(["contract", ...(options.profiles ?? [])]);
  return profiles.has(check.profile) && check.severity === "MUST";
}

/**
 * Each result's traffic, read at the end: a memoised probe's calls count for the check that started it, which may
 * finish before they do.
 */
function withTraffic(results: CheckResult[], records: ReadonlyMap<string, CheckRecord>): void {
  for (const r of results) {
    const t = records.get(r.id)?.traffic;
    if (t) r.traffic = { ...t.traffic };
  }
}

/** Under --trace, its writer; its module is loaded only then: a run without --trace never needs it. */
async function openTracer(config: RunConfig, redact: (text: string) => string): Promise<TraceWriter | undefined> {
  if (!config.trace) return undefined;
  const { createTraceWriter } = await import("./trace/trace-writer.js");
  return createTraceWriter(config.trace, redact);
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
  assertSomethingJudged(checks, options);
  const redact = createRedactor(options);
  const expectations = [
    ...(options.expectFailures ? loadExpectations(options.expectFailures, all) : []),
    ...(options.expectations ?? []),
  ];
  const config = resolveRunConfig(options, () => randomInt(0, 2 ** 31 - 1));
  const { seed } = config;
  const reporters = config.reporters ?? [];
  const target = targetOf(config);
  // A trace folder that cannot be one is the user's mistake, said before any request.
  const tracer = await openTracer(config, redact);
  const session = await openResolvedSession(config.session, {
    grpc: checks.some((c) => c.area === "grpc"),
    http: checks.some((c) => c.area === "http"),
  });
  const startedAt = new Date();
  const t0 = performance.now();
  for (const r of reporters) r.onRunStart?.({ total: checks.length, target, seed });
  const records = startChecks(checks, all, session, config, reporters, tracer && { tracer, contractDir, redact });
  const judged: Judged = { config, expectations, startedAt, records, contractDir, redact };
  let results: CheckResult[];
  try {
    results = await resultsInOrder(checks, judged, reporters);
  } finally {
    await session.close();
  }
  assertAnswered(session);
  assertLetThrough(session);
  withTraffic(results, records);
  const report: RunReport = {
    ...(config.implementation && { implementation: config.implementation }),
    ...(config.attestation && { attestation: config.attestation }),
    suiteVersion: SUITE_VERSION,
    contractSha256: sha,
    target,
    seed,
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    checks: results,
    ...judge(all, checks, results, config, expectations),
    claims: claimList(config.claims),
    ...scopeOf(config, target),
    exitCode: results.some((r) => r.gating) ? 1 : 0,
    ...learnedOf(session),
  };
  if (report.exitCode !== 0 && config.image) report.containerLog = config.image.logTail().map(redact);
  for (const r of reporters) await r.onRunEnd?.(report);
  return report;
}

/** Each check's result as it ends, in the catalogue's order, told to the reporters as it comes. */
async function resultsInOrder(
  checks: readonly CheckDefinition[],
  judged: Judged,
  reporters: readonly Reporter[],
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const check of checks) {
    const { outcome, ms } = await (judged.records.get(check.id) as CheckRecord).done;
    const result = resultOf(check, outcome, ms, judged);
    results.push(result);
    for (const r of reporters) r.onCheckResult?.(result);
  }
  return results;
}

/**
 * A target that answered none of the checks' calls was not judged: the run ends unreachable (exit 3) in one line
 * naming it, never "not conformant", whatever the checks made of the silence.
 */
function assertAnswered(session: Session): void {
  const unanswered = session.unanswered();
  if (unanswered.length > 0) throw new ConformanceError("unreachable", unanswered.map(unansweredLine).join("; "));
}

/**
 * A target that kept refusing a request past the bound of the waits it asked for was not judged on it: the run ends
 * "cannot check" (exit 4) in one line, never "not conformant" nor "conformant", whatever the other checks found.
 */
function assertLetThrough(session: Session): void {
  const refusing = session.refusing();
  if (refusing.length > 0) throw new ConformanceError("refusing", refusing.map(refusingLine).join("; "));
}

/** One target that answered none of the checks' calls, in words: no verdict about it, and why. */
function unansweredLine(u: Unanswered): string {
  return (
    `no verdict: ${u.target} answered none of the checks' calls after the set-up probes (${u.failed} failed at the ` +
    `connection level; the first: ${u.first})`
  );
}

/** What the run learned of the target beside the verdicts: the waits it was asked for, what each resource offers. */
function learnedOf(session: Session): Pick<RunReport, "backpressure" | "capabilities"> {
  const backpressure = session.backpressure();
  const capabilities = session.capabilities();
  return { ...(backpressure.waits > 0 && { backpressure }), ...(capabilities.length > 0 && { capabilities }) };
}

/** What the run covered and how its checks were chosen, as the report records them. */
function scopeOf(config: RunConfig, target: RunReport["target"]): Pick<RunReport, "scope" | "selection"> {
  return {
    scope: {
      interfaces: [
        ...(config.grpc ? (["grpc"] as const) : []),
        ...(config.http ? (["http"] as const) : []),
        ...(config.client !== undefined ? (["client"] as const) : []),
      ],
      contract: target.contract,
    },
    selection: {
      profiles: [...new Set<Profile>(["contract", ...(config.profiles ?? [])])],
      strict: config.strict === true,
      only: [...(config.only ?? [])],
      skip: [...(config.skip ?? [])],
    },
  };
}

/** A selection that would judge nothing (no check, or none of an interface given) is the user's mistake: exit 2. */
function assertSomethingJudged(checks: readonly CheckDefinition[], options: RunOptions): void {
  if (checks.some((c) => inScope(c, options))) return;
  const given = [options.grpc && "gRPC", options.http && "HTTP"].filter(Boolean).join(" and ") || "no";
  throw new ConformanceError(
    "usage",
    checks.length === 0
      ? "--only/--skip: the selection leaves no check to run, so nothing would be judged"
      : `--only/--skip: the ${checks.length} selected check(s) need an interface that was not given (${given} ` +
          `target given), so nothing would be judged`,
  );
}

/** What the report says was checked: the contract, the targets, the image and the certificate. */
function targetOf(config: RunConfig): RunReport["target"] {
  return {
    contract: config.contract ?? "proto (shipped)",
    ...(config.grpc && {
      grpc:
        `${config.grpc.address}${config.grpc.protocol === GRPC ? "" : ` (${config.grpc.protocol})`}` +
        `${config.builtIn ? " (built-in reference server)" : ""}`,
    }),
    ...(config.http && {
      http: config.builtIn ? `${config.http.baseUrl} (built-in reference server)` : config.http.baseUrl,
    }),
    ...(config.client !== undefined && { client: config.client }),
    ...(config.image && { image: config.image.name }),
    ...(config.image?.digest !== undefined && { imageDigest: config.image.digest }),
    ...(config.tlsFingerprint !== undefined && { tlsFingerprint: config.tlsFingerprint }),
  };
}

/**
 * Starts every check: contract checks read files and run buf, never the target, so they start now, beside the
 * target's checks, which run side by side within --concurrency as each declares it may. Each RPC check's unary calls
 * are remembered, so that its failure can name the grpcurl command that repeats it, and its traffic counted.
 */
function startChecks(
  checks: readonly CheckDefinition[],
  catalogue: readonly CheckDefinition[],
  session: Session,
  config: RunConfig,
  reporters: readonly Reporter[],
  traced?: { tracer: TraceWriter; contractDir: string; redact: (t: string) => string },
): ReadonlyMap<string, CheckRecord> {
  // Each record is there before its check starts (its calls and traffic are filed as it runs); its outcome is set
  // below.
  const records = new Map(checks.map((c) => [c.id, {} as CheckRecord]));
  const recordOf = (c: CheckDefinition) => records.get(c.id) as CheckRecord;
  const runChecked = (c: CheckDefinition, sink?: TraceSink, memo?: CheckContext["memo"]) => {
    const counter = createTrafficCounter();
    // Only checks of a target's areas: a contract check reads files, a client check runs servers of its own.
    if (c.area === "grpc" || c.area === "http") recordOf(c).traffic = counter;
    return runCheck(c, contextFor(session, c, recordOf(c), memo), config.checkTimeoutMs, sink, counter);
  };
  const history = historyBesideLane(session.context().memo, (c, memo) => timed(() => runChecked(c, undefined, memo)));
  // Reporters hear of a check as it starts and as it ends (side by side, in any order); its result comes in order.
  // A history check ends when its result is final (it may be judged again: historyBesideLane).
  const ended = (c: CheckDefinition) => {
    for (const r of reporters) r.onCheckEnd?.(c);
  };
  const runOne = async (c: CheckDefinition) => {
    for (const r of reporters) r.onCheckStart?.(c);
    if (c.sharing === "history") history.starting();
    try {
      return await timed(() =>
        traced
          ? runTraced(
              traced.tracer,
              c,
              (sink) => runChecked(c, sink),
              recordOf(c),
              config,
              traced.contractDir,
              traced.redact,
            )
          : runChecked(c),
      );
    } finally {
      if (c.sharing !== "history") ended(c);
    }
  };
  const contract = checks.filter((c) => c.area === "contract");
  const onTarget = checks.filter((c) => c.area !== "contract");
  for (const c of onTarget) {
    try {
      c.prepare?.(session.context());
    } catch {
      // A head start only: the check does the same work itself, and says what went wrong there.
    }
  }
  for (const c of contract) recordOf(c).done = runOne(c);
  const beside = !traced && laneBesideHistory(catalogue, checks, config);
  schedule(onTarget, config.concurrency, runOne, beside ? history.overlap : undefined).forEach((p, i) => {
    const c = onTarget[i] as CheckDefinition;
    recordOf(c).done = p;
    if (c.sharing === "history")
      p.then(
        () => ended(c),
        () => ended(c),
      );
  });
  // Awaited in order, results reported in catalogue order; until then a rejection (a usage error) must not count as
  // unhandled.
  for (const r of records.values()) r.done.catch(() => undefined);
  return records;
}

/**
 * A check's context: over the first RPC target whose protocol it applies to, with its unary calls recorded for the
 * grpcurl line of its failure; with `memo` in place of the run's when given (a history check judged again).
 */
function contextFor(session: Session, c: CheckDefinition, record: CheckRecord, memo?: CheckContext["memo"]) {
  const opened = memo ? { ...session.context(), memo } : session.context();
  const chosen = c.area === "grpc" && opened.rpcTargets ? rpcTargetFor(c, opened.rpcTargets) : undefined;
  const ctx = chosen ? { ...opened, grpc: chosen } : opened;
  if (c.area !== "grpc" || !ctx.grpc) return ctx;
  const mine: RecordedCall[] = [];
  record.calls = mine;
  return { ...ctx, grpc: recording(ctx.grpc, mine) };
}

/**
 * Whether the HTTP lane may run beside the history checks: both interfaces given, and every history check of the
 * catalogue selected, so that a pass of them all (grpc.stateless.deterministic's among them) shows the replies did
 * not vary while the lane stored data. (Under --trace, a check judged again would leave its first attempt's trace
 * file behind: there the caller keeps them one after the other.)
 */
function laneBesideHistory(
  all: readonly CheckDefinition[],
  selected: readonly CheckDefinition[],
  config: RunConfig,
): boolean {
  return (
    config.grpc !== undefined &&
    config.http !== undefined &&
    all.every((c) => c.sharing !== "history" || selected.includes(c))
  );
}

/**
 * The HTTP lane beside the history checks (harness/scheduler.ts, Overlap): they judge replies over time, and the data
 * the HTTP checks store may legally change a reply. A history check's result reached beside the lane stands when it
 * passed, or skipped for want of a flag: stored data can add differences between replies, never take one away, and a
 * pass of grpc.stateless.deterministic says the replies did not vary at all, so nothing was judged more loosely (the
 * runner lets the lane beside them only when every history check runs). Otherwise every history check is judged again
 * once the lane has ended, as the run without the lane judges it: with the memo as it was when they first started
 * (what they learned beside the lane, the variation profile and the journal of first replies, forgotten), and what
 * they learn then is the run's for the checks after them.
 */
function historyBesideLane(
  memo: CheckContext["memo"],
  attempt: (c: CheckDefinition, memo: CheckContext["memo"]) => Promise<{ outcome: CheckOutcome; ms: number }>,
): { starting(): void; overlap: Overlap<CheckDefinition, { outcome: CheckOutcome; ms: number }> } {
  let before: CheckContext["memo"] | undefined;
  let again: CheckContext["memo"] | undefined;
  return {
    starting: () => void (before ??= new Map(memo)),
    overlap: {
      lane: "http",
      stands: ({ outcome }) => outcome.status === "pass" || (outcome.status === "skip" && outcome.needs !== undefined),
      again: async (c) => {
        const first = before ?? new Map(memo);
        again ??= new Map(first);
        const result = await attempt(c, again);
        for (const [key, value] of again) if (!first.has(key)) memo.set(key, value);
        return result;
      },
    },
  };
}

/**
 * What the run keeps of one check while it runs, in one record: its outcome to come, its calls, its trace file, its
 * traffic.
 */
interface CheckRecord {
  /** The outcome and how long it took, once the check has run. */
  done: Promise<{ outcome: CheckOutcome; ms: number }>;
  /** An RPC check's unary calls, for the grpcurl line of its failure. */
  calls?: RecordedCall[];
  /** Under --trace, the file its exchanges were written to when it failed or erred. */
  traceFile?: string;
  /** The traffic of a check of a target's areas. */
  traffic?: TrafficCounter;
}

/** What turning an outcome into a result reads: the run, its expected failures, its recorded calls, its redactor. */
interface Judged {
  config: RunConfig;
  expectations: readonly Expectation[];
  startedAt: Date;
  /** Each check's record: its calls and its trace file. */
  records: ReadonlyMap<string, CheckRecord>;
  contractDir: string;
  redact: (text: string) => string;
}

/** One check's result: its outcome, as the expected-failure list, the claims and the gating rules read it. */
function resultOf(check: CheckDefinition, outcome: CheckOutcome, ms: number, j: Judged): CheckResult {
  const { config, redact } = j;
  const { status, note, stale } = expectedOutcome(check, outcome, j);
  const needs = outcome.status === "skip" ? (outcome.needs ?? protocolNeeded(check, config)) : undefined;
  const claim = needs !== undefined ? claimAnswering(config.claims, needs) : undefined;
  const leaveOut = unusedRpcFlags(check, config);
  const replayArgs: ReplayArgs = {
    only: check.id,
    seed: config.seed,
    ...(outcome.path !== undefined && { path: outcome.path }),
    ...(leaveOut.length > 0 && { leaveOut }),
  };
  return {
    id: check.id,
    title: check.title,
    severity: check.severity,
    area: check.area,
    profile: check.profile,
    spec: check.spec,
    status,
    message:
      claim !== undefined
        ? `not applicable by claim (${claim}: declared by the implementation, not judged); ${redact(outcome.message)}`
        : stale
          ? `${note}; the check: ${redact(outcome.message)}`
          : redact(outcome.message),
    gating: stale || (gates(check, config) && (status === "fail" || status === "error")),
    durationMs: Math.round(ms),
    replayArgs,
    ...(config.replayCommand && { replay: config.replayCommand(replayArgs) }),
    ...(outcome.counterexample !== undefined && { counterexample: redact(outcome.counterexample) }),
    ...((outcome.details || outcome.suspects) && {
      details: [
        ...(outcome.details ?? []),
        ...suspectLines(outcome.suspects, usedRpcTarget(check, config), j.contractDir),
      ].map(redact),
    }),
    ...(note !== undefined && { note }),
    ...grpcurlOf(outcome, j.records.get(check.id)?.calls, usedRpcTarget(check, config), j.contractDir, redact),
    ...traceOf(j.records.get(check.id)),
    ...(needs !== undefined && { needs }),
    ...(claim !== undefined && { claim }),
  };
}

const traceOf = (record: CheckRecord | undefined): Pick<CheckResult, "trace"> =>
  record?.traceFile !== undefined ? { trace: record.traceFile } : {};

/** The status an expected failure gives an outcome, and the note that says so; stale when the list is out of date. */
function expectedOutcome(
  check: CheckDefinition,
  outcome: CheckOutcome,
  j: Judged,
): { status: CheckResult["status"]; note?: string; stale: boolean } {
  const expected = expectationFor(check.id, j.expectations);
  if (!expected) return { status: outcome.status, stale: false };
  const listing = listedWords(expected);
  // Every list is held to account: an expired entry (the configuration's may expire), or one whose check no longer
  // fails, fails the run.
  if (expired(expected, j.startedAt) && outcome.status !== "skip") {
    return {
      status: outcome.status,
      stale: true,
      note:
        `${listing} expired on ${expected.expires}: it waives nothing now (renew it with a reason, or fix the ` +
        `failure)`,
    };
  }
  if (outcome.status === "fail" || outcome.status === "error")
    return { status: "expected-fail", stale: false, note: `expected to fail: ${expected.reason}` };
  if (outcome.status === "pass")
    return { status: "fail", stale: true, note: `${listing} but passed: remove it from the list` };
  return { status: outcome.status, stale: false };
}
