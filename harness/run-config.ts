// Options resolved once: the one place where the run's defaults live and are applied. What the CLI, a configuration
// file or a caller of the API gives becomes a read-only, fully defaulted configuration (as fast-check's qualified
// parameters and vitest's resolved config); the engine, the session and the targets take it and default nothing.
import { resolve } from "node:path";
import type { TraceOptions } from "./trace/trace-writer.js";
import type { CheckDefinition, Profile, ReplicaMode } from "./check.js";
import type { Claims } from "./claims.js";
import type { Implementation } from "./config/config-file.js";
import type { Expectation } from "./expectations.js";
import type { Protocol } from "./protocols/index.js";
import type { ReplayArgs, Reporter, RunAttestation } from "./report.js";
import { CONTRACT_DIR } from "../common/paths.js";
import type { SloTerm } from "./load/slo.js";
import type { Mix } from "./load/_internals/resource-caller.js";
import { ConformanceError } from "./errors.js";
import { hasCredentials, withoutCredentials } from "./_internals/url-credentials.js";
import { isLocal, parseAddress, type ParsedAddress } from "./targets/address.js";
import type { CallBudget } from "./targets/budget.js";
import type { TlsOptions } from "./targets/connection.js";
import { endpointOf as httpEndpointOf, parseHttpBaseUrl } from "./targets/http-base-url.js";
import type { ApiKeyPlacement, PathWords } from "./targets/http-target.js";
import type { InMemoryClient } from "./targets/in-memory-client.js";
import type { HttpHandler } from "./targets/http-inject.js";
import { endpointOf, moduleOf } from "./targets/rpc-endpoint.js";
import { GRPC } from "./protocols/grpc/index.js";

/** Every default of a run. Read nowhere but here (test/architecture-options.test.ts holds it so). */
export const RUN_DEFAULTS = Object.freeze({
  /** Bound on one call or exchange, in milliseconds. */
  timeoutMs: 5000,
  /** Calls allowed for the whole run. */
  maxCalls: 10_000,
  /** Calls per second to a target on another machine (none on this one). */
  remoteRate: 50,
  /** Checks run side by side, and a check's own independent cases at once. */
  concurrency: 8,
  /** Cases per property. */
  runs: 100,
  /** Bound on one check's run, in milliseconds. */
  checkTimeoutMs: 60_000,
  /** The collection probed when none is named: the Message resource (the specification's example). */
  collections: Object.freeze(["/messages"]) as readonly string[],
  /** The header an API key goes in when none is named: the specification shows no placement (part 5). */
  apiKeyHeader: "X-API-Key",
  /** Bound on the requests discovery sends while following the server's links. */
  maxDiscoveryRequests: 50,
});

/** Every default of a `load` run, beside the run's: read nowhere but here and in load's --help. */
export const LOAD_DEFAULTS = Object.freeze({
  /** The protocol a run speaks when none is named. */
  protocol: GRPC,
  /** How long calls keep starting, in milliseconds. */
  durationMs: 10_000,
  /** The longest a run may be asked to last, in milliseconds. */
  maxDurationMs: 10 * 60_000,
  /** Calls in flight at once. */
  concurrency: 64,
  /** Connections the calls are spread over. */
  connections: 4,
  /** Threads that drive the calls. */
  threads: 1,
  /** Bound on one call, as check's (RUN_DEFAULTS.timeoutMs). */
  timeoutMs: RUN_DEFAULTS.timeoutMs,
  /** HTTP resources: the collection the messages are created in, as check's first (the specification's example). */
  collection: RUN_DEFAULTS.collections[0] as string,
  /** HTTP resources: how often each operation comes. */
  mix: Object.freeze({ create: 1, read: 8, list: 1, update: 1, delete: 1 }) as Mix,
});

