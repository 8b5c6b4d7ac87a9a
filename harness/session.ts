// Opens what checks need for one run: the targets behind one budget, and the context each check receives. It takes
// the session's resolved options (harness/run-config.ts) and defaults nothing.
import { setMaxListeners } from "node:events";
import { CapabilityLog, type ResourceCapabilities } from "./capabilities.js";
import type { CheckContext, CheckDefinition, CheckOutcome } from "./check.js";
import { ConformanceError } from "./errors.js";
import {
  resolveSession,
  type ResolvedGrpcTarget,
  type ResolvedHttpRun,
  type ResolvedSession,
  type SessionOptions,
} from "./run-config.js";
import type { TraceSink } from "./trace/exchange-record.js";
import { requestBytes, type TrafficCounter } from "./traffic.js";
import { CallBudget } from "./targets/budget.js";
import { openGrpcTarget } from "./targets/create-grpc-target.js";
import { assertSpeaksHttp, openHttpTarget, probeHttpReachable } from "./targets/create-http-target.js";
import type { GrpcTarget } from "./targets/grpc-target.js";
import { suspectsOf } from "./targets/guards.js";
import { probeHttpCredentials } from "./targets/http-credentials.js";
import type { HttpConfig, HttpTarget } from "./targets/http-target.js";
import { BackpressureLog, type Backpressure, type Refusing } from "./targets/backpressure.js";
import { createAnswerTally, type Unanswered } from "./targets/answer-tally.js";
import { moduleOf } from "./targets/rpc-endpoint.js";
import { assertSpeaksGrpc, assertSpeaksProtocol, probeCredentials, probeReachable } from "./targets/rpc-probes.js";

export type { SessionOptions };

export interface Session {
  context(): CheckContext;
  /**
   * The waits the targets made when asked to slow down (429, 503 with Retry-After, RESOURCE_EXHAUSTED with a pushback).
   */
  backpressure(): Backpressure;
  /** The targets that kept refusing a request past the bound of those waits. */
  refusing(): Refusing[];
  /** The targets the checks called that answered none of their calls (each failed at the connection level). */
  unanswered(): Unanswered[];
  /** What the checks learned the targets offer, resource by resource. */
  capabilities(): ResourceCapabilities[];
  close(): Promise<void>;
}

type Needs = { grpc: boolean; http: boolean };

/** Probes every target first (exit 3 with the address and the cause when one does not answer), then opens them. */
export function openSession(options: SessionOptions, needs: Needs = { grpc: true, http: true }): Promise<Session> {
  return openResolvedSession(resolveSession(options), needs);
}

/** openSession for options already resolved (the runner's). */
export async function openResolvedSession(options: ResolvedSession, needs: Needs): Promise<Session> {
  const g = needs.grpc ? options.grpc : undefined;
  const h = needs.http ? options.http : undefined;
  const peers = g ? options.rpcPeers : [];
  await probeTargets(g, options.replicas, h, peers);
  const log = new BackpressureLog();
  const { rpc, http } = await openTargets(g, h, options.replicas, peers, log);
  const memo = new Map<string, Promise<unknown>>();
  const capabilities = new CapabilityLog();
  // The checks see each target through the tally, once for the run: the set-up probes above are not counted.
  const tally = createAnswerTally();
  const rpcLabel = (t: ResolvedGrpcTarget, flag?: string) =>
    `${flag ?? (t.inMemory ? "in-memory" : moduleOf(t.protocol).cli.flag)} ${t.address}`;
  const seen = rpc &&
    g && {
      grpc: tally.watch(rpc.grpc, rpcLabel(g)),
      peers: rpc.peers.map((p, i) => tally.watch(p, rpcLabel(peers[i] as ResolvedGrpcTarget))),
      replicas: rpc.replicas.map((r, i) => tally.watch(r, `--replica ${options.replicas[i] ?? ""}`)),
    };
  const httpSeen = http &&
    h && {
      http: tally.watch(http.http, `--http ${h.baseUrl}`),
      httpConfig: {
        ...http.httpConfig,
        ...(http.httpConfig.replicas && {
          replicas: http.httpConfig.replicas.map((r, i) => tally.watch(r, `--http-replica ${h.replicas[i] ?? ""}`)),
        }),
      },
    };
  return {
    context: () => ({
      contractDir: options.contractDir,
      ...(seen && { grpc: seen.grpc, rpcTargets: [seen.grpc, ...seen.peers] }),
      ...(httpSeen && { http: httpSeen.http, httpConfig: httpSeen.httpConfig }),
      replicas: seen?.replicas ?? [],
      ...(options.replicaMode !== undefined && { replicaMode: options.replicaMode }),
      seed: options.seed,
      runs: options.runs,
      timeoutMs: options.timeoutMs,
      memo,
      capabilities,
      ...(options.path !== undefined && { path: options.path }),
      signal: new AbortController().signal,
      parallelism: options.parallelism,
    }),
    unanswered: () => tally.unanswered(),
    backpressure: () => log.summary(),
    refusing: () => log.refusing(),
    capabilities: () => capabilities.list(),
    async close() {
      await rpc?.close();
      await http?.close();
    },
  };
}

