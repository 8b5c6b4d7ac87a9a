// `check`: runs the conformance catalogue against a target and reports; thin over runConformance.
import { randomBytes } from "node:crypto";
import { InvalidArgumentError, Option, type Command } from "commander";
import { catalogue } from "../../suites/index.js";
import { ConformanceError } from "../errors.js";
import { createReporters, type ReportFiles } from "../reporters/index.js";
import { runConformance, type RunOptions } from "../runner.js";
import { parseAddress } from "../targets/address.js";
import type { GrpcTargetOptions } from "../targets/create-grpc-target.js";
import { parseHttpBaseUrl, shellQuote } from "../targets/create-http-target.js";
import type { HttpRunTarget } from "../session.js";
import type { CliIo } from "./io.js";

export interface CheckCliOptions extends ReportFiles {
  grpc?: string;
  replica: string[];
  replicaMode: "stateless" | "equal";
  http?: string;
  collection: string[];
  openapi?: string;
  apiKey?: string;
  apiKeyHeader?: string;
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

/** A duration: 500ms, 5s, 1m, or a bare number of milliseconds. */
export function duration(name: string) {
  return (value: string): number => {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
    if (!m) throw new InvalidArgumentError(`${name} must be a duration such as 500ms, 5s or 1m, got ${JSON.stringify(value)}`);
    const n = Number(m[1]) * (m[2] === "s" ? 1000 : m[2] === "m" ? 60_000 : 1);
    if (n < 1 || n > 600_000) throw new InvalidArgumentError(`${name} must be between 1ms and 10m, got ${value}`);
    return Math.round(n);
  };
}

/** --metadata k=v pairs, checked for what gRPC allows in a key. */
export function parseMetadata(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new ConformanceError("usage", `--metadata ${pair}: expected key=value`);
    const key = pair.slice(0, eq).trim().toLowerCase();
    if (!/^[0-9a-z_.-]+$/.test(key) || key.startsWith("grpc-")) {
      throw new ConformanceError("usage", `--metadata ${pair}: ${JSON.stringify(key)} is not a custom metadata key`);
    }
    out[key] = pair.slice(eq + 1);
  }
  return out;
}

