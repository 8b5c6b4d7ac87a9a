// `check`: runs the conformance catalogue against a target and reports; thin over runConformance. The options are
// check-options.ts's table, their rules check-usage.ts's, what they ask the runner for run-options.ts's.
import { randomBytes } from "node:crypto";
import type { Command } from "commander";
import type { CheckDefinition } from "../check.js";
import { PROTOCOL_NAMES, type Protocol } from "../protocols/index.js";
import { rpcTargetsOf } from "./rpc-target.js";
import { applyConfig, type ConfigExtras } from "../config/apply-config.js";
import { configFileToRead } from "../config/default-file.js";
import type { TlsEndpoint } from "../attest/tls-fingerprint.js";
import type { ReferenceServer } from "../../reference-server/start.js";
import { parseAddress } from "../targets/address.js";
import { createReporters, openReportFile, type ReportFile } from "../reporters/index.js";
import { createProgressReporter, type ProgressReporter } from "../reporters/progress.js";
import { ConformanceError } from "../errors.js";
import type { Reporter, RunAttestation } from "../report.js";
import type { RunOptions } from "../run-config.js";
import type { BaselineGate } from "../diff/baseline-gate.js";
import { checkTable, DEFAULT_IMAGE_GRPC_PORT, type CheckCliOptions } from "./check-options.js";
import type { OptionTable } from "./option-table.js";
import { checkUsage, parseEnv, waitLogPattern } from "./check-usage.js";
import type { CliIo } from "./io.js";
import { collectMetadata } from "./metadata.js";
import { duration, givenOn, toOptions } from "./option-table.js";
import { createReplayRenderer } from "./replay.js";
import { chooseReporters, openReporterFiles, reporterStreams } from "./reporter-option.js";
import { toHttpTarget, toRunOptions } from "./run-options.js";
import { CONNECT } from "../protocols/connect/index.js";
import { GRPC_WEB } from "../protocols/grpc-web/index.js";

/**
 * The catalogue, loaded as the command runs, not with it (`--list` needs no engine, `--help` neither), and in a run
 * given no target after the built-in reference's start has begun.
 */
const loadCatalogue = async () => {
  const { loadCatalogue: checks, pathWords } = await import("./catalogue.js");
  return { catalogue: await checks(), pathWords };
};
/** The engine, loaded likewise as the command runs. */
const loadRunner = () => import("../runner.js");

/** What every run of `check` shares, whichever target it checks. */
interface RunContext {
  reporters: Reporter[];
  replayCommand: NonNullable<RunOptions["replayCommand"]>;
  metadata: Record<string, string>;
  apiKey: string | undefined;
  /** What the configuration file adds: the implementation, its claims, its expected failures. */
  extras: ConfigExtras;
  /** With --attestation and --sign-key: the report names the file and the key, and the HTML certificate shows them. */
  attestation?: RunAttestation;
  /** Under $EXAMPLE_CONFORMANCE_TIMELINE, the writer of its lines. */
  mark?: (event: string) => void;
}

/** The runner's options the configuration file adds, beside the flags'. */
function fromConfig(extras: ConfigExtras): Pick<RunOptions, "implementation" | "claims" | "expectations"> {
  return {
    ...(extras.implementation && { implementation: extras.implementation }),
    ...(extras.claims && { claims: extras.claims }),
    ...(extras.expectations.length > 0 && { expectations: extras.expectations }),
  };
}

/** The options under the configuration file (--config, or ./example-conformance.yaml when present), flags first. */
async function configured(
  opts: CheckCliOptions,
  command: Command,
  env: CliIo["env"],
): Promise<{ opts: CheckCliOptions; extras: ConfigExtras }> {
  const file = configFileToRead(opts.config);
  if (file === undefined) return { opts, extras: { expectations: [] } };
  const given = givenOn(command);
  // Its parser and schema validator are loaded only when there is a file to read: a run without one never needs them.
  const { loadConfigFile } = await import("../config/config-file.js");
  return applyConfig(opts, loadConfigFile(file), given, env, (await loadCatalogue()).catalogue);
}

/**
 * Starts the image's container and runs the catalogue against its mapped ports; the container goes whatever happens.
 */
