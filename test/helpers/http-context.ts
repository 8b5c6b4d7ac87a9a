// Runs HTTP checks against a base URL the way a run does: one target, one memo, the checks in catalogue order.
import type { CheckContext, CheckDefinition, CheckOutcome } from "../../harness/check.js";
import { pathWords } from "../../harness/cli/catalogue.js";
import { runCheck } from "../../harness/session.js";
import { createHttpTarget } from "../../harness/targets/create-http-target.js";
import type { HttpHandler } from "../../harness/targets/http-inject.js";
import type { HttpConfig } from "../../harness/targets/http-target.js";

export interface HttpRunOptions {
  apiKey?: string;
  collections?: readonly string[];
  openapi?: string;
  timeoutMs?: number;
  /** Serve every request with this handler in memory (harness/targets/http-inject.ts): no socket is opened. */
  inMemory?: HttpHandler;
}

export function httpContext(baseUrl: string, options: HttpRunOptions = {}): CheckContext {
  const timeoutMs = options.timeoutMs ?? 3000;
  const http = createHttpTarget({
    baseUrl,
    timeoutMs,
    ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
    ...(options.inMemory !== undefined && { inMemory: options.inMemory }),
  });
  const httpConfig: HttpConfig = {
    collections: options.collections ?? ["/messages"],
    apiKeyHeader: "X-API-Key",
    apiKeyIn: { in: "header", name: "X-API-Key" },
    maxDiscoveryRequests: 50,
    // The catalogue's verb lexicon, as the CLI gives it to a run.
    words: pathWords,
    ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
    ...(options.openapi !== undefined && { openapi: options.openapi }),
  };
  return {
    contractDir: ".",
    http,
    httpConfig,
    replicas: [],
    timeoutMs,
    memo: new Map(),
    seed: 1,
    runs: 1,
    signal: new AbortController().signal,
    parallelism: 1,
  };
}

export interface HttpVerdict {
  id: string;
  outcome: CheckOutcome;
}

export async function runHttpChecks(
  checks: readonly CheckDefinition[],
  baseUrl: string,
  options: HttpRunOptions = {},
): Promise<HttpVerdict[]> {
  const ctx = httpContext(baseUrl, options);
  const out: HttpVerdict[] = [];
  for (const check of checks) out.push({ id: check.id, outcome: await runCheck(check, ctx, 20_000) });
  return out;
}

/** IDs that did not pass or skip: a failure and an error both count, as in a run. */
export const failing = (verdicts: readonly HttpVerdict[]) =>
  verdicts
    .filter((v) => v.outcome.status === "fail" || v.outcome.status === "error")
    .map((v) => v.id)
    .sort();
