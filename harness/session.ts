// Opens what checks need for one run: the targets behind one budget, and the context each check receives.
import { resolve } from "node:path";
import type { CheckContext, CheckDefinition, CheckOutcome, ReplicaMode } from "./check.js";
import { ConformanceError } from "./errors.js";
import type { TraceSink } from "./trace/exchange-record.js";
import { CONTRACT_DIR } from "../contract/paths.js";
import type { CallBudget } from "./targets/budget.js";
import type { GrpcTarget } from "./targets/grpc-target.js";
import {
  createGrpcTarget,
  DEFAULT_TIMEOUT_MS,
  probeCredentials,
  assertSpeaksGrpc,
  probeReachable,
  type GrpcTargetOptions,
} from "./targets/create-grpc-target.js";
import { createHttpTarget, probeHttpReachable } from "./targets/create-http-target.js";
import { probeHttpCredentials } from "./targets/http-credentials.js";
import {
  DEFAULT_API_KEY_HEADER,
  DEFAULT_COLLECTIONS,
  DEFAULT_MAX_DISCOVERY_REQUESTS,
  type ApiKeyPlacement,
  type HttpConfig,
  type HttpTarget,
} from "./targets/http-target.js";

/** The HTTP target of a run: a base URL and what the checks are told about it. */
export interface HttpRunTarget {
  /** http://host:port[/prefix] */
  baseUrl: string;
  /** Collection paths to probe; default /messages. Discovery adds what the server links to. */
  collections?: readonly string[];
  /** An OpenAPI document (a file, or a URL on the target) naming more paths. */
  openapi?: string;
  apiKey?: string;
  /** Default X-API-Key. */
  apiKeyHeader?: string;
  /** Where the key goes (header, bearer, query); overrides apiKeyHeader. */
  apiKeyIn?: ApiKeyPlacement;
  /** Other instances of the same service, base URLs like baseUrl's: data stored on one is served by all. */
  replicas?: readonly string[];
  /** Query parameters that filter a collection, as the user names them. */
  filters?: readonly string[];
  /** Words that name an action in a path; default the CRUD verbs and HTTP method names. */
  verbs?: readonly string[];
  /** Words the verb rule lets through: nouns of this interface spelled like verbs. */
  allowWords?: readonly string[];
  /** Bound on one request; default the gRPC timeout, or 5 s. */
  timeoutMs?: number;
  /** Requests allowed for the run when there is no gRPC target to share a budget with. */
  maxCalls?: number;
  rate?: number;
}

export interface SessionOptions {
  contract?: string;
  grpc?: GrpcTargetOptions;
  replicas?: readonly string[];
  replicaMode?: ReplicaMode;
  http?: HttpRunTarget;
  seed: number;
  runs: number;
  path?: string;
  /** Calls a check may have in flight at once for cases of its own; default 1. */
  parallelism?: number;
}

export interface Session {
  context(): CheckContext;
  close(): Promise<void>;
}

