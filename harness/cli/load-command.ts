// `load`: a bounded load run on Hello with a progress line, then throughput, latency percentiles, errors by
// status and statelessness under concurrency; thin over runLoad.
import type { Command } from "commander";
import { configFileToRead } from "../config/default-file.js";
import { ConformanceError } from "../errors.js";
import { loadFailures, type LoadReport, type LoadReporter } from "../load/load-report.js";
import { parseSlo, type SloTerm } from "../load/slo.js";
import type { TlsOptions } from "../targets/connection.js";
import { parseApiKeyPlacement } from "../targets/http-target.js";
import { LOAD_HTTP, resolveLoadOptions, type LoadOptions, type LoadProgress } from "../run-config.js";
import { collectMetadata } from "./metadata.js";
import { openReportFile } from "../reporters/_internals/report-file.js";
import { createLoadConsoleReporter } from "../reporters/load-console.js";
import { createLoadJsonReporter } from "../reporters/load-json.js";
import type { CliIo } from "./io.js";
import { toOptions } from "./option-table.js";
import { PROTOCOL_NAMES } from "../protocols/index.js";
import { builtInOptionKey } from "./rpc-target.js";
import { CONFIG_OPTION, LOAD_TABLE, SLO_OPTION, type LoadCliOptions } from "./load-options.js";

/** The thresholds: --slo, else the configuration file's load.slo, else none. */
async function resolveSlo(opts: { slo?: string; config?: string }): Promise<SloTerm[]> {
  if (opts.slo !== undefined) return parseSlo(opts.slo, "--slo");
  const file = configFileToRead(opts.config);
  // Its parser (yaml, ajv) is loaded only when there is a file to read, as check loads it.
  const slo =
    file === undefined ? undefined : (await import("../config/config-file.js")).loadConfigFile(file).load?.slo;
  return slo === undefined ? [] : parseSlo(slo, `${file}: load.slo`);
}

/**
 * TLS, authority, metadata and the API key as the flags give them (the key from $EXAMPLE_API_KEY for --http); where
 * each applies is resolveLoadOptions' rule, checked there once.
 */
function transportOptions(opts: LoadCliOptions, protocol: string, env: CliIo["env"]): Partial<LoadOptions> {
  const envKey = env.EXAMPLE_API_KEY !== undefined && env.EXAMPLE_API_KEY !== "" ? env.EXAMPLE_API_KEY : undefined;
  const apiKey = protocol === LOAD_HTTP ? (opts.apiKey ?? envKey) : opts.apiKey;
  const placement = opts.apiKeyIn === undefined ? undefined : parseApiKeyPlacement(opts.apiKeyIn);
  if (opts.apiKeyIn !== undefined && placement === undefined)
    throw new ConformanceError("usage", `--api-key-in ${opts.apiKeyIn}: expected header:NAME, bearer or query:NAME`);
  const tlsGiven = opts.tls === true || opts.ca !== undefined || opts.cert !== undefined || opts.key !== undefined;
  const tls: TlsOptions = {
    ...(opts.ca !== undefined && { caFile: opts.ca }),
    ...(opts.cert !== undefined && { certFile: opts.cert }),
    ...(opts.key !== undefined && { keyFile: opts.key }),
  };
  return {
    ...(tlsGiven && { tls }),
    ...(opts.authority !== undefined && { authority: opts.authority }),
    metadata: collectMetadata(opts, env),
    ...(apiKey !== undefined && { apiKey }),
    ...(placement !== undefined && { apiKeyIn: placement }),
  };
}