export interface LoadOptions {
  /**
   * gRPC: host:port, dns:///host:port or unix:///path; Connect, gRPC-Web and HTTP: the base URL
   * (http(s)://host:port[/prefix]).
   */
  address: string;
  /** A protocol of the map that load drives (grpc, connect, grpc-web), or "http" for resources; default gRPC. */
  protocol?: string;
  /**
   * HTTP resources: the collection's path (default /messages) and the mix of operations (default LOAD_DEFAULTS.mix).
   */
  collection?: string;
  mix?: Mix;
  /** How long calls keep starting (default 10 s, at most 10 m); the run stops by itself after it. */
  durationMs?: number;
  /** Calls in flight at once (default 64). */
  concurrency?: number;
  /** Connections the calls are spread over (default 4); Connect and gRPC-Web over HTTP/1.1 use one a call in flight. */
  connections?: number;
  /** Calls started per second at most; absent for as fast as the target answers. */
  rate?: number;
  /** Bound on one call (default 5 s). */
  timeoutMs?: number;
  /**
   * Threads that drive calls, each with its share of the concurrency, connections and rate (default 1). gRPC goes
   * through a raw HTTP/2 client of about 10 µs of CPU a call (node:http2's costs 70-80), so one thread drives
   * grpc-go on a core of its own; more threads use more cores. Needs the compiled harness (dist/).
   */
  threads?: number;
  /** false: a target that is not this machine is refused (the CLI without --allow-remote). Default allowed. */
  allowRemote?: boolean;
  /** Stops the run early (Ctrl-C), keeping what was measured. */
  signal?: AbortSignal;
  /** Called about once a second. */
  onProgress?: (p: LoadProgress) => void;
  /** Thresholds the run is judged against. */
  slo?: readonly SloTerm[];
  /** Connect, gRPC-Web and HTTP over an https:// URL: the CA to trust and the client certificate (files). */
  tls?: TlsOptions;
  /** Connect, gRPC-Web and HTTP: the Host header and TLS server name. */
  authority?: string;
  /**
   * Connect and gRPC-Web at an http:// URL: HTTP/2 without TLS (h2c) by prior knowledge, instead of HTTP/1.1. Over
   * TLS the server's pick by ALPN decides, and this is refused.
   */
  http2PriorKnowledge?: boolean;
  /** Connect and gRPC-Web: metadata sent as headers on every call (-bin values base64). */
  metadata?: Readonly<Record<string, string>>;
  /** HTTP resources: the key sent with every request, where apiKeyIn places it (default the X-API-Key header). */
  apiKey?: string;
  apiKeyIn?: ApiKeyPlacement;
}

export interface LoadProgress {
  elapsedMs: number;
  requests: number;
  errors: number;
  requestsPerSecond: number;
}

/** A load run with every option given and checked, its target parsed once. */
export type ResolvedLoad = Readonly<
  Omit<
    LoadOptions,
    | "protocol"
    | "durationMs"
    | "concurrency"
    | "connections"
    | "threads"
    | "timeoutMs"
    | "collection"
    | "mix"
    | "apiKeyIn"
  > & {
    protocol: string;
    /** The flag that names the target, for messages: --grpc, --connect, --http. */
    flag: string;
    /** Where the target is: host and port (or socket), and for a target over HTTP its base URL. */
    endpoint: { address: ParsedAddress; url?: URL };
    durationMs: number;
    concurrency: number;
    connections: number;
    threads: number;
    timeoutMs: number;
    /** HTTP resources only. */
    collection?: string;
    mix?: Mix;
    apiKeyIn: ApiKeyPlacement;
  }
>;

export interface GrpcTargetOptions {
  /** host:port, dns:///host:port or unix:///path. */
  address: string;
  /** TLS: true for the system roots, or files; absent for plaintext. */
  tls?: boolean | TlsOptions;
  authority?: string;
  metadata?: Readonly<Record<string, string>>;
  /** Bound on one call in milliseconds (default 5000). */
  timeoutMs?: number;
  /** Calls allowed for the whole run (default 10,000). */
  maxCalls?: number;
  /** Calls per second (default: no limit on this machine, 50 elsewhere). */
  rate?: number;
  /** Shared across a target and its replicas, so the budget covers the whole run. */
  budget?: CallBudget;
  /**
   * The protocol to speak (default gRPC); for Connect and gRPC-Web, address is the base URL
   * http(s)://host:port[/prefix].
   */
  protocol?: Protocol | (string & {});
  /** A target with no socket (see in-memory-client.ts): it answers every call, and address is only its name. */
  inMemory?: InMemoryClient;
}