/**
 * Whether each target answers at all. The RPC targets' probes and the HTTP targets' go side by side (each target's
 * own one after another): the first failure in the order RPC, HTTP, peers is the one told, as when they ran one
 * after another.
 */
async function probeTargets(
  g: ResolvedGrpcTarget | undefined,
  replicas: readonly string[],
  h: ResolvedHttpRun | undefined,
  peers: readonly ResolvedGrpcTarget[],
): Promise<void> {
  const rpc = async (t: ResolvedGrpcTarget) => {
    if (t.inMemory) return;
    await probeReachable(t);
    for (const r of replicas) await probeReachable({ ...t, address: r }, "--replica");
  };
  const http = async (run: ResolvedHttpRun) => {
    if (run.inMemory) return;
    const given = [run.baseUrl, ...run.replicas];
    for (const [i, url] of [run.url, ...run.replicaUrls].entries()) {
      const flag = i === 0 ? "--http" : "--http-replica";
      await probeHttpReachable(url, run.timeoutMs, run.tls, flag, given[i]);
      await assertSpeaksHttp(url, flag, run.timeoutMs, run.tls, given[i]);
    }
  };
  const others = async () => {
    for (const p of peers) if (!p.inMemory) await probeReachable(p);
  };
  await firstFailure([g && rpc(g), h && http(h), others()]);
}

/** Settles every step, then throws the first failure in the order given. */
async function firstFailure(steps: readonly (Promise<unknown> | undefined)[]): Promise<unknown[]> {
  const settled = await Promise.allSettled(steps);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value);
}

/**
 * The RPC and HTTP targets, opened side by side behind the run's one budget (the RPC target's, when there is one).
 * A failure of either closes what the other opened; the RPC one's is told first, as when they opened one after another.
 */
async function openTargets(
  g: ResolvedGrpcTarget | undefined,
  h: ResolvedHttpRun | undefined,
  replicas: readonly string[],
  peers: readonly ResolvedGrpcTarget[],
  log: BackpressureLog,
) {
  const budget = g && (g.budget ?? new CallBudget({ maxCalls: g.maxCalls, rate: g.rate }));
  const opening = [
    g && budget && openRpcTargets({ ...g, budget }, replicas, peers, log),
    h && openHttpTargets(h, budget, log),
  ] as const;
  try {
    const [rpc, http] = (await firstFailure(opening)) as [Awaited<(typeof opening)[0]>, Awaited<(typeof opening)[1]>];
    return { rpc, http };
  } catch (err) {
    await Promise.all(
      opening.map((o) =>
        o?.then(
          (t) => t.close(),
          () => undefined,
        ),
      ),
    );
    throw err;
  }
}

