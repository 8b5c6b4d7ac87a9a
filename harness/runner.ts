// The engine: selects checks, runs each with a time bound, and returns the results as data.
import { createHash, randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { CheckContext, CheckDefinition, CheckOutcome } from "./check.js";
import { ConformanceError } from "./errors.js";
import { CONTRACT_DIR } from "./_internals/paths.js";
import type { CheckResult, Reporter, RunReport } from "./report.js";
import { selectChecks } from "./selection.js";
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
  profiles?: readonly ("contract" | "protocol")[];
  /** Bound on one check's run, in milliseconds. */
  checkTimeoutMs?: number;
  reporters?: readonly Reporter[];
  /** The checks to choose from; default the whole catalogue. */
  checks?: readonly CheckDefinition[];
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
  const parts = ["npx example-conformance check", `--only ${id}`, `--seed ${seed}`];
  if (path) parts.push(`--path ${path}`);
  if (opts.contract) parts.push(`--contract ${opts.contract}`);
  return parts.join(" ");
}

async function runOne(check: CheckDefinition, ctx: CheckContext, timeoutMs: number): Promise<CheckOutcome> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckOutcome>((resolvePromise) => {
    timer = setTimeout(() => {
      controller.abort();
      resolvePromise({ status: "error", message: `did not finish within ${timeoutMs} ms` });
    }, timeoutMs);
  });
  try {
    return await Promise.race([check.run({ ...ctx, signal: controller.signal }), timeout]);
  } catch (reason) {
    const err = ConformanceError.from(reason);
    return { status: "error", message: err.message };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the selected checks and returns the report; throws only for usage errors. */
export async function runConformance(options: RunOptions = {}): Promise<RunReport> {
  const contractDir = resolve(options.contract ?? CONTRACT_DIR);
  const sha = contractSha256(contractDir);
  const checks = selectChecks(options.checks ?? catalogue, {
    ...(options.only && { only: options.only }),
    ...(options.skip && { skip: options.skip }),
  });
  const seed = options.seed ?? randomInt(0, 2 ** 31 - 1);
  const reporters = options.reporters ?? [];
  const target: RunReport["target"] = { contract: options.contract ?? "proto (shipped)" };
  const startedAt = new Date();
  const started = performance.now();
  for (const r of reporters) r.onRunStart?.({ total: checks.length, target, seed });

  const gatingProfiles = new Set(options.strict ? ["contract", "protocol"] : (options.profiles ?? ["contract"]));
  gatingProfiles.add("contract");
  const results: CheckResult[] = [];
  for (const check of checks) {
    for (const r of reporters) r.onCheckStart?.(check);
    const t0 = performance.now();
    const outcome = await runOne(
      check,
      {
        contractDir,
        seed,
        runs: options.runs ?? DEFAULT_RUNS,
        ...(options.path !== undefined && { path: options.path }),
        signal: new AbortController().signal,
      },
      options.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS,
    );
    const gates = gatingProfiles.has(check.profile) && (check.severity === "MUST" || options.strict === true);
    const result: CheckResult = {
      id: check.id,
      title: check.title,
      severity: check.severity,
      area: check.area,
      profile: check.profile,
      spec: check.spec,
      status: outcome.status,
      message: outcome.message,
      gating: gates && (outcome.status === "fail" || outcome.status === "error"),
      durationMs: Math.round(performance.now() - t0),
      replay: replayCommand(check.id, seed, options, outcome.path),
      ...(outcome.counterexample !== undefined && { counterexample: outcome.counterexample }),
      ...(outcome.details && { details: outcome.details }),
    };
    results.push(result);
    for (const r of reporters) r.onCheckResult?.(result);
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
  for (const r of reporters) await r.onRunEnd?.(report);
  return report;
}