export interface HttpTargetOptions {
  /** http://host:port[/prefix]: every request goes to this origin, under this prefix. */
  baseUrl: string;
  /** Bound on one exchange in milliseconds (default 5000). */
  timeoutMs?: number;
  /** Sent with every request unless the request asks to leave it out. */
  apiKey?: string;
  /** Default X-API-Key. */
  apiKeyHeader?: string;
  /** Where the key goes; overrides apiKeyHeader. */
  apiKeyIn?: ApiKeyPlacement;
  /** Requests allowed for the whole run (default 10,000). */
  maxCalls?: number;
  /** Requests per second (default: no limit on this machine, 50 elsewhere). */
  rate?: number;
  /** Shared with other targets of the run, so the budget covers the whole run. */
  budget?: CallBudget;
  /** For an https:// base URL: the CA to trust instead of the system roots, and a client certificate. */
  tls?: TlsOptions;
  /**
   * A target with no socket (see http-inject.ts): this request handler serves every request in memory, and baseUrl
   * only names it (its origin is the Host header, its path the prefix).
   */
  inMemory?: HttpHandler;
}

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
  /** Words that name an action in a path, replacing the lexicon's verbs (RunOptions.pathWords). */
  verbs?: readonly string[];
  /** Words the verb rule lets through, beside the lexicon's: nouns of this interface spelled like verbs. */
  allowWords?: readonly string[];
  /** Bound on one request; default the gRPC timeout, or 5 s. */
  timeoutMs?: number;
  /** A target with no socket (see http-inject.ts): this request handler serves every request; baseUrl only names it. */
  inMemory?: HttpHandler;
  /** Requests allowed for the run when there is no gRPC target to share a budget with. */
  maxCalls?: number;
  rate?: number;
  /** For https:// URLs (the target's and its replicas'): the CA to trust, and a client certificate. */
  tls?: TlsOptions;
}

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
  /**
   * Checks run side by side, at most this many at once (see CheckDefinition.sharing); and a check's own independent
   * cases.
   */
  concurrency?: number;
  reporters?: readonly Reporter[];
  /**
   * The checks to choose from, in the order a run reports them: the engine is given its checks (the CLI gives it the
   * catalogue).
   */
  checks: readonly CheckDefinition[];
  /**
   * The path rules' verb lexicon, given beside the checks (the CLI and the package's runConformance give the
   * catalogue's). The run has no list of its own: without it, the path rules that tell verbs from nouns err.
   */
  pathWords?: PathWords;
  /** The gRPC target; grpc checks are skipped without one. */
  grpc?: GrpcTargetOptions;
  /**
   * The run's other RPC targets, each in another protocol (--grpc, --connect and --grpc-web together): opened behind
   * the run's one budget; an RPC check runs over the first target whose protocol it applies to, grpc first.
   */
  rpcPeers?: readonly GrpcTargetOptions[];
  /** Other instances of the same service, reached with the same options. */
  replicas?: readonly string[];
  /** How replicas are judged (see CheckContext.replicaMode). */
  replicaMode?: ReplicaMode;
  /** The HTTP target; http checks are skipped without one. */
  http?: HttpRunTarget;
  /** The client command under check (check-client): client checks are in scope with it; the report names it. */
  client?: string;
  /** The API key check-client hands the client: redacted from every output as http.apiKey is. */
  clientApiKey?: string;
  /** --trace DIR: the exchanges of every failing or erring check, written there (harness/trace/). */
  trace?: TraceOptions;
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
  /** The run's signed attestation is written (by a reporter the caller adds): the report names its file and key. */
  attestation?: RunAttestation;
  /** SHA-256 fingerprint of the TLS certificate the target presented, when the run spoke TLS: the report names it. */
  tlsFingerprint?: string;
  /**
   * Renders the command line that replays one check (the CLI renders the user's own invocation); without it
   * each result carries only its replay arguments as data.
   */
  replayCommand?: (args: ReplayArgs) => string;
}

/** An RPC target with every option given. */
export type ResolvedGrpcTarget = Readonly<
  GrpcTargetOptions &
    Required<Pick<GrpcTargetOptions, "metadata" | "timeoutMs" | "maxCalls" | "rate">> & { protocol: string }
>;

/** An HTTP target with every option given. */
export type ResolvedHttpTarget = Readonly<
  HttpTargetOptions &
    Required<Pick<HttpTargetOptions, "timeoutMs" | "apiKeyIn" | "maxCalls" | "rate">> & {
      /** baseUrl parsed, once, where the target is resolved. */
      url: URL;
    }
>;

/** The HTTP target of a run with every option given. */
export type ResolvedHttpRun = Readonly<
  HttpRunTarget &
    Required<
      Pick<HttpRunTarget, "collections" | "apiKeyHeader" | "apiKeyIn" | "replicas" | "timeoutMs" | "maxCalls" | "rate">
    > & {
      /** baseUrl parsed, once, where the run is resolved. */
      url: URL;
      /** The replicas' URLs, parsed once with them. */
      replicaUrls: readonly URL[];
      maxDiscoveryRequests: number;
      words?: PathWords;
    }