/** The RPC targets and the replicas, behind one budget, once each speaks its protocol and takes our credentials. */
async function openRpcTargets(
  g: ResolvedGrpcTarget,
  replicaAddresses: readonly string[],
  peerTargets: readonly ResolvedGrpcTarget[],
  log: BackpressureLog,
) {
  // A target that accepts connections but never speaks HTTP/2 is exit 3 before any check runs, with the reason.
  await assertSpeaksGrpc(g);
  for (const r of replicaAddresses) await assertSpeaksGrpc({ ...g, address: r }, "--replica");
  const grpc = openGrpcTarget(g, log);
  const replicas: GrpcTarget[] = replicaAddresses.map((r) =>
    openGrpcTarget({ ...g, address: r, budget: grpc.budget }, log),
  );
  const closeOpened = async () => {
    for (const t of [grpc, ...replicas]) await t.close();
  };
  // A target that answers in another protocol than its flag names: exit 3 with what it answered, before any check.
  // Then one that wants credentials it was not given: "cannot check", not a list of MUST failures.
  await (async () => {
    await assertSpeaksProtocol(grpc, g);
    for (const [i, r] of replicas.entries())
      await assertSpeaksProtocol(r, { ...g, address: replicaAddresses[i] as string }, "--replica");
    await probeCredentials(grpc, g);
  })().catch(async (err: unknown) => (await closeOpened(), Promise.reject(err)));
  const peers = await openPeers(peerTargets, grpc.budget, log).catch(
    async (err: unknown) => (await closeOpened(), Promise.reject(err)),
  );
  return {
    grpc,
    replicas,
    peers,
    async close() {
      await grpc.close();
      for (const r of [...replicas, ...peers]) await r.close();
    },
  };
}

/** The run's other RPC targets (another protocol each), behind the first one's budget, each probed as the first is. */
async function openPeers(
  targets: readonly ResolvedGrpcTarget[],
  budget: CallBudget,
  log: BackpressureLog,
): Promise<GrpcTarget[]> {
  const opened: GrpcTarget[] = [];
  try {
    for (const t of targets) {
      await assertSpeaksGrpc(t);
      const peer = openGrpcTarget({ ...t, budget }, log);
      opened.push(peer);
      await assertSpeaksProtocol(peer, t);
      await probeCredentials(peer, t);
    }
    return opened;
  } catch (err) {
    for (const p of opened) await p.close();
    throw err;
  }
}

/** The HTTP target and its replicas, behind the run's one budget, once the key is where the target wants it. */
async function openHttpTargets(h: ResolvedHttpRun, budget: CallBudget | undefined, backpressure: BackpressureLog) {
  // One budget for the whole run: the HTTP requests count against --max-rpcs beside the gRPC calls.
  const shared = {
    timeoutMs: h.timeoutMs,
    apiKeyIn: h.apiKeyIn,
    maxCalls: h.maxCalls,
    rate: h.rate,
    ...(h.apiKey !== undefined && { apiKey: h.apiKey }),
    ...(h.tls !== undefined && { tls: h.tls }),
  };
  // An in-memory target (http-inject.ts) is the primary alone: a replica is a URL, on the wire.
  const own = { ...shared, ...(h.inMemory && { inMemory: h.inMemory }) };
  const primary = openHttpTarget({ baseUrl: h.baseUrl, url: h.url, ...own, ...(budget && { budget }) }, backpressure);
  // Replicas (--http-replica) get the same key where it goes, and count against the same budget.
  const httpReplicas = h.replicaUrls.map((url, i) =>
    openHttpTarget({ baseUrl: h.replicas[i] as string, url, ...shared, budget: primary.budget }, backpressure),
  );
  const httpConfig: HttpConfig = {
    collections: h.collections,
    apiKeyHeader: h.apiKeyHeader,
    apiKeyIn: h.apiKeyIn,
    ...(h.filters !== undefined && h.filters.length > 0 && { filters: h.filters }),
    ...(httpReplicas.length > 0 && { replicas: httpReplicas }),
    maxDiscoveryRequests: h.maxDiscoveryRequests,
    ...(h.words && { words: h.words }),
    ...(h.apiKey !== undefined && { apiKey: h.apiKey }),
    ...(h.openapi !== undefined && { openapi: h.openapi }),
  };
  const close = async () => void (await Promise.all([primary.close(), ...httpReplicas.map((r) => r.close())]));
  // A target that wants a key it was not given, or refuses the one given where it was sent: exit 5, not a verdict.
  await probeHttpCredentials(primary, {
    collection: h.collections[0] as string,
    keyGiven: h.apiKey !== undefined,
    placement: h.apiKeyIn,
    withPlacement: (placement) =>
      openHttpTarget(
        { baseUrl: h.baseUrl, url: h.url, ...own, apiKeyIn: placement, budget: primary.budget },
        backpressure,
      ),
  }).catch(async (err: unknown) => (await close(), Promise.reject(err)));
  return { http: primary as HttpTarget, httpConfig, close };
}

