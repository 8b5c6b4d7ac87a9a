// `check`: runs the conformance catalogue against a target and reports; thin over runConformance.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { InvalidArgumentError, Option, type Command } from "commander";
import { catalogue } from "../../suites/index.js";
import { ConformanceError } from "../errors.js";
import { createReporters, REPORTER_NAMES } from "../reporters/index.js";
import type { Reporter } from "../report.js";
import { runConformance, type RunOptions } from "../runner.js";
import { parseAddress } from "../targets/address.js";
import type { GrpcTargetOptions } from "../targets/create-grpc-target.js";
import { parseHttpBaseUrl } from "../targets/create-http-target.js";
import type { HttpRunTarget } from "../session.js";
import { parseApiKeyPlacement, type ApiKeyPlacement } from "../targets/http-target.js";
import { hasCredentials, withoutCredentials } from "../_internals/url-credentials.js";
import type { CliIo } from "./io.js";
import { createReplayRenderer } from "./replay.js";
import { chooseReporters, collectReporter, openReporterFiles, type ReporterRequest, type ReportFlags } from "./reporter-option.js";

export interface CheckCliOptions extends ReportFlags {
  grpc?: string;
  replica: string[];
  replicaMode: "stateless" | "equal";
  http?: string;
  collection: string[];
  openapi?: string;
  apiKey?: string;
  apiKeyHeader?: string;
  apiKeyIn?: string;
  httpReplica: string[];
  filter: string[];
  verbs: string[];
  allowWord: string[];
  image?: string;
  grpcPort: number;
  httpPort?: number;
  env: string[];
  waitLog?: string;
  tls?: boolean;
  ca?: string;
  cert?: string;
  key?: string;
  authority?: string;
  metadata: string[];
  metadataFromEnv: string[];
  metadataFile: string[];
  timeout: number;
  maxRpcs?: number;
  rate?: number;
  contract?: string;
  only: string[];
  skip: string[];
  seed?: number;
  runs: number;
  path?: string;
  strict?: boolean;
  profile: "contract" | "protocol";
  expectFailures?: string;
  list?: boolean;
  reporter: ReporterRequest[];
}

const collect = (value: string, previous: string[]) => [...previous, ...value.split(",").filter(Boolean)];
const repeat = (value: string, previous: string[]) => [...previous, value];

export function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number, got ${JSON.stringify(value)}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

const DURATION_UNITS = { ms: 1, s: 1000, m: 60_000 } as const;

/** A duration with its unit: 500ms, 5s, 1m (1.5s too). A bare number is refused: is 5 five seconds or five ms? */
export function duration(name: string, max = 600_000) {
  return (value: string): number => {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
    if (!m) throw new InvalidArgumentError(`${name} must be a duration such as 500ms, 5s or 1m, got ${JSON.stringify(value)}`);
    if (m[2] === undefined) throw new InvalidArgumentError(`${name} ${value}: give a unit, ms, s or m (such as ${value}s or ${value}ms)`);
    const n = Number(m[1]) * DURATION_UNITS[m[2] as keyof typeof DURATION_UNITS];
    if (n < 1 || n > max) throw new InvalidArgumentError(`${name} must be between 1ms and ${max / 60_000}m, got ${value}`);
    return Math.round(n);
  };
}

/** A duration option whose help shows its default as the user writes it (5s), not as milliseconds. */
export function durationOption(flags: string, description: string, defaultMs: number, defaultShown: string, max?: number): Option {
  return new Option(flags, description).argParser(duration(flags.split(" ")[0] as string, max)).default(defaultMs, defaultShown);
}

/**
 * key=value pairs, checked for what gRPC allows in a key. `source` names where a pair came from; a value is
 * never repeated in an error, as it is often a credential.
 */
export function parseMetadata(pairs: readonly string[], source = (pair: string) => `--metadata ${pair.slice(0, Math.max(0, pair.indexOf("=")))}=...`): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new ConformanceError("usage", `${pair.includes("=") ? source(pair) : `--metadata ${pair}`}: expected key=value`);
    const key = pair.slice(0, eq).trim().toLowerCase();
    if (!/^[0-9a-z_.-]+$/.test(key) || key.startsWith("grpc-")) {
      throw new ConformanceError("usage", `${source(pair)}: ${JSON.stringify(key)} is not a custom metadata key`);
    }
    out[key] = pair.slice(eq + 1);
  }
  return out;
}