>;

/** What a session is opened with. */
export interface SessionOptions {
  contract?: string;
  grpc?: GrpcTargetOptions;
  /** The run's other RPC targets (RunOptions.rpcPeers). */
  rpcPeers?: readonly GrpcTargetOptions[];
  replicas?: readonly string[];
  replicaMode?: ReplicaMode;
  http?: HttpRunTarget;
  /** The path rules' verb lexicon (RunOptions.pathWords). */
  pathWords?: PathWords;
  seed: number;
  runs: number;
  path?: string;
  /** Calls a check may have in flight at once for cases of its own; default 1. */
  parallelism?: number;
}

export type ResolvedSession = Readonly<{
  contractDir: string;
  grpc?: ResolvedGrpcTarget;
  rpcPeers: readonly ResolvedGrpcTarget[];
  replicas: readonly string[];
  replicaMode?: ReplicaMode;
  http?: ResolvedHttpRun;
  seed: number;
  runs: number;
  path?: string;
  parallelism: number;
  /** Bound on one call, as checks are told it. */
  timeoutMs: number;
}>;

/** The run with every option given: what the engine runs by. */
export type RunConfig = Readonly<
  Omit<RunOptions, "grpc" | "http" | "rpcPeers"> & {
    seed: number;
    runs: number;
    concurrency: number;
    checkTimeoutMs: number;
    grpc?: ResolvedGrpcTarget;
    rpcPeers: readonly ResolvedGrpcTarget[];
    http?: ResolvedHttpRun;
    session: ResolvedSession;
  }
>;

const localHost = (host: string) => isLocal({ kind: "tcp", host, port: 1, grpcTarget: "" });

export function resolveGrpcTarget(options: GrpcTargetOptions): ResolvedGrpcTarget {
  // An in-memory target has no address: it counts as this machine (no rate limit by default).
  const local = options.inMemory !== undefined || isLocal(endpointOf(options).address);
  return Object.freeze({
    ...options,
    protocol: options.protocol ?? GRPC,
    metadata: options.metadata ?? {},
    timeoutMs: options.timeoutMs ?? RUN_DEFAULTS.timeoutMs,
    maxCalls: options.maxCalls ?? RUN_DEFAULTS.maxCalls,
    rate: options.rate ?? (local ? Infinity : RUN_DEFAULTS.remoteRate),
  });
}

/** An HTTP target's options resolved; its base URL parsed here unless the caller parsed it already (resolveHttpRun). */
export function resolveHttpTarget(
  options: HttpTargetOptions,
  url: URL = parseHttpBaseUrl(options.baseUrl),
): ResolvedHttpTarget {
  const { host } = httpEndpointOf(url);
  // An in-memory target, like an RPC one, counts as this machine (no rate limit by default).
  const local = options.inMemory !== undefined || localHost(host);
  return Object.freeze({
    ...options,
    url,
    timeoutMs: options.timeoutMs ?? RUN_DEFAULTS.timeoutMs,
    apiKeyIn: options.apiKeyIn ?? { in: "header" as const, name: options.apiKeyHeader ?? RUN_DEFAULTS.apiKeyHeader },
    maxCalls: options.maxCalls ?? RUN_DEFAULTS.maxCalls,
    rate: options.rate ?? (local ? Infinity : RUN_DEFAULTS.remoteRate),
  });
}

/** The HTTP target of a run; its timeout is the RPC target's when it names none. */
export function resolveHttpRun(
  h: HttpRunTarget,
  grpc: ResolvedGrpcTarget | undefined,
  pathWords?: PathWords,
): ResolvedHttpRun {
  const apiKeyHeader = h.apiKeyHeader ?? RUN_DEFAULTS.apiKeyHeader;
  const url = parseRunBaseUrl(h.baseUrl);
  const target = resolveHttpTarget(
    { ...h, apiKeyHeader, timeoutMs: h.timeoutMs ?? grpc?.timeoutMs ?? RUN_DEFAULTS.timeoutMs },
    url,
  );
  return Object.freeze({
    ...h,
    url,
    collections: h.collections && h.collections.length > 0 ? h.collections : RUN_DEFAULTS.collections,
    apiKeyHeader,
    apiKeyIn: target.apiKeyIn,
    replicas: h.replicas ?? [],
    replicaUrls: (h.replicas ?? []).map((r) => parseHttpBaseUrl(r, "--http-replica")),
    timeoutMs: target.timeoutMs,
    maxCalls: target.maxCalls,
    rate: target.rate,
    maxDiscoveryRequests: RUN_DEFAULTS.maxDiscoveryRequests,
    ...(pathWords && { words: resolvePathWords(pathWords, h) }),
  });
}