async function checkImage(
  opts: CheckCliOptions & { image: string },
  run: RunContext,
  setExit: (code: number) => void,
): Promise<void> {
  const { startContainer } = await import("../container/start-container.js");
  const container = await startContainer({
    image: opts.image,
    grpcPort: opts.grpcPort ?? DEFAULT_IMAGE_GRPC_PORT,
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
    const [{ catalogue, pathWords }, { runConformance }] = await Promise.all([loadCatalogue(), loadRunner()]);
    const report = await runConformance({
      checks: catalogue,
      pathWords,
      ...toRunOptions(opts, container.grpcAddress, http, run.metadata),
      ...fromConfig(run.extras),
      image: {
        name: opts.image,
        ...(container.imageDigest !== undefined && { digest: container.imageDigest }),
        logTail: () => container.logTail(),
      },
      ...(run.attestation && { attestation: run.attestation }),
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

async function listChecks(io: CliIo): Promise<void> {
  const { catalogue } = await loadCatalogue();
  const width = Math.max(...catalogue.map((c) => c.id.length));
  const over = (c: CheckDefinition) =>
    c.area === "grpc" ? (c.protocols ?? PROTOCOL_NAMES).join(",") : c.area === "http" ? "http" : "-";
  const across = Math.max(...catalogue.map((c) => over(c).length));
  io.stdout(`${"ID".padEnd(width)}  SEVERITY  PROFILE   ${"PROTOCOLS".padEnd(across)}  SPEC\n`);
  for (const c of catalogue) {
    io.stdout(
      `${c.id.padEnd(width)}  ${c.severity.padEnd(8)}  ${c.profile.padEnd(8)}  ${over(c).padEnd(across)}  ${c.spec}\n`,
    );
  }
}

/**
 * The environment variable that, set to anything but empty, writes the run's timeline to stderr: one line per event,
 * `timeline <ms since the process started> <CPU ms of the process, every thread, so far> <event>`, for the built-in
 * reference's start and stop and each check's start and end (a check judged with the history checks ends when its
 * result is final). For measuring where a run's time goes (bench, issue 43), not for reading a verdict.
 */
export const TIMELINE_ENV = "EXAMPLE_CONFORMANCE_TIMELINE";

/** The timeline's writer under $EXAMPLE_CONFORMANCE_TIMELINE, or undefined. */
function timelineOf(io: CliIo): ((event: string) => void) | undefined {
  const given = io.env[TIMELINE_ENV];
  if (given === undefined || given === "") return undefined;
  return (event) => {
    const cpu = process.cpuUsage();
    io.stderr(`timeline ${performance.now().toFixed(1)} ${((cpu.user + cpu.system) / 1000).toFixed(1)} ${event}\n`);
  };
}

/** The timeline as a reporter: each check's start and end. */
const timelineReporter = (mark: (event: string) => void): Reporter => ({
  onRunStart: () => mark("run start"),
  onCheckStart: (c) => mark(`start ${c.id}`),
  onCheckEnd: (c) => mark(`end ${c.id}`),
  onRunEnd: () => mark("run end"),
});

/** The environment variable that shortens the progress interval off a terminal (tests; a log read closely). */
export const PROGRESS_INTERVAL_ENV = "EXAMPLE_CONFORMANCE_PROGRESS_INTERVAL";

/**
 * Progress on stderr unless --quiet: redrawn on a terminal, else a line every 10 s
 * ($EXAMPLE_CONFORMANCE_PROGRESS_INTERVAL).
 */
function progressOf(opts: CheckCliOptions, io: CliIo): ProgressReporter | undefined {
  if (opts.quiet) return undefined;
  const given = io.env[PROGRESS_INTERVAL_ENV];
  let intervalMs: number | undefined;
  try {
    if (given !== undefined && given !== "") intervalMs = duration(`$${PROGRESS_INTERVAL_ENV}`)(given);
  } catch (err) {
    throw new ConformanceError("usage", (err as Error).message);
  }
  return createProgressReporter({
    write: io.stderr,
    live: io.stderrIsTty === true,
    ...(intervalMs !== undefined && { intervalMs }),
  });
}

/** The run's reporters, replay renderer, metadata and API key, from the options and the environment. */
function prepareRun(
  opts: CheckCliOptions,
  io: CliIo,
  files: Parameters<typeof createReporters>[0],
  argv: readonly string[],
  extras: ConfigExtras,
  table: OptionTable<CheckCliOptions>,
  progress: ProgressReporter | undefined,
): RunContext {
  const envKey =
    io.env.EXAMPLE_API_KEY !== undefined && io.env.EXAMPLE_API_KEY !== "" ? io.env.EXAMPLE_API_KEY : undefined;
  const streams = reporterStreams(io, opts);
  const mark = timelineOf(io);
  return {
    // Progress first: on a terminal its line is cleared before the console writes the results.
    reporters: [
      ...(progress ? [progress] : []),
      ...createReporters(files, streams),
      ...(mark ? [timelineReporter(mark)] : []),
    ],
    ...(mark && { mark }),
    replayCommand: createReplayRenderer(argsAfter(argv, "check"), table),
    metadata: collectMetadata(opts, io.env),
    apiKey: opts.apiKey ?? envKey,
    extras,
  };
}

/**
 * The SHA-256 fingerprint of the certificate the RPC target (with --tls, or an https:// --connect/--grpc-web URL) or
 * else the https:// HTTP target presents, for the report; undefined when the run speaks no TLS or none was presented.
 */
async function certificateFingerprint(
  opts: CheckCliOptions,
  grpcAddress: string | undefined,
  httpUrl: string | undefined,
): Promise<string | undefined> {
  const endpoint = tlsEndpointOf(opts, grpcAddress, httpUrl);
  if (endpoint === undefined) return undefined;
  // Loaded only when the run speaks TLS, like the signing's and the baseline's modules below: a default run needs none.
  const { tlsFingerprint } = await import("../attest/tls-fingerprint.js");
  return tlsFingerprint(endpoint, opts.timeout);
}

/** Where the certificate certificateFingerprint reads is presented, or undefined when the run speaks no TLS. */
function tlsEndpointOf(
  opts: CheckCliOptions,
  grpcAddress: string | undefined,
  httpUrl: string | undefined,
): TlsEndpoint | undefined {
  const files = {
    ...(opts.ca !== undefined && { caFile: opts.ca }),
    ...(opts.cert !== undefined && { certFile: opts.cert }),
    ...(opts.key !== undefined && { keyFile: opts.key }),
  };
  const servername = opts.authority !== undefined ? { servername: opts.authority } : {};
  if (opts.grpc !== undefined && opts.tls && grpcAddress !== undefined) {
    const parsed = parseAddress(grpcAddress);
    if (parsed.kind === "tcp") return { host: parsed.host, port: parsed.port, alpn: ["h2"], ...files, ...servername };
  }
  const url = [...rpcTargetsOf(opts).map((t) => t.address), httpUrl].find((u) => u?.startsWith("https://"));
  if (url === undefined) return undefined;
  const u = new URL(url);
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: Number(u.port || 443),
    alpn: ["h2", "http/1.1"],
    ...files,
    ...servername,
  };
}

const fingerprintOption = async (
  opts: CheckCliOptions,
  grpcAddress: string | undefined,
  httpUrl: string | undefined,
): Promise<Pick<RunOptions, "tlsFingerprint">> => {
  const fp = await certificateFingerprint(opts, grpcAddress, httpUrl);
  return fp !== undefined ? { tlsFingerprint: fp } : {};
};

/** The built-in reference server, started, with the API key it was given. */
interface BuiltIn {
  server: ReferenceServer;
  key: string;
}

/** Starts the built-in reference server on both interfaces, with a fresh key so that the API-key check runs too. */
async function startBuiltIn(mark: ((event: string) => void) | undefined): Promise<BuiltIn> {
  mark?.("reference loading");
  const { startReferenceServer } = await import("../../reference-server/start.js");
  mark?.("reference starting");
  const key = randomBytes(18).toString("base64url");
  const server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", apiKey: key });
  mark?.("reference started");
  return { server, key };
}

/**
 * Whether the command line names no target and no configuration file is there to name one: the run then checks the
 * built-in reference, which can be started before anything else is read.
 */
function namesNoTarget(opts: CheckCliOptions): boolean {
  return (
    rpcTargetsOf(opts).length === 0 &&
    opts.http === undefined &&
    opts.image === undefined &&
    configFileToRead(opts.config) === undefined
  );
}

/**
 * Checks the targets the flags name or, with none, the built-in reference server (`builtIn` starts it, or hands over
 * the one started early), which goes whatever happens.
 */
async function checkTargets(
  opts: CheckCliOptions,
  run: RunContext,
  setExit: (code: number) => void,
  builtIn: () => Promise<BuiltIn>,
): Promise<void> {
  let grpcAddress = rpcTargetsOf(opts)[0]?.address;
  let http = opts.http !== undefined ? toHttpTarget(opts, opts.http, run.apiKey) : undefined;
  let peers: { protocol: Protocol | (string & {}); address: string }[] = rpcTargetsOf(opts).slice(1);
  let stop: (() => Promise<void>) | undefined;
  // Loaded while the built-in reference starts.
  const engine = Promise.all([loadCatalogue(), loadRunner()]);
  engine.catch(() => undefined);
  if (grpcAddress === undefined && http === undefined) {
    const { server, key } = await builtIn();
    grpcAddress = server.grpcAddress;
    http = toHttpTarget(opts, server.httpUrl, key);
    // It serves Connect and gRPC-Web on its HTTP port: all three RPC targets, so rpc.cross-protocol.equivalent judges.
    peers = [
      { protocol: CONNECT, address: server.httpUrl },
      { protocol: GRPC_WEB, address: server.httpUrl },
    ];
    stop = server.close;
  }
  try {
    const [{ catalogue, pathWords }, { runConformance }] = await engine;
    const report = await runConformance({
      checks: catalogue,
      pathWords,
      ...toRunOptions(opts, grpcAddress, http, run.metadata, peers),
      ...fromConfig(run.extras),
      ...(await fingerprintOption(opts, grpcAddress, http?.baseUrl)),
      builtIn: stop !== undefined,
      // The built-in server is one instance in this process: there is no replica to check it against, and it says so.
      ...(stop !== undefined && { claims: { replicas: "single" } }),
      ...(run.attestation && { attestation: run.attestation }),
      reporters: run.reporters,
      replayCommand: run.replayCommand,
    });
    setExit(report.exitCode);
  } finally {
    if (stop) {
      run.mark?.("reference stopping");
      await stop();
      run.mark?.("reference stopped");
    }
  }
}

export function addCheckCommand(
  program: Command,
  io: CliIo,
  setExit: (code: number) => void,
  argv: readonly string[] = [],
): void {
  const command = program
    .command("check")
    .description("check a server (default: the built-in reference server) and the contract against the specification");
  // Built now, from the protocol map as it stands: a protocol registered before the program is built has its flag.
  const table = checkTable();
  for (const o of toOptions(table)) command.addOption(o);
  command.action(async (given: CheckCliOptions) => {
    if (given.list) return listChecks(io);
    const mark = timelineOf(io);
    mark?.("check command loaded");
    // No target named: the built-in reference starts now, beside the loading of the checks and the reading of the
    // options; whatever stops the command before the run takes it stops it too.
    const early = namesNoTarget(given) ? startBuiltIn(mark) : undefined;
    early?.catch(() => undefined);
    let taken = false;
    const builtIn = () => {
      taken = true;
      return early ?? startBuiltIn(mark);
    };
    try {
      await checkCommand(given, command, io, setExit, argv, table, builtIn);
    } finally {
      if (!taken) await early?.then(({ server }) => server.close()).catch(() => undefined);
    }
  });
}

/** The `check` command's run, once its options are parsed; `builtIn` gives the built-in reference when no target is. */
async function checkCommand(
  given: CheckCliOptions,
  command: Command,
  io: CliIo,
  setExit: (code: number) => void,
  argv: readonly string[],
  table: OptionTable<CheckCliOptions>,
  builtIn: () => Promise<BuiltIn>,
): Promise<void> {
  const { opts, extras } = await configured(given, command, io.env);
  checkUsage(opts, io.env);
  const signing = opts.signKey !== undefined ? await import("../attest/attestation.js") : undefined;
  const signKey = opts.signKey !== undefined ? signing?.loadSigningKey(opts.signKey) : undefined;
  const gate = await baselineGate(opts, documentOnStdout(opts) ? io.stderr : io.stdout);
  const progress = progressOf(opts, io);
  const files = await openReporterFiles(chooseReporters(opts.reporter, opts, io.env));
  let attestation: ReportFile | undefined;
  try {
    if (opts.attestation !== undefined) attestation = await openReportFile("--attestation", opts.attestation);
    const run = prepareRun(opts, io, files, argv, extras, table, progress);
    if (attestation && signing && signKey) {
      run.reporters.push(signing.createAttestationReporter(attestation, signKey));
      run.attestation = { file: attestation.path, keyId: (await import("../attest/dsse.js")).keyId(signKey) };
    }
    if (gate) run.reporters.push(gate.reporter);
    const exit = gate ? (code: number) => setExit(gate.exitCode(code)) : setExit;
    await (opts.image !== undefined
      ? checkImage({ ...opts, image: opts.image }, run, exit)
      : checkTargets(opts, run, exit, builtIn));
  } finally {
    progress?.stop();
    for (const f of files) await f.file?.close();
    await attestation?.close();
  }
}
/** The --baseline gate, its module loaded only when --baseline or --fail-on asks for it (it judges their usage). */
async function baselineGate(opts: CheckCliOptions, write: (text: string) => void): Promise<BaselineGate | undefined> {
  if (opts.baseline === undefined && opts.failOn === undefined) return undefined;
  const { createBaselineGate } = await import("../diff/baseline-gate.js");
  return createBaselineGate(opts.baseline, opts.failOn, write);
}

/** Whether a report goes to stdout alone (`--reporter json`): then nothing else may write there. */
const documentOnStdout = (opts: CheckCliOptions): boolean =>
  opts.reporter.some((r) => r.path === undefined && r.name !== "console" && r.name !== "github");

/** The arguments the user gave after `check`, as typed. */
function argsAfter(argv: readonly string[], name: string): string[] {
  const at = argv.indexOf(name);
  return at < 0 ? [] : argv.slice(at + 1);
}