/** Usage errors among the options, found before any server starts or any target is touched. */
export function checkUsage(opts: CheckCliOptions): void {
  if ((opts.ca || opts.cert || opts.key) && !opts.tls) {
    throw new ConformanceError("usage", "--ca, --cert and --key need --tls");
  }
  if (opts.replica.length > 0 && opts.grpc === undefined) throw new ConformanceError("usage", "--replica needs --grpc");
  if (opts.grpc !== undefined) parseAddress(opts.grpc);
  for (const r of opts.replica) parseAddress(r, "--replica");
  parseMetadata(opts.metadata);
  const httpOnly = [
    ["--collection", opts.collection.length > 0],
    ["--openapi", opts.openapi !== undefined],
    ["--api-key", opts.apiKey !== undefined],
    ["--api-key-header", opts.apiKeyHeader !== undefined],
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

/** Starts the image's container and runs the catalogue against its mapped ports; the container goes whatever happens. */
async function checkImage(opts: CheckCliOptions & { image: string }, reporters: ReturnType<typeof createReporters>, setExit: (code: number) => void): Promise<void> {
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
    const http = container.httpUrl !== undefined ? toHttpTarget(opts, container.httpUrl) : undefined;
    const args = [`--image ${shellQuote(opts.image)}`, `--grpc-port ${opts.grpcPort}`];
    if (opts.httpPort !== undefined) args.push(`--http-port ${opts.httpPort}`);
    for (const e of opts.env) args.push(`--env ${shellQuote(e)}`);
    if (opts.waitLog !== undefined) args.push(`--wait-log ${shellQuote(opts.waitLog)}`);
    const report = await runConformance({
      ...toRunOptions(opts, container.grpcAddress, http),
      image: { name: opts.image, args, logTail: () => container.logTail() },
      reporters,
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
    ...(opts.verbs.length > 0 && { verbs: opts.verbs }),
    ...(opts.allowWord.length > 0 && { allowWords: opts.allowWord }),
    timeoutMs: opts.timeout,
    ...(opts.maxRpcs !== undefined && { maxCalls: opts.maxRpcs }),
    ...(opts.rate !== undefined && { rate: opts.rate }),
  };
}

export function toRunOptions(opts: CheckCliOptions, grpcAddress: string | undefined, http?: HttpRunTarget): RunOptions {
  checkUsage(opts);
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
        metadata: parseMetadata(opts.metadata),
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

export function addCheckCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command("check")
    .description("check a server (default: the built-in reference server) and the contract against the specification")
    .option("--grpc <address>", "gRPC target: host:port, dns:///host:port or unix:///path (without --grpc and --http: start the reference server)")
    .option("--replica <address>", "another instance of the same service, for cross-replica statelessness (repeatable)", repeat, [])
    .addOption(new Option("--replica-mode <mode>", "stateless: history on one instance changes no other's replies; equal: every instance gives the same reply").choices(["stateless", "equal"]).default("stateless"))
    .option("--http <url>", "HTTP target: the base URL of its resource interface, http://host:port[/prefix]")
    .option("--collection <path>", "a collection path to probe, such as /messages (repeatable; default /messages)", repeat, [])
    .option("--openapi <file|url>", "an OpenAPI document naming more paths (a file, or a URL on the HTTP target)")
    .option("--api-key <key>", "API key the HTTP target needs; never written to a report")
    .option("--api-key-header <name>", "header that carries the API key (default X-API-Key)")
    .option("--verbs <words>", "words that name an action in a path, replacing the default list (comma-separated)", collect, [])
    .option("--allow-word <word>", "a noun of your interface that the verb rule would flag (repeatable)", repeat, [])
    .option("--image <image>", "start this image with testcontainers and check it (gRPC on --grpc-port, HTTP on --http-port when given); the container is removed afterwards")
    .option("--grpc-port <port>", "with --image: the port the image serves gRPC on", integer("--grpc-port", 1, 65535), 50051)
    .option("--http-port <port>", "with --image: the port the image serves its HTTP interface on", integer("--http-port", 1, 65535))
    .option("--env <name=value>", "with --image: an environment variable for the container (repeatable)", repeat, [])
    .option("--wait-log <regex>", "with --image: wait for a log line matching this instead of probing the port")
    .option("--tls", "use TLS (system roots unless --ca)")
    .option("--ca <file>", "CA bundle (PEM) to trust")
    .option("--cert <file>", "client certificate (PEM), for mutual TLS")
    .option("--key <file>", "client key (PEM), for mutual TLS")
    .option("--authority <name>", ":authority and TLS server name")
    .option("--metadata <key=value>", "metadata sent on every call, such as credentials (repeatable)", repeat, [])
    .option("--timeout <duration>", "bound on one call", duration("--timeout"), 5000)
    .option("--max-rpcs <n>", "calls allowed for the whole run (default 10000)", integer("--max-rpcs", 1, 10_000_000))
    .option("--rate <n>", "calls per second (default: no limit on loopback, 50 elsewhere)", integer("--rate", 1, 1_000_000))
    .option("--contract <dir>", "folder holding example/example.proto (default: the shipped contract)")
    .option("--only <ids>", "run only these check IDs or globs (repeatable, comma-separated)", collect, [])
    .option("--skip <ids>", "skip these check IDs or globs (repeatable, comma-separated)", collect, [])
    .option("--seed <n>", "seed of the property checks (every run prints its seed)", integer("--seed", 0, 2 ** 31 - 1))
    .option("--runs <n>", "cases per property check", integer("--runs", 1, 100_000), 100)
    .option("--path <path>", "replay path of one failing property case (with --only and --seed)")
    .addOption(new Option("--profile <profile>", "profiles that gate: contract, or protocol too").choices(["contract", "protocol"]).default("contract"))
    .option("--strict", "SHOULD failures and protocol checks gate too")
    .option("--expect-failures <file>", "check-ID patterns, each with a # reason, whose failures do not fail the run")
    .option("--report-json <file>", "write the run report as JSON")
    .option("--report-junit <file>", "write a JUnit XML report, one testcase per check")
    .option("--report-html <file>", "write a self-contained HTML certification page")
    .option("--list", "print every check with its ID, severity, profile and spec section, and exit")
    .action(async (opts: CheckCliOptions) => {
      if (opts.list) {
        listChecks(io);
        return;
      }
      checkUsage(opts);
      const reporters = createReporters(opts, io);
      if (opts.image !== undefined) {
        await checkImage({ ...opts, image: opts.image }, reporters, setExit);
        return;
      }
      let grpcAddress = opts.grpc;
      let http = opts.http !== undefined ? toHttpTarget(opts, opts.http) : undefined;
      let stop: (() => Promise<void>) | undefined;
      if (grpcAddress === undefined && http === undefined) {
        // No target given: check the built-in reference server on both interfaces, with a fresh key so that
        // the API-key check runs too.
        const { startReferenceServer } = await import("../../reference-server/start.js");
        const apiKey = randomBytes(18).toString("base64url");
        const server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", apiKey });
        grpcAddress = server.grpcAddress;
        http = toHttpTarget(opts, server.httpUrl, apiKey);
        stop = server.close;
      }
      try {
        const report = await runConformance({ ...toRunOptions(opts, grpcAddress, http), builtIn: stop !== undefined, reporters });
        setExit(report.exitCode);
      } finally {
        await stop?.();
      }
    });
}