/** The run's HTTP base URL, parsed once here: one that carries credentials is refused without echoing them. */
function parseRunBaseUrl(baseUrl: string): URL {
  if (hasCredentials(baseUrl)) {
    throw new ConformanceError(
      "usage",
      `http.baseUrl ${withoutCredentials(baseUrl)}: credentials in the URL are not supported (give the key as ` +
        `http.apiKey)`,
    );
  }
  return parseHttpBaseUrl(baseUrl);
}

/**
 * The lexicon the run was given, under the user's words: --verbs replaces its verbs, --allow-word adds to its nouns.
 */
function resolvePathWords(given: PathWords, h: Pick<HttpRunTarget, "verbs" | "allowWords">): PathWords {
  return Object.freeze({
    verbs: h.verbs !== undefined && h.verbs.length > 0 ? h.verbs : given.verbs,
    allowed: [...given.allowed, ...(h.allowWords ?? [])],
  });
}

export function resolveSession(options: SessionOptions): ResolvedSession {
  const grpc = options.grpc && resolveGrpcTarget(options.grpc);
  return Object.freeze({
    contractDir: resolve(options.contract ?? CONTRACT_DIR),
    ...(grpc && { grpc }),
    rpcPeers: grpc ? (options.rpcPeers ?? []).map(resolveGrpcTarget) : [],
    replicas: options.replicas ?? [],
    ...(options.replicaMode !== undefined && { replicaMode: options.replicaMode }),
    ...(options.http && { http: resolveHttpRun(options.http, grpc, options.pathWords) }),
    seed: options.seed,
    runs: options.runs,
    ...(options.path !== undefined && { path: options.path }),
    parallelism: options.parallelism ?? 1,
    timeoutMs: grpc?.timeoutMs ?? RUN_DEFAULTS.timeoutMs,
  });
}

/** The run's options, every default applied: the one step from what was given to what runs. */
export function resolveRunConfig(options: RunOptions, randomSeed: () => number): RunConfig {
  const seed = options.seed ?? randomSeed();
  const runs = options.runs ?? RUN_DEFAULTS.runs;
  const concurrency = options.concurrency ?? RUN_DEFAULTS.concurrency;
  const session = resolveSession({
    ...options,
    seed,
    runs,
    parallelism: concurrency,
  });
  const { grpc: _grpc, http: _http, rpcPeers: _peers, ...rest } = options;
  return Object.freeze({
    ...rest,
    seed,
    runs,
    concurrency,
    checkTimeoutMs: options.checkTimeoutMs ?? RUN_DEFAULTS.checkTimeoutMs,
    ...(session.grpc && { grpc: session.grpc }),
    rpcPeers: session.rpcPeers,
    ...(session.http && { http: session.http }),
    session,
  });
}

/** The HTTP resource interface `load --http` drives: not a protocol of the map, and spoken of by this name. */
export const LOAD_HTTP = "http";

/** Where a load run's target is, parsed once by its protocol's rules (the HTTP resource interface's for --http). */
function loadEndpoint(
  protocol: string,
  address: string,
): { flag: string; endpoint: { address: ParsedAddress; url?: URL } } {
  if (protocol !== LOAD_HTTP) {
    const flag = moduleOf(protocol).cli.flag;
    return { flag, endpoint: endpointOf({ address, protocol }, flag) };
  }
  const url = parseHttpBaseUrl(address, "--http");
  // URL.hostname keeps an IPv6 address's brackets, as parseAddress wants them.
  return {
    flag: "--http",
    endpoint: { url, address: parseAddress(`${url.hostname}:${httpEndpointOf(url).port}`, "--http") },
  };
}

/** The flag a run's TLS options came from, for messages. */
const tlsFlag = (tls: TlsOptions): string =>
  tls.caFile !== undefined
    ? "--ca"
    : tls.certFile !== undefined
      ? "--cert"
      : tls.keyFile !== undefined
        ? "--key"
        : "--tls";

/**
 * TLS, authority, metadata and the API key, each refused where it does not apply (exit 2 naming the flag); the TLS a
 * run speaks: as given, or the system roots for an https:// URL given none.
 */