/** Probes every target first (exit 3 with the address and the cause when one does not answer), then opens them. */
export async function openSession(options: SessionOptions, needs: { grpc: boolean; http: boolean } = { grpc: true, http: true }): Promise<Session> {
  const contractDir = resolve(options.contract ?? CONTRACT_DIR);
  let grpc: ReturnType<typeof createGrpcTarget> | undefined;
  const replicas: GrpcTarget[] = [];
  let http: HttpTarget | undefined;
  let httpConfig: HttpConfig | undefined;
  if (options.grpc && needs.grpc && !options.grpc.inMemory) {
    await probeReachable(options.grpc);
    for (const r of options.replicas ?? []) await probeReachable({ ...options.grpc, address: r }, "--replica");
  }
  const h = options.http;
  if (h && needs.http) {
    for (const url of [h.baseUrl, ...(h.replicas ?? [])]) await probeHttpReachable(url, h.timeoutMs ?? options.grpc?.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  }
  let budget: CallBudget | undefined;
  const g = options.grpc;
  if (g && needs.grpc) {
    // A target that accepts connections but never speaks HTTP/2 is exit 3 before any check runs, with the reason.
    await assertSpeaksGrpc(g);
    for (const r of options.replicas ?? []) await assertSpeaksGrpc({ ...g, address: r }, "--replica");
    grpc = createGrpcTarget(g);
    budget = grpc.budget;
    // A target that wants credentials it was not given: "cannot check", not a list of MUST failures.
    await probeCredentials(grpc, g).catch(async (err: unknown) => (await grpc?.close(), Promise.reject(err)));
    for (const r of options.replicas ?? []) replicas.push(createGrpcTarget({ ...g, address: r, budget }));
  }
  if (h && needs.http) {
    // One budget for the whole run: the HTTP requests count against --max-rpcs beside the gRPC calls.
    const shared = {
      timeoutMs: h.timeoutMs ?? options.grpc?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(h.apiKey !== undefined && { apiKey: h.apiKey }),
      ...(h.apiKeyHeader !== undefined && { apiKeyHeader: h.apiKeyHeader }),
      ...(h.apiKeyIn !== undefined && { apiKeyIn: h.apiKeyIn }),
    };
    const primary = createHttpTarget({
      baseUrl: h.baseUrl,
      ...shared,
      ...(budget ? { budget } : { ...(h.maxCalls !== undefined && { maxCalls: h.maxCalls }), ...(h.rate !== undefined && { rate: h.rate }) }),
    });
    http = primary;
    // Replicas (--http-replica) get the same key where it goes, and count against the same budget.
    const httpReplicas = (h.replicas ?? []).map((baseUrl) => createHttpTarget({ baseUrl, ...shared, budget: primary.budget }));
    httpConfig = {
      collections: h.collections && h.collections.length > 0 ? h.collections : DEFAULT_COLLECTIONS,
      apiKeyHeader: h.apiKeyHeader ?? DEFAULT_API_KEY_HEADER,
      apiKeyIn: h.apiKeyIn ?? { in: "header", name: h.apiKeyHeader ?? DEFAULT_API_KEY_HEADER },
      ...(h.filters !== undefined && h.filters.length > 0 && { filters: h.filters }),
      ...(httpReplicas.length > 0 && { replicas: httpReplicas }),
      maxDiscoveryRequests: DEFAULT_MAX_DISCOVERY_REQUESTS,
      ...(h.verbs !== undefined && h.verbs.length > 0 && { verbs: h.verbs }),
      ...(h.allowWords !== undefined && h.allowWords.length > 0 && { allowWords: h.allowWords }),
      ...(h.apiKey !== undefined && { apiKey: h.apiKey }),
      ...(h.openapi !== undefined && { openapi: h.openapi }),
    };
    // A target that wants a key it was not given, or refuses the one given where it was sent: exit 5, not a verdict.
    const { collections, apiKeyIn } = httpConfig;
    await probeHttpCredentials(primary, {
      collection: collections[0] as string,
      keyGiven: h.apiKey !== undefined,
      placement: apiKeyIn,
      withPlacement: (placement) => createHttpTarget({ baseUrl: h.baseUrl, ...shared, apiKeyIn: placement, budget: primary.budget }),
    }).catch(async (err: unknown) => {
      await Promise.all([primary.close(), ...httpReplicas.map((r) => r.close()), grpc?.close(), ...replicas.map((r) => r.close())]);
      throw err;
    });
  }
  const memo = new Map<string, Promise<unknown>>();
  return {
    context: () => ({
      contractDir,
      ...(grpc && { grpc }),
      ...(http && httpConfig && { http, httpConfig }),
      replicas,
      ...(options.replicaMode !== undefined && { replicaMode: options.replicaMode }),
      seed: options.seed,
      runs: options.runs,
      timeoutMs: options.grpc?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      memo,
      ...(options.path !== undefined && { path: options.path }),
      signal: new AbortController().signal,
      parallelism: options.parallelism ?? 1,
    }),
    async close() {
      await grpc?.close();
      for (const r of replicas) await r.close();
      await http?.close();
    },
  };
}

/**
 * Runs one check with a bound on its time; what it throws becomes an error outcome, never a pass, except a
 * usage or configuration error, which is the user's to fix and is thrown on.
 */
export async function runCheck(check: CheckDefinition, ctx: CheckContext, timeoutMs: number, trace?: TraceSink): Promise<CheckOutcome> {
  if (check.area === "grpc" && !ctx.grpc) return { status: "skip", message: "no RPC target (--grpc HOST:PORT, --connect URL or --grpc-web URL)" };
  const spoken = ctx.grpc?.protocol;
  if (check.area === "grpc" && spoken !== undefined && check.protocols && !(check.protocols as readonly string[]).includes(spoken)) {
    return { status: "skip", message: `applies to ${check.protocols.join(", ")} only; the target is spoken to in ${spoken}` };
  }
  if (check.area === "http" && !ctx.http) return { status: "skip", message: "no HTTP target (--http URL)" };
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckOutcome>((resolvePromise) => {
    timer = setTimeout(() => {
      controller.abort();
      resolvePromise({ status: "error", message: `did not finish within ${timeoutMs} ms` });
    }, timeoutMs);
  });
  try {
    return await Promise.race([check.run(bound(ctx, controller.signal, trace)), timeout]);
  } catch (reason) {
    const err = ConformanceError.from(reason);
    // A bad input of the user's (an OpenAPI document that does not parse, say) ends the run: exit 2, one line; so
    // does a fault the harness names as its own (a dependency missing): exit 70, never a check's error and exit 1.
    if (err.code === "usage" || err.code === "config") throw err;
    if (err.code === "internal" && reason instanceof ConformanceError) throw err;
    return { status: "error", message: err.message };
  } finally {
    clearTimeout(timer);
  }
}

/** Thrown by a call a check makes after its time ran out: nothing reaches the target for it any more. */
class CheckTimeUp extends Error {
  constructor() {
    super("the check's time is up: no further call is made for it");
  }
}

/**
 * The context a check runs with: its targets refuse new calls once `signal` is aborted (the check's time is up), and
 * the RPC calls under way are cancelled then, so that nothing keeps calling the target after the check ended.
 */
function bound(ctx: CheckContext, signal: AbortSignal, trace?: TraceSink): CheckContext {
  const guard = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, key, receiver) {
        const value = Reflect.get(t, key, receiver) as unknown;
        if (typeof value !== "function" || !["unary", "raw", "exchange", "request"].includes(String(key))) return value;
        return (...args: unknown[]) => {
          if (signal.aborted) return Promise.reject(new CheckTimeUp());
          // unary(request, options) and exchange(request) carry the signal, which cancels what is under way.
          if (key === "unary") args[1] = { ...(args[1] as object | undefined), signal };
          if (key === "exchange") args[0] = { ...(args[0] as object), signal };
          // With --trace, every call of the check reports its exchange to the check's sink.
          if (trace && (key === "raw" || key === "request" || key === "exchange")) args[0] = { ...(args[0] as object), trace };
          if (trace && key === "unary") args[1] = { ...(args[1] as object), trace };
          return (value as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
  return {
    ...ctx,
    signal,
    ...(ctx.grpc && { grpc: guard(ctx.grpc) }),
    replicas: ctx.replicas.map(guard),
    ...(ctx.http && { http: guard(ctx.http) }),
    ...(ctx.httpConfig && { httpConfig: { ...ctx.httpConfig, ...(ctx.httpConfig.replicas && { replicas: ctx.httpConfig.replicas.map(guard) }) } }),
  };
}
