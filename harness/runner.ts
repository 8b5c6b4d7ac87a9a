// The engine: selects checks, runs each with a time bound, and returns the results as data.
import { createHash, randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { CheckDefinition, Profile, ReplicaMode } from "./check.js";
import { ConformanceError } from "./errors.js";
import { expectationFor, loadExpectations } from "./expectations.js";
import { CONTRACT_DIR } from "./_internals/paths.js";
import type { CheckResult, Reporter, RunReport } from "./report.js";
import { selectChecks } from "./selection.js";
import { openSession, runCheck, type HttpRunTarget } from "./session.js";
import type { GrpcTargetOptions } from "./targets/create-grpc-target.js";
import { API_KEY_PLACEHOLDER, parseHttpBaseUrl, shellQuote } from "./targets/create-http-target.js";
import { DEFAULT_API_KEY_HEADER } from "./targets/http-target.js";
import { SUITE_VERSION } from "./version.js";
import { catalogue } from "../suites/index.js";

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
  reporters?: readonly Reporter[];
  /** The checks to choose from; default the whole catalogue. */
  checks?: readonly CheckDefinition[];
  /** The gRPC target; grpc checks are skipped without one. */
  grpc?: GrpcTargetOptions;
  /** Other instances of the same service, reached with the same options. */
  replicas?: readonly string[];
  /** How replicas are judged (see CheckContext.replicaMode). */
  replicaMode?: ReplicaMode;
  /** The HTTP target; http checks are skipped without one. */
  http?: HttpRunTarget;
  /** File of check-ID patterns, each with a # reason, whose failures are expected. */
  expectFailures?: string;
  /** The targets are the built-in reference server: replay lines leave --grpc and --http out, as a rerun starts a new one. */
  builtIn?: boolean;
  /** The targets run in a container started from this image: replay lines name the image, not its mapped ports. */
  image?: { name: string; args: readonly string[]; logTail(): string[] };
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

function replayCommand(id: string, seed: number, opts: RunOptions, path?: string): string {
  const parts = ["npx example-conformance check"];
  if (opts.image) parts.push(...opts.image.args);
  const ownTargets = !opts.builtIn && !opts.image;
  if (opts.grpc && ownTargets) parts.push(`--grpc ${opts.grpc.address}`);
  if (opts.grpc?.tls) parts.push("--tls");
  for (const r of opts.replicas ?? []) parts.push(`--replica ${r}`);
  if (opts.replicaMode === "equal") parts.push("--replica-mode equal");
  if (opts.http && ownTargets) {
    parts.push(`--http ${shellQuote(opts.http.baseUrl)}`);
    for (const c of opts.http.collections ?? []) parts.push(`--collection ${shellQuote(c)}`);
    if (opts.http.openapi !== undefined) parts.push(`--openapi ${shellQuote(opts.http.openapi)}`);
    // The key itself never reaches a report: the reader puts theirs in its place.
    if (opts.http.apiKey !== undefined) parts.push(`--api-key '${API_KEY_PLACEHOLDER}'`);
    if (opts.http.apiKeyHeader !== undefined && opts.http.apiKeyHeader !== DEFAULT_API_KEY_HEADER) parts.push(`--api-key-header ${shellQuote(opts.http.apiKeyHeader)}`);
    if (opts.http.verbs?.length) parts.push(`--verbs ${shellQuote(opts.http.verbs.join(","))}`);
    for (const w of opts.http.allowWords ?? []) parts.push(`--allow-word ${shellQuote(w)}`);
  }
  if (opts.contract) parts.push(`--contract ${opts.contract}`);
  parts.push(`--only ${id}`, `--seed ${seed}`);
  if (path) parts.push(`--path ${path}`);
  return parts.join(" ");
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
export async function runConformance(options: RunOptions = {}): Promise<RunReport> {
  const all = options.checks ?? catalogue;
  const contractDir = resolve(options.contract ?? CONTRACT_DIR);
  const sha = contractSha256(contractDir);
  const checks = selectChecks(all, {
    ...(options.only && { only: options.only }),
    ...(options.skip && { skip: options.skip }),
  });
  const expectations = options.expectFailures ? loadExpectations(options.expectFailures, all) : [];
  if (options.http) parseHttpBaseUrl(options.http.baseUrl);
  const seed = options.seed ?? randomInt(0, 2 ** 31 - 1);
  const reporters = options.reporters ?? [];
  const target: RunReport["target"] = {
    contract: options.contract ?? "proto (shipped)",
    ...(options.grpc && { grpc: options.builtIn ? `${options.grpc.address} (built-in reference server)` : options.grpc.address }),
    ...(options.http && { http: options.builtIn ? `${options.http.baseUrl} (built-in reference server)` : options.http.baseUrl }),
    ...(options.image && { image: options.image.name }),
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
    },
    { grpc: checks.some((c) => c.area === "grpc"), http: checks.some((c) => c.area === "http") },
  );
  const startedAt = new Date();
  const started = performance.now();
  for (const r of reporters) r.onRunStart?.({ total: checks.length, target, seed });

  const results: CheckResult[] = [];
  const checkTimeout = options.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  // Contract checks read files and run buf, never the target: start them now, beside the target's checks,
  // and report every result in catalogue order.
  const early = new Map(
    checks
      .filter((c) => c.area === "contract")
      .map((c) => [c.id, timed(() => runCheck(c, session.context(), checkTimeout))] as const),
  );
  // Awaited in order below; until then a rejection (a usage error) must not count as unhandled.
  for (const p of early.values()) p.catch(() => undefined);
  try {
    for (const check of checks) {
      for (const r of reporters) r.onCheckStart?.(check);
      const { outcome, ms } = await (early.get(check.id) ?? timed(() => runCheck(check, session.context(), checkTimeout)));
      const expected = expectationFor(check.id, expectations);
      let status: CheckResult["status"] = outcome.status;
      let note: string | undefined;
      if (expected && (outcome.status === "fail" || outcome.status === "error")) {
        status = "expected-fail";
        note = `expected to fail: ${expected.reason}`;
      } else if (expected && outcome.status === "pass") {
        note = `listed in --expect-failures (${expected.pattern}, line ${expected.line}) but passed: remove it from the list`;
      }
      const result: CheckResult = {
        id: check.id,
        title: check.title,
        severity: check.severity,
        area: check.area,
        profile: check.profile,
        spec: check.spec,
        status,
        message: outcome.message,
        gating: gates(check, options) && (status === "fail" || status === "error"),
        durationMs: Math.round(ms),
        replay: replayCommand(check.id, seed, options, outcome.path),
        ...(outcome.counterexample !== undefined && { counterexample: outcome.counterexample }),
        ...(outcome.details && { details: outcome.details }),
        ...(note !== undefined && { note }),
      };
      results.push(result);
      for (const r of reporters) r.onCheckResult?.(result);
    }
  } finally {
    await session.close();
  }
  const report: RunReport = {
    suiteVersion: SUITE_VERSION,
    contractSha256: sha,
    target,
    seed,
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - started),
    checks: results,
    exitCode: results.some((r) => r.gating) ? 1 : 0,
  };
  if (report.exitCode !== 0 && options.image) report.containerLog = options.image.logTail();
  for (const r of reporters) await r.onRunEnd?.(report);
  return report;
}
