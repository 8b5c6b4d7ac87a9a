// The replay line of a run started from code (runConformance without replayCommand): its options said as the values of
// `check`'s option table, then rendered by the same renderer as a CLI run's, from the same table: the flags, their
// order and what each does in a replay (kept, or a placeholder for a secret) are the table's, written once.
import type { ReplayArgs } from "../report.js";
import { placementFlag, type ApiKeyPlacement } from "../targets/http-target.js";
import { moduleOf } from "../targets/rpc-endpoint.js";
import type { CheckCliOptions } from "./check-options.js";
import { checkTable } from "./check-options.js";
import type { OptionSpec, OptionTable } from "./option-table.js";
import { createReplayRenderer } from "./replay.js";
import { optionKey } from "./rpc-target.js";

/** What the replay line of a run started from code is made of: the parts of RunOptions a command line can say. */
export interface ReplaySource {
  grpc?: {
    address: string;
    tls?: unknown;
    authority?: string;
    metadata?: Readonly<Record<string, string>>;
    protocol?: string;
    inMemory?: unknown;
    timeoutMs?: number;
  };
  http?: {
    baseUrl: string;
    apiKey?: string;
    apiKeyIn?: ApiKeyPlacement;
    replicas?: readonly string[];
    timeoutMs?: number;
    inMemory?: unknown;
  };
  replicas?: readonly string[];
  contract?: string;
  strict?: boolean;
  profiles?: readonly string[];
  runs?: number;
  expectFailures?: string;
}

/** A value of the table's options, as a CLI run would have parsed it. */
type OptionValue = string | number | boolean | readonly string[];

/**
 * The options a CLI run would have parsed for these RunOptions (the inverse of run-options.ts, value by value; the
 * flags are the table's). TLS files given from code may be bytes: the line names them `<FILE>`, to fill.
 */
function optionValues(o: ReplaySource): Partial<Record<keyof CheckCliOptions | string, OptionValue>> {
  const g = o.grpc;
  const h = o.http;
  const timeoutMs = g?.timeoutMs ?? h?.timeoutMs;
  return {
    ...(g && { [optionKey(moduleOf(g.protocol))]: g.address }),
    ...(g?.tls !== undefined && g.tls !== false && { tls: true, ...(typeof g.tls === "object" && { ca: "<FILE>" }) }),
    ...(g?.authority !== undefined && { authority: g.authority }),
    ...(g?.metadata && { metadata: Object.entries(g.metadata).map(([k, v]) => `${k}=${v}`) }),
    ...(o.replicas && { replica: o.replicas }),
    ...(h && {
      http: h.baseUrl,
      ...(h.apiKey !== undefined && { apiKey: h.apiKey }),
      ...(h.apiKeyIn && { apiKeyIn: placementFlag(h.apiKeyIn) }),
      ...(h.replicas && { httpReplica: h.replicas }),
    }),
    ...(timeoutMs !== undefined && { timeout: `${timeoutMs}ms` }),
    ...(o.contract !== undefined && { contract: o.contract }),
    ...(o.profiles?.includes("protocol") && { profile: "protocol" }),
    ...(o.strict === true && { strict: true }),
    ...(o.runs !== undefined && { runs: o.runs }),
    ...(o.expectFailures !== undefined && { expectFailures: o.expectFailures }),
  };
}

/** The argv that gives these values, in the table's order: a switch alone, a repeatable option once per value. */
function argvOf<O>(table: OptionTable<O>, values: Partial<Record<string, OptionValue>>): string[] {
  return Object.entries<OptionSpec<unknown>>(table as Record<string, OptionSpec<unknown>>).flatMap(([key, spec]) => {
    const value = values[key];
    const flag = spec.flags.split(" ")[0] as string;
    if (value === undefined || value === false) return [];
    if (value === true) return [flag];
    return (Array.isArray(value) ? value : [value]).flatMap((v) => [flag, String(v)]);
  });
}

/**
 * The replay line of a run started from code, as the CLI would print it for the same options: every secret a
 * placeholder (`<API_KEY>`, `<METADATA_VALUE>`), as the table says. Undefined for an in-memory target, which no
 * command line can reach.
 */
export function replayFromOptions(options: ReplaySource): ((args: ReplayArgs) => string) | undefined {
  if (options.grpc?.inMemory !== undefined || options.http?.inMemory !== undefined) return undefined;
  const table = checkTable();
  return createReplayRenderer(argvOf(table, optionValues(options)), table);
}