function loadTransportRules(
  o: LoadOptions,
  protocol: string,
  flag: string,
  url: URL | undefined,
): TlsOptions | undefined {
  const usage = (message: string) => new ConformanceError("usage", message);
  const http = protocol === LOAD_HTTP;
  const metadata = Object.keys(o.metadata ?? {}).length > 0;
  const given = [o.tls && tlsFlag(o.tls), o.authority !== undefined && "--authority", metadata && "--metadata"].filter(
    (f): f is string => typeof f === "string",
  );
  // The raw HTTP/2 caller (gRPC) speaks plaintext and sends no metadata.
  if (!http && moduleOf(protocol).needsHttp2Handshake && given.length > 0) {
    throw usage(
      `${given[0]}: load over ${flag} speaks plaintext without metadata; TLS and metadata are for --connect, ` +
        `--grpc-web and --http runs`,
    );
  }
  if (http && metadata) throw usage("--metadata is for --connect and --grpc-web runs; --http takes --api-key");
  if (!http && (o.apiKey !== undefined || o.apiKeyIn !== undefined))
    throw usage(
      `--${o.apiKey !== undefined ? "api-key" : "api-key-in"} is for --http runs; --connect and --grpc-web take ` +
        `--metadata`,
    );
  if (o.apiKey === "") throw usage("--api-key: the key is empty");
  const secure = url?.protocol === "https:";
  if (o.http2PriorKnowledge === true && (http || moduleOf(protocol).needsHttp2Handshake || secure)) {
    const why = secure
      ? "over TLS the server picks the HTTP version by ALPN"
      : `it is for --connect and --grpc-web, not ${flag}`;
    throw usage(`--http2-prior-knowledge: ${why}`);
  }
  if (!secure && o.tls !== undefined)
    throw usage(`${flag} ${o.address}: TLS (--tls, --ca, --cert, --key) needs an https:// URL`);
  return secure ? (o.tls ?? {}) : undefined;
}

/**
 * A load run's options, every default applied and every rule between them checked here, once (exit 2 naming the flag).
 */
export function resolveLoadOptions(options: LoadOptions): ResolvedLoad {
  const protocol = options.protocol ?? LOAD_DEFAULTS.protocol;
  const durationMs = options.durationMs ?? LOAD_DEFAULTS.durationMs;
  const concurrency = options.concurrency ?? LOAD_DEFAULTS.concurrency;
  const connections = options.connections ?? LOAD_DEFAULTS.connections;
  const threads = options.threads ?? LOAD_DEFAULTS.threads;
  const usage = (message: string) => new ConformanceError("usage", message);
  if (!(durationMs >= 1 && durationMs <= LOAD_DEFAULTS.maxDurationMs))
    throw usage(`--duration must be between 1ms and ${LOAD_DEFAULTS.maxDurationMs / 60_000}m, got ${durationMs}ms`);
  if (!(Number.isInteger(threads) && threads >= 1 && threads <= Math.min(concurrency, connections))) {
    throw usage(
      `--threads ${threads}: expected a whole number from 1 to the lesser of --concurrency and --connections`,
    );
  }
  const http = protocol === LOAD_HTTP;
  if (!http && (options.mix !== undefined || options.collection !== undefined))
    throw usage(`--${options.mix !== undefined ? "mix" : "collection"} is for --http runs`);
  // Threads drive the raw HTTP/2 caller, which speaks only the protocol that needs HTTP/2 (gRPC).
  if (threads > 1 && (http || !moduleOf(protocol).needsHttp2Handshake))
    throw usage(`--threads ${threads}: only a gRPC run drives from several threads`);
  const { flag, endpoint } = loadEndpoint(protocol, options.address);
  if (options.allowRemote === false && !isLocal(endpoint.address))
    throw usage(`${flag} ${options.address}: not this machine; a load run elsewhere needs --allow-remote`);
  const tls = loadTransportRules(options, protocol, flag, endpoint.url);
  return Object.freeze({
    ...options,
    ...(tls && { tls }),
    protocol,
    flag,
    endpoint,
    durationMs,
    concurrency,
    connections,
    threads,
    timeoutMs: options.timeoutMs ?? LOAD_DEFAULTS.timeoutMs,
    ...(http && { collection: options.collection ?? LOAD_DEFAULTS.collection, mix: options.mix ?? LOAD_DEFAULTS.mix }),
    apiKeyIn: options.apiKeyIn ?? { in: "header" as const, name: RUN_DEFAULTS.apiKeyHeader },
  });
}