/**
 * Runs one check with a bound on its time; what it throws becomes an error outcome, never a pass, except a
 * usage or configuration error, which is the user's to fix and is thrown on.
 */
export async function runCheck(
  check: CheckDefinition,
  ctx: CheckContext,
  timeoutMs: number,
  trace?: TraceSink,
  counter?: TrafficCounter,
): Promise<CheckOutcome> {
  if (check.area === "grpc" && !ctx.grpc)
    return { status: "skip", message: "no RPC target (--grpc HOST:PORT, --connect URL or --grpc-web URL)" };
  const spoken = ctx.grpc?.protocol;
  if (
    check.area === "grpc" &&
    spoken !== undefined &&
    check.protocols &&
    !(check.protocols as readonly string[]).includes(spoken)
  ) {
    return {
      status: "skip",
      message: `applies to ${check.protocols.join(", ")} only; the target is spoken to in ${spoken}`,
    };
  }
  if (check.area === "http" && !ctx.http) return { status: "skip", message: "no HTTP target (--http URL)" };
  const controller = new AbortController();
  // Each call in flight listens on the check's signal until it ends: a check's own calls and those of a probe it
  // started (the receive limit's sizes) go side by side, each side within --concurrency.
  setMaxListeners(Math.max(16, 4 * ctx.parallelism), controller.signal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckOutcome>((resolvePromise) => {
    timer = setTimeout(() => {
      controller.abort();
      resolvePromise({ status: "error", message: `did not finish within ${timeoutMs} ms` });
    }, timeoutMs);
  });
  try {
    return await Promise.race([check.run(bound(ctx, controller.signal, trace, counter)), timeout]);
  } catch (reason) {
    const err = ConformanceError.from(reason);
    // A bad input of the user's (an OpenAPI document that does not parse, say) ends the run: exit 2, one line; so
    // does a fault the harness names as its own (a dependency missing): exit 70, never a check's error and exit 1.
    if (err.code === "usage" || err.code === "config") throw err;
    if (err.code === "internal" && reason instanceof ConformanceError) throw err;
    return { status: "error", message: err.message, ...suspectsOf(reason) };
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
 * the RPC calls under way are cancelled then, so that nothing keeps calling the target after the check ended. Every
 * call passes `counter`, which counts the check's exchanges, bytes and round trips (harness/traffic.ts).
 */
function bound(ctx: CheckContext, signal: AbortSignal, trace?: TraceSink, counter?: TrafficCounter): CheckContext {
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
          // raw(request) and request(request) carry it too: the waits a target asks for end with the check.
          if (key === "raw" || key === "request") args[0] = { ...(args[0] as object), signal };
          // With --trace, every call of the check reports its exchange to the check's sink.
          if (trace && (key === "raw" || key === "request" || key === "exchange"))
            args[0] = { ...(args[0] as object), trace };
          if (trace && key === "unary") args[1] = { ...(args[1] as object), trace };
          const call = () => (value as (...a: unknown[]) => Promise<unknown>).apply(t, args);
          // Each call counts for the check whose context made it (a memoised probe's for the check that started it).
          return counter ? counter.around(requestBytes(String(key), args), call) : call();
        };
      },
    });
  return {
    ...ctx,
    signal,
    ...(ctx.grpc && { grpc: guard(ctx.grpc) }),
    ...(ctx.rpcTargets && { rpcTargets: ctx.rpcTargets.map(guard) }),
    replicas: ctx.replicas.map(guard),
    ...(ctx.http && { http: guard(ctx.http) }),
    ...(ctx.httpConfig && {
      httpConfig: {
        ...ctx.httpConfig,
        ...(ctx.httpConfig.replicas && { replicas: ctx.httpConfig.replicas.map(guard) }),
      },
    }),
  };
}