export function addLoadCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const command = program
    .command("load")
    .description(
      "load a server with Hello calls over gRPC, Connect or gRPC-Web, or an HTTP interface (--http) with a mix " +
        "of operations on messages it creates: throughput, latency percentiles, errors, and replies under load " +
        "equal to replies at rest; `load merge` combines the reports of runs taken at once",
    );
  for (const o of toOptions(LOAD_TABLE)) command.addOption(o);
  addMergeCommand(command, io, setExit);
  command.action(async (opts: LoadCliOptions) => {
    const named = [
      ...PROTOCOL_NAMES.map((p) => [p, opts[builtInOptionKey(p)]] as const),
      ["http", opts.http] as const,
    ].filter((t): t is readonly [(typeof PROTOCOL_NAMES)[number] | "http", string] => t[1] !== undefined);
    const [target, ...more] = named;
    if (!target)
      throw new ConformanceError(
        "usage",
        "load: name the target: --grpc ADDRESS, --connect URL, --grpc-web URL or --http URL",
      );
    if (more.length > 0)
      throw new ConformanceError(
        "usage",
        `load: one target a run: --${target[0]} and --${more[0]?.[0]} were both given`,
      );
    const [protocol, where] = target;
    const slo = await resolveSlo(opts);
    const controller = new AbortController();
    const reporters: LoadReporter[] = [
      createLoadConsoleReporter({
        stdout: io.stdout,
        stderr: io.stderr,
        color: io.isTty,
        live: io.stderrIsTty === true,
        quiet: opts.quiet === true,
      }),
    ];
    const onProgress = (p: LoadProgress) => reporters.forEach((r) => r.onProgress?.(p));
    const options = resolveLoadOptions({
      address: where,
      protocol,
      ...transportOptions(opts, protocol, io.env),
      ...loadFigures(opts),
      slo,
      signal: controller.signal,
      onProgress,
    });
    // Opened before the first call: a path that cannot be written is a usage error now, not after the run.
    const json = opts.json !== undefined ? await openReportFile("--json", opts.json) : undefined;
    if (json) reporters.push(createLoadJsonReporter(json));
    // Loaded here, not at start: every other command would pay for hdr-histogram-js's import.
    const { runResolvedLoad } = await import("../load/run-load.js");
    const interrupt = () => controller.abort();
    process.once("SIGINT", interrupt);
    try {
      const report = await runResolvedLoad(options);
      await endLoad(report, reporters, setExit);
    } finally {
      process.off("SIGINT", interrupt);
      await json?.close();
    }
  });
}

/**
 * What the flags say of the run's shape: its duration, concurrency, connections, rate, timeout, threads, mix,
 * collection.
 */
function loadFigures(opts: LoadCliOptions): Partial<LoadOptions> {
  return {
    durationMs: opts.duration,
    concurrency: opts.concurrency,
    connections: opts.connections,
    timeoutMs: opts.timeout,
    threads: opts.threads,
    allowRemote: opts.allowRemote === true,
    ...(opts.http2PriorKnowledge === true && { http2PriorKnowledge: true }),
    ...(opts.rate !== undefined && { rate: opts.rate }),
    ...(opts.mix !== undefined && { mix: opts.mix }),
    ...(opts.collection !== undefined && { collection: opts.collection }),
  };
}

/** The report to every reporter, in order; exit 1 when the run failed (statelessness or an SLO). */
async function endLoad(
  report: LoadReport,
  reporters: readonly LoadReporter[],
  setExit: (code: number) => void,
): Promise<void> {
  for (const r of reporters) await r.onLoadEnd?.(report);
  setExit(loadFailures(report).length > 0 ? 1 : 0);
}

/** `load merge A.json B.json ...`: one set of figures and one SLO verdict from runs taken at once. */
function addMergeCommand(load: Command, io: CliIo, setExit: (code: number) => void): void {
  const merge = load
    .command("merge")
    .description(
      "merge load --json reports of runs taken at the same time (from several machines) into one set of figures " +
        "and one SLO verdict",
    )
    .argument("<files...>", "reports written by load --json")
    .option(SLO_OPTION.flags, SLO_OPTION.description)
    .option(CONFIG_OPTION.flags, CONFIG_OPTION.description)
    .option("--json <file>", "write the merged report as JSON (mergeable again)");
  merge.action(async (files: string[]) => {
    // The program hands `load` every option before the subcommand is found, so `--slo` after `merge` may be
    // parsed as load's own option of the same name: merge's view includes load's.
    const opts = merge.optsWithGlobals<{ slo?: string; config?: string; json?: string }>();
    const slo = await resolveSlo(opts);
    const json = opts.json !== undefined ? await openReportFile("--json", opts.json) : undefined;
    try {
      const { mergeLoadReports } = await import("../load/merge.js");
      const report = await mergeLoadReports(files, slo);
      const console = createLoadConsoleReporter({
        stdout: io.stdout,
        stderr: io.stderr,
        color: io.isTty,
        live: false,
        quiet: true,
      });
      await endLoad(report, [console, ...(json ? [createLoadJsonReporter(json)] : [])], setExit);
    } finally {
      await json?.close();
    }
  });
}