/** key=value lines (blank lines and # comments ignored), as an environment variable or a file holds them. */
function metadataLines(text: string, where: string): Record<string, string> {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
  const out: Record<string, string> = {};
  lines.forEach((line, i) => Object.assign(out, parseMetadata([line], () => `${where}: line ${i + 1}`)));
  return out;
}

/** Every metadata pair of the run: --metadata, then --metadata-from-env variables, then --metadata-file files. */
export function collectMetadata(opts: Pick<CheckCliOptions, "metadata" | "metadataFromEnv" | "metadataFile">, env: CliIo["env"]): Record<string, string> {
  const out = parseMetadata(opts.metadata);
  for (const name of opts.metadataFromEnv) {
    const text = env[name];
    if (text === undefined || text === "") throw new ConformanceError("usage", `--metadata-from-env ${name}: the environment variable is not set`);
    Object.assign(out, metadataLines(text, `--metadata-from-env ${name}`));
  }
  for (const file of opts.metadataFile) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new ConformanceError("usage", `--metadata-file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    Object.assign(out, metadataLines(text, `--metadata-file ${file}`));
  }
  return out;
}

/** Usage errors among the options, found before any server starts or any target is touched. */
export function checkUsage(opts: CheckCliOptions, env: CliIo["env"] = {}): void {
  if ((opts.ca || opts.cert || opts.key) && !opts.tls) {
    throw new ConformanceError("usage", "--ca, --cert and --key need --tls");
  }
  if (opts.replica.length > 0 && opts.grpc === undefined) throw new ConformanceError("usage", "--replica needs --grpc");
  if (opts.grpc !== undefined) parseAddress(opts.grpc);
  for (const r of opts.replica) parseAddress(r, "--replica");
  collectMetadata(opts, env);
  if (opts.http !== undefined && hasCredentials(opts.http)) {
    throw new ConformanceError("usage", `--http ${withoutCredentials(opts.http)}: credentials in the URL are not supported (give the key with --api-key or EXAMPLE_API_KEY)`);
  }
  const httpOnly = [
    ["--collection", opts.collection.length > 0],
    ["--openapi", opts.openapi !== undefined],
    ["--api-key", opts.apiKey !== undefined],
    ["--api-key-header", opts.apiKeyHeader !== undefined],
    ["--api-key-in", opts.apiKeyIn !== undefined],
    ["--http-replica", opts.httpReplica.length > 0],
    ["--filter", opts.filter.length > 0],
    ["--verbs", opts.verbs.length > 0],
    ["--allow-word", opts.allowWord.length > 0],
  ] as const;
  for (const [flag, given] of httpOnly) {
    // Without --http the built-in reference server is checked; it needs none of these.
    if (given && opts.http === undefined && opts.httpPort === undefined) throw new ConformanceError("usage", `${flag} needs --http (or --image with --http-port)`);
  }
  if (opts.http !== undefined) parseHttpBaseUrl(opts.http);
  if (opts.image !== undefined) {
    if (opts.grpc !== undefined || opts.http !== undefined) throw new ConformanceError("usage", "--image starts its own target: leave out --grpc and --http");
    if (opts.replica.length > 0) throw new ConformanceError("usage", "--replica needs --grpc, not --image");
    parseEnv(opts.env);
    if (opts.waitLog !== undefined) waitLogPattern(opts.waitLog);
  } else {
    for (const [flag, given] of [["--env", opts.env.length > 0], ["--wait-log", opts.waitLog !== undefined], ["--http-port", opts.httpPort !== undefined]] as const) {
      if (given) throw new ConformanceError("usage", `${flag} needs --image`);
    }
  }
  for (const c of opts.collection) {
    if (!/^\/[^\s?#]*$/.test(c) || c.startsWith("//")) {
      throw new ConformanceError("usage", `--collection ${c}: expected a path on the base URL, such as /messages`);
    }
  }
  if (opts.apiKey === "") throw new ConformanceError("usage", "--api-key: the key is empty");
  if (opts.apiKeyIn !== undefined) {
    if (parseApiKeyPlacement(opts.apiKeyIn) === undefined) throw new ConformanceError("usage", `--api-key-in ${opts.apiKeyIn}: expected header:NAME, bearer or query:NAME`);
    if (opts.apiKeyHeader !== undefined) throw new ConformanceError("usage", "--api-key-in and --api-key-header both say where the key goes: give one");
  }
  for (const r of opts.httpReplica) parseHttpBaseUrl(r, "--http-replica");
  if (opts.apiKeyHeader !== undefined && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(opts.apiKeyHeader)) {
    throw new ConformanceError("usage", `--api-key-header ${opts.apiKeyHeader}: not a valid HTTP header name`);
  }
}

/** --env K=V pairs for the container. */
export function parseEnv(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(pair.slice(0, eq))) throw new ConformanceError("usage", `--env ${pair}: expected NAME=value`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

function waitLogPattern(source: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new ConformanceError("usage", `--wait-log ${source}: not a regular expression (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** What every run of `check` shares, whichever target it checks. */
interface RunContext {
  reporters: Reporter[];
  replayCommand: NonNullable<RunOptions["replayCommand"]>;
  metadata: Record<string, string>;
  apiKey: string | undefined;
}

/** Starts the image's container and runs the catalogue against its mapped ports; the container goes whatever happens. */
async function checkImage(opts: CheckCliOptions & { image: string }, run: RunContext, setExit: (code: number) => void): Promise<void> {
  const { startContainer } = await import("../container/start-container.js");
  const container = await startContainer({
    image: opts.image,
    grpcPort: opts.grpcPort,
    ...(opts.httpPort !== undefined && { httpPort: opts.httpPort }),
    env: parseEnv(opts.env),
    ...(opts.waitLog !== undefined && { waitLog: waitLogPattern(opts.waitLog) }),
    startupTimeoutMs: Math.max(60_000, opts.timeout),
  });
  // Ctrl-C or a CI runner's SIGTERM: the container is removed before the process goes.
  const onSignal = (signal: NodeJS.Signals) => {
    void container.stop().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const http = container.httpUrl !== undefined ? toHttpTarget(opts, container.httpUrl, run.apiKey) : undefined;
    const report = await runConformance({
      ...toRunOptions(opts, container.grpcAddress, http, run.metadata),
      image: { name: opts.image, logTail: () => container.logTail() },
      reporters: run.reporters,
      replayCommand: run.replayCommand,
    });
    setExit(report.exitCode);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await container.stop();
  }
}

/** The HTTP target as the flags describe it. */
export function toHttpTarget(opts: CheckCliOptions, baseUrl: string, apiKey: string | undefined = opts.apiKey): HttpRunTarget {
  return {
    baseUrl,
    collections: opts.collection,
    ...(opts.openapi !== undefined && { openapi: opts.openapi }),
    ...(apiKey !== undefined && { apiKey }),
    ...(opts.apiKeyHeader !== undefined && { apiKeyHeader: opts.apiKeyHeader }),
    ...(opts.apiKeyIn !== undefined && { apiKeyIn: parseApiKeyPlacement(opts.apiKeyIn) as ApiKeyPlacement }),
    ...(opts.httpReplica.length > 0 && { replicas: opts.httpReplica }),
    ...(opts.filter.length > 0 && { filters: opts.filter }),
    ...(opts.verbs.length > 0 && { verbs: opts.verbs }),
    ...(opts.allowWord.length > 0 && { allowWords: opts.allowWord }),
    timeoutMs: opts.timeout,
    ...(opts.maxRpcs !== undefined && { maxCalls: opts.maxRpcs }),
    ...(opts.rate !== undefined && { rate: opts.rate }),
  };
}

export function toRunOptions(opts: CheckCliOptions, grpcAddress: string | undefined, http?: HttpRunTarget, metadata: Record<string, string> = parseMetadata(opts.metadata)): RunOptions {
  const grpc: GrpcTargetOptions | undefined = grpcAddress
    ? {
        address: grpcAddress,
        ...(opts.tls && {
          tls: {
            ...(opts.ca !== undefined && { caFile: opts.ca }),
            ...(opts.cert !== undefined && { certFile: opts.cert }),
            ...(opts.key !== undefined && { keyFile: opts.key }),
          },
        }),
        ...(opts.authority !== undefined && { authority: opts.authority }),
        metadata,
        timeoutMs: opts.timeout,
        ...(opts.maxRpcs !== undefined && { maxCalls: opts.maxRpcs }),
        ...(opts.rate !== undefined && { rate: opts.rate }),
      }
    : undefined;
  return {
    ...(opts.contract !== undefined && { contract: opts.contract }),
    ...(grpc && { grpc }),
    replicas: opts.replica,
    ...(opts.replicaMode !== undefined && { replicaMode: opts.replicaMode }),
    ...(http && { http }),
    only: opts.only,
    skip: opts.skip,
    ...(opts.seed !== undefined && { seed: opts.seed }),
    runs: opts.runs,
    ...(opts.path !== undefined && { path: opts.path }),
    ...(opts.strict !== undefined && { strict: opts.strict }),
    profiles: opts.profile === "protocol" ? ["contract", "protocol"] : ["contract"],
    ...(opts.expectFailures !== undefined && { expectFailures: opts.expectFailures }),
  };
}

function listChecks(io: CliIo): void {
  const width = Math.max(...catalogue.map((c) => c.id.length));
  io.stdout(`${"ID".padEnd(width)}  SEVERITY  PROFILE   SPEC\n`);
  for (const c of catalogue) {
    io.stdout(`${c.id.padEnd(width)}  ${c.severity.padEnd(8)}  ${c.profile.padEnd(8)}  ${c.spec}\n`);
  }
}

const opt = (flags: string, description: string) => new Option(flags, description);

/** Every option of `check`, in the order --help shows them. */
export const CHECK_OPTIONS: readonly Option[] = [
  opt("--grpc <address>", "gRPC target: host:port, dns:///host:port or unix:///path (without --grpc and --http: start the reference server)"),
  opt("--replica <address>", "another instance of the same service, for cross-replica statelessness (repeatable)").argParser(repeat).default([]),
  opt("--replica-mode <mode>", "stateless: history on one instance changes no other's replies; equal: every instance gives the same reply").choices(["stateless", "equal"]).default("stateless"),
  opt("--http <url>", "HTTP target: the base URL of its resource interface, http://host:port[/prefix]"),
  opt("--collection <path>", "a collection path to probe, such as /messages (repeatable; default /messages)").argParser(repeat).default([]),
  opt("--openapi <file|url>", "an OpenAPI document naming more paths (a file, or a URL on the HTTP target)"),
  opt("--api-key <key>", "API key the HTTP target needs (default: $EXAMPLE_API_KEY, which keeps it off the command line); never printed"),
  opt("--api-key-header <name>", "header that carries the API key (default X-API-Key)"),
  opt("--api-key-in <placement>", "where the API key goes: header:NAME, bearer (Authorization: Bearer K) or query:NAME (default header:X-API-Key)"),
  opt("--http-replica <url>", "another instance of the HTTP target: what one stores, each must serve (repeatable)").argParser(repeat).default([]),
  opt("--filter <name>", "a query parameter that filters a collection, for the rule 11 check (repeatable)").argParser(repeat).default([]),
  opt("--verbs <words>", "words that name an action in a path, replacing the default list: the CRUD verbs, their synonyms and the HTTP method names (comma-separated)").argParser(collect).default([]),
  opt("--allow-word <word>", "a noun of your interface that the verb rule would flag (repeatable)").argParser(repeat).default([]),
  opt("--image <image>", "start this image with testcontainers and check it (gRPC on --grpc-port, HTTP on --http-port when given); the container is removed afterwards"),
  opt("--grpc-port <port>", "with --image: the port the image serves gRPC on").argParser(integer("--grpc-port", 1, 65535)).default(50051),
  opt("--http-port <port>", "with --image: the port the image serves its HTTP interface on").argParser(integer("--http-port", 1, 65535)),
  opt("--env <name=value>", "with --image: an environment variable for the container (repeatable)").argParser(repeat).default([]),
  opt("--wait-log <regex>", "with --image: wait for a log line matching this instead of probing the port"),
  opt("--tls", "use TLS (system roots unless --ca)"),
  opt("--ca <file>", "CA bundle (PEM) to trust"),
  opt("--cert <file>", "client certificate (PEM), for mutual TLS"),
  opt("--key <file>", "client key (PEM), for mutual TLS"),
  opt("--authority <name>", ":authority and TLS server name"),
  opt("--metadata <key=value>", "metadata sent on every call, such as credentials (repeatable; values are never printed)").argParser(repeat).default([]),
  opt("--metadata-from-env <name>", "read key=value metadata lines from this environment variable, so credentials stay off the command line (repeatable)").argParser(repeat).default([]),
  opt("--metadata-file <file>", "read key=value metadata lines from this file (repeatable)").argParser(repeat).default([]),
  durationOption("--timeout <duration>", "bound on one call or HTTP request: 500ms, 5s, 1m", 5000, "5s"),
  opt("--max-rpcs <n>", "calls allowed for the whole run (default 10000)").argParser(integer("--max-rpcs", 1, 10_000_000)),
  opt("--rate <n>", "calls per second (default: no limit on loopback, 50 elsewhere)").argParser(integer("--rate", 1, 1_000_000)),
  opt("--contract <dir>", "folder holding example/example.proto (default: the shipped contract)"),
  opt("--only <ids>", "run only these check IDs or globs (repeatable, comma-separated)").argParser(collect).default([]),
  opt("--skip <ids>", "skip these check IDs or globs (repeatable, comma-separated)").argParser(collect).default([]),
  opt("--seed <n>", "seed of the property checks (every run prints its seed)").argParser(integer("--seed", 0, 2 ** 31 - 1)),
  opt("--runs <n>", "cases per property check").argParser(integer("--runs", 1, 100_000)).default(100),
  opt("--path <path>", "replay path of one failing property case (with --only and --seed)"),
  opt("--profile <profile>", "profiles that gate: contract, or protocol too").choices(["contract", "protocol"]).default("contract"),
  opt("--strict", "SHOULD failures and protocol checks gate too"),
  opt("--expect-failures <file>", "check-ID patterns, each with a # reason, whose failures do not fail the run (the verdict says \"with waivers\")"),
  opt("--reporter <name[=file]>", `a reporter by name: ${REPORTER_NAMES.join(", ")}; json, junit and html write to the file given, or alone to stdout; default console (repeatable)`).argParser(collectReporter).default([]),
  opt("--report-json <file>", "write the run report as JSON (opened before the first call); the same as --reporter json=FILE"),
  opt("--report-junit <file>", "write a JUnit XML report, one testcase per check; the same as --reporter junit=FILE"),
  opt("--report-html <file>", "write a self-contained HTML certification page; the same as --reporter html=FILE"),
  opt("--list", "print every check with its ID, severity, profile and spec section, and exit"),
];

export function addCheckCommand(program: Command, io: CliIo, setExit: (code: number) => void, argv: readonly string[] = []): void {
  const command = program
    .command("check")
    .description("check a server (default: the built-in reference server) and the contract against the specification");
  for (const o of CHECK_OPTIONS) command.addOption(o);
  command.action(async (opts: CheckCliOptions) => {
    if (opts.list) {
      listChecks(io);
      return;
    }
    checkUsage(opts, io.env);
    const metadata = collectMetadata(opts, io.env);
    const envKey = io.env.EXAMPLE_API_KEY !== undefined && io.env.EXAMPLE_API_KEY !== "" ? io.env.EXAMPLE_API_KEY : undefined;
    const apiKey = opts.apiKey ?? envKey;
    const files = await openReporterFiles(chooseReporters(opts.reporter, opts, io.env));
    try {
      const streams = { stdout: io.stdout, stderr: io.stderr, color: io.isTty && !io.env.NO_COLOR, ...(io.env.GITHUB_STEP_SUMMARY !== undefined && { stepSummary: io.env.GITHUB_STEP_SUMMARY }) };
      const run: RunContext = {
        reporters: createReporters(files, streams),
        replayCommand: createReplayRenderer(argsAfter(argv, "check"), CHECK_OPTIONS),
        metadata,
        apiKey,
      };
      if (opts.image !== undefined) {
        await checkImage({ ...opts, image: opts.image }, run, setExit);
        return;
      }
      let grpcAddress = opts.grpc;
      let http = opts.http !== undefined ? toHttpTarget(opts, opts.http, apiKey) : undefined;
      let stop: (() => Promise<void>) | undefined;
      if (grpcAddress === undefined && http === undefined) {
        // No target given: check the built-in reference server on both interfaces, with a fresh key so that
        // the API-key check runs too.
        const { startReferenceServer } = await import("../../reference-server/start.js");
        const builtInKey = randomBytes(18).toString("base64url");
        const server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", apiKey: builtInKey });
        grpcAddress = server.grpcAddress;
        http = toHttpTarget(opts, server.httpUrl, builtInKey);
        stop = server.close;
      }
      try {
        const report = await runConformance({ ...toRunOptions(opts, grpcAddress, http, metadata), builtIn: stop !== undefined, reporters: run.reporters, replayCommand: run.replayCommand });
        setExit(report.exitCode);
      } finally {
        await stop?.();
      }
    } finally {
      for (const f of files) await f.file?.close();
    }
  });
}

/** The arguments the user gave after `check`, as typed. */
function argsAfter(argv: readonly string[], name: string): string[] {
  const at = argv.indexOf(name);
  return at < 0 ? [] : argv.slice(at + 1);
}
