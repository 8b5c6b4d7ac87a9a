// Options are resolved once: every default of a run lives in harness/run-config.ts and is read nowhere else but
// where the CLI shows it in --help. The engine, the session and the targets take the resolved configuration.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../contract/paths.js";
import { resolveGrpcTarget, resolveRunConfig, RUN_DEFAULTS } from "../harness/run-config.js";
import { productFiles } from "./architecture-source.js";

const RESOLVER = "harness/run-config.ts";
/** The CLI's option tables: they show the defaults in --help (and hand commander the same values). */
const SHOWN_IN_HELP = ["harness/cli/check-options.ts", "harness/cli/option-table.ts"];
/** The names the defaults had before they were resolved once: none may come back. */
const OLD_NAMES = ["DEFAULT_TIMEOUT_MS", "DEFAULT_MAX_CALLS", "DEFAULT_REMOTE_RATE", "DEFAULT_COLLECTIONS", "DEFAULT_API_KEY_HEADER", "DEFAULT_API_KEY_PLACEMENT", "DEFAULT_MAX_DISCOVERY_REQUESTS", "DEFAULT_RUNS", "DEFAULT_CHECK_TIMEOUT_MS", "DEFAULT_CONCURRENCY"];
/** Known, each owned by another issue's branch (the integrator removes them as they land). */
const KNOWN = new Set([
  // the load engineer's file: `load` resolves its own options (harness/load/run-load.ts)
  "harness/load/run-load.ts ?? 5000",
]);

const files = productFiles(["harness", "suites"]);
const text = new Map(files.map((f) => [f, readFileSync(join(PACKAGE_ROOT, f), "utf8")]));

describe("defaults", () => {
  it("are read only by the resolving function and the --help tables", () => {
    const users = files.filter((f) => /\bRUN_DEFAULTS\b/.test(text.get(f) as string));
    expect(users).toContain(RESOLVER);
    expect(users.filter((f) => f !== RESOLVER && !SHOWN_IN_HELP.includes(f))).toEqual([]);
  });

  it("have no second copy under an old name or as a literal fallback", () => {
    const found = files.flatMap((f) => {
      const t = text.get(f) as string;
      const names = OLD_NAMES.filter((n) => new RegExp(`\\b${n}\\b`).test(t)).map((n) => `${f} ${n}`);
      const literals = [...t.matchAll(/\?\?\s*(5000|5_000|10_000)\b/g)].map((m) => `${f} ?? ${m[1]}`);
      return [...names, ...literals];
    });
    expect(found.filter((k) => !KNOWN.has(k))).toEqual([]);
  });

  it("resolve into a read-only configuration with every default applied", () => {
    const config = resolveRunConfig({ checks: [], grpc: { address: "127.0.0.1:1" }, http: { baseUrl: "http://127.0.0.1:2" } }, () => 7);
    expect(Object.isFrozen(config)).toBe(true);
    expect([config.seed, config.runs, config.concurrency, config.checkTimeoutMs]).toEqual([7, RUN_DEFAULTS.runs, RUN_DEFAULTS.concurrency, RUN_DEFAULTS.checkTimeoutMs]);
    expect(config.grpc).toMatchObject({ protocol: "grpc", timeoutMs: RUN_DEFAULTS.timeoutMs, maxCalls: RUN_DEFAULTS.maxCalls, rate: Infinity, metadata: {} });
    expect(config.http).toMatchObject({ collections: RUN_DEFAULTS.collections, apiKeyIn: { in: "header", name: RUN_DEFAULTS.apiKeyHeader }, timeoutMs: RUN_DEFAULTS.timeoutMs, replicas: [] });
    expect(config.session).toMatchObject({ parallelism: RUN_DEFAULTS.concurrency, timeoutMs: RUN_DEFAULTS.timeoutMs, replicas: [] });
    // A remote target is rate-limited by default; the HTTP target's timeout follows the RPC target's.
    expect(resolveGrpcTarget({ address: "example.com:443" }).rate).toBe(RUN_DEFAULTS.remoteRate);
    const given = resolveRunConfig({ checks: [], grpc: { address: "127.0.0.1:1", timeoutMs: 700 }, http: { baseUrl: "http://127.0.0.1:2" } }, () => 1);
    expect(given.http?.timeoutMs).toBe(700);
  });
});
