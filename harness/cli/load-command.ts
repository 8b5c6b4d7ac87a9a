// `load`: a bounded load run on Hello with a progress line, then throughput, latency percentiles, errors by
// status and statelessness under concurrency; thin over runLoad.
import { InvalidArgumentError, type Command } from "commander";
import pc from "picocolors";
import { configFileToRead, DEFAULT_CONFIG_FILE } from "../config/default-file.js";
import { ConformanceError } from "../errors.js";
import type { LatencyFigures } from "../load/histograms.js";
import { loadFailures, type LoadReport } from "../load/load-report.js";
import { parseSlo, type SloTerm } from "../load/slo.js";
import { parseMix, type Mix } from "../load/_internals/resource-caller.js";
import { isLocal, parseAddress } from "../targets/address.js";
import type { TlsOptions } from "../targets/connection.js";
import { parseApiKeyPlacement } from "../targets/http-target.js";
import type { LoadOptions } from "../load/run-load.js";
import { collectMetadata } from "./metadata.js";
import type { CheckCliOptions } from "./check-options.js";
import { forTerminal as t } from "../_internals/neutralise.js";
import { openReportFile } from "../reporters/_internals/report-file.js";
import type { CliIo } from "./io.js";
import { durationSpec, integerSpec, shared, toOptions, type OptionTable } from "./option-table.js";
import { PROTOCOL_NAMES, PROTOCOLS } from "../protocols/index.js";
import { builtInOptionKey, rpcOptionRow, type RpcTargetOptions } from "./rpc-target.js";

/** TLS and credentials, named and parsed as check names them. */
type TransportCliOptions = Pick<CheckCliOptions, "tls" | "ca" | "cert" | "key" | "authority" | "metadata" | "metadataFromEnv" | "metadataFile" | "apiKey" | "apiKeyIn">;

/** The options of `load`: its RPC targets are the built-in protocols' flags (it drives only those). */
interface LoadCliOptions extends TransportCliOptions, RpcTargetOptions {
  http?: string;
  collection?: string;
  mix?: Mix;
  duration: number;
  concurrency: number;
  connections: number;
  rate?: number;
  timeout: number;
  threads: number;
  json?: string;
  allowRemote?: boolean;
  quiet?: boolean;
  slo?: string;
  config?: string;
}

const SLO_OPTION = {
  flags: "--slo <thresholds>",
  description: "exit 1 when a threshold is missed: p50/p90/p99/p99.9/max/mean<DURATION, errors<N%, shed<N%, rps>=N, joined by commas (p99<20ms,errors<0.1%); latency is judged corrected under --rate",
};
const CONFIG_OPTION = { flags: "--config <file>", description: `a configuration file whose load.slo sets the thresholds when --slo is not given (default ./${DEFAULT_CONFIG_FILE} when present)` };

/** The host of a Connect or gRPC-Web base URL, for the is-this-machine rule. */
function parseUrlHost(protocol: string, text: string) {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConformanceError("usage", `--${protocol} ${text}: not a URL (http://host:port[/prefix])`);
  }
  return parseAddress(`${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`);
}

/** The thresholds: --slo, else the configuration file's load.slo, else none. */
async function resolveSlo(opts: { slo?: string; config?: string }): Promise<SloTerm[]> {
  if (opts.slo !== undefined) return parseSlo(opts.slo, "--slo");
  const file = configFileToRead(opts.config);
  // Its parser (yaml, ajv) is loaded only when there is a file to read, as check loads it.
  const slo = file === undefined ? undefined : (await import("../config/config-file.js")).loadConfigFile(file).load?.slo;
  return slo === undefined ? [] : parseSlo(slo, `${file}: load.slo`);
}

/** Every option of `load`, in the order --help shows them. */
const LOAD_TABLE: OptionTable<LoadCliOptions> = {
  grpc: shared.grpc("gRPC target: host:port, dns:///host:port or unix:///path"),
  connect: rpcOptionRow(PROTOCOLS.connect, "a target spoken to in the Connect protocol over HTTP/1.1: the base URL of its procedures, http://host:port[/prefix] (instead of --grpc)"),
  grpcWeb: rpcOptionRow(PROTOCOLS["grpc-web"], "a target spoken to in gRPC-Web over HTTP/1.1: the base URL of its procedures, http://host:port[/prefix] (instead of --grpc)"),
  http: { flags: "--http <url>", description: "an HTTP resource interface, http://host:port: a mix of operations on messages the run creates (and deletes at its end) instead of Hello" },
  collection: { flags: "--collection <path>", description: "with --http: the collection the messages are created in (default /messages)" },
  mix: {
    flags: "--mix <weights>",
    description: "with --http: how often each operation comes, create=1,read=8,list=1,update=1,delete=1 by default; reads and updates work on messages the same slot created",
    parse: (v: string) => {
      try {
        return parseMix(v);
      } catch (err) {
        throw new InvalidArgumentError((err as Error).message);
      }
    },
  },
  duration: durationSpec("--duration <duration>", "how long calls keep starting: 500ms, 10s, 1m (at most 10m)", 10_000, "10s"),
  concurrency: integerSpec("--concurrency <n>", "calls in flight at once", 1, 10_000, 64),
  connections: integerSpec("--connections <n>", "connections the calls are spread over", 1, 1_000, 4),
  rate: shared.rate("the open model: calls scheduled at this many a second, each one's latency also measured from its scheduled send (default: as fast as the target answers)", 10_000_000),
  timeout: shared.timeout("one call"),
  threads: integerSpec("--threads <n>", "threads driving the calls, for a generator that needs more than one core", 1, 64, 1),
  json: { flags: "--json <file>", description: "write the results as JSON" },
  allowRemote: { flags: "--allow-remote", description: "allow a target that is not this machine (a load test is not for production by mistake)" },
  quiet: { flags: "--quiet", description: "no progress line on stderr, only the summary" },
  slo: SLO_OPTION,
  config: CONFIG_OPTION,
  tls: { flags: "--tls", description: "with --connect, --grpc-web or --http: TLS (implied by an https:// URL; system roots unless --ca)" },
  ca: shared.ca,
  cert: shared.cert,
  key: shared.key,
  authority: { flags: "--authority <name>", description: "with --connect, --grpc-web or --http: the Host header and TLS server name" },
  metadata: { ...shared.metadata, description: "with --connect or --grpc-web: metadata sent as headers on every call, such as credentials (repeatable; -bin values base64; never printed)" },
  metadataFromEnv: shared.metadataFromEnv,
  metadataFile: shared.metadataFile,
  apiKey: shared.apiKey("with --http: the API key sent with every request (default: $EXAMPLE_API_KEY); never printed"),
  apiKeyIn: { flags: "--api-key-in <placement>", description: "with --http: where the key goes: header:NAME, bearer (Authorization: Bearer K) or query:NAME (default header:X-API-Key)" },
};

/** TLS, authority, metadata and the API key of a Connect, gRPC-Web or HTTP run, each refused where it does not apply. */
function transportOptions(opts: LoadCliOptions, protocol: string, where: string, env: CliIo["env"]): Partial<LoadOptions> {
  const metadata = collectMetadata(opts, env);
  const envKey = env.EXAMPLE_API_KEY !== undefined && env.EXAMPLE_API_KEY !== "" ? env.EXAMPLE_API_KEY : undefined;
  const apiKey = protocol === "http" ? (opts.apiKey ?? envKey) : opts.apiKey;
  const given = (
    [
      ["--tls", opts.tls === true],
      ["--ca", opts.ca !== undefined],
      ["--cert", opts.cert !== undefined],
      ["--key", opts.key !== undefined],
      ["--authority", opts.authority !== undefined],
      ["--metadata", Object.keys(metadata).length > 0],
    ] as const
  ).filter(([, on]) => on);
  if (protocol === "grpc" && given.length > 0) throw new ConformanceError("usage", `${given[0]?.[0]}: load over --grpc speaks plaintext without metadata; TLS and metadata are for --connect, --grpc-web and --http runs`);
  if (protocol === "http" && Object.keys(metadata).length > 0) throw new ConformanceError("usage", "--metadata is for --connect and --grpc-web runs; --http takes --api-key");
  if (protocol !== "http" && (opts.apiKey !== undefined || opts.apiKeyIn !== undefined)) throw new ConformanceError("usage", `--${opts.apiKey !== undefined ? "api-key" : "api-key-in"} is for --http runs; --connect and --grpc-web take --metadata`);
  if (opts.apiKey === "") throw new ConformanceError("usage", "--api-key: the key is empty");
  const placement = opts.apiKeyIn === undefined ? undefined : parseApiKeyPlacement(opts.apiKeyIn);
  if (opts.apiKeyIn !== undefined && placement === undefined) throw new ConformanceError("usage", `--api-key-in ${opts.apiKeyIn}: expected header:NAME, bearer or query:NAME`);
  const secure = where.startsWith("https:");
  if (!secure && given.some(([flag]) => flag !== "--metadata" && flag !== "--authority")) {
    throw new ConformanceError("usage", `--${protocol} ${where}: TLS (--tls, --ca, --cert, --key) needs an https:// URL`);
  }
  const tls: TlsOptions = { ...(opts.ca !== undefined && { caFile: opts.ca }), ...(opts.cert !== undefined && { certFile: opts.cert }), ...(opts.key !== undefined && { keyFile: opts.key }) };
  return {
    ...(secure && { tls }),
    ...(opts.authority !== undefined && { authority: opts.authority }),
    ...(protocol !== "http" && { metadata }),
    ...(apiKey !== undefined && { apiKey }),
    ...(placement !== undefined && { apiKeyIn: placement }),
  };
}

const latencyLine = (label: string, l: LatencyFigures) => `${label}p50 ${l.p50}  p90 ${l.p90}  p99 ${l.p99}  p99.9 ${l["p99.9"]}  max ${l.max}`;
const counted = (counts: Record<string, number>) => {
  const entries = Object.entries(counts);
  return entries.length === 0 ? "none" : entries.map(([k, n]) => `${t(k)} ${n}`).join(", ");
};

/** What an --http run left: "12 messages created, every one deleted at the end"; nothing to say of deleting when none was created. */
function createdWords(resources: LoadReport["resources"], c: ReturnType<typeof pc.createColors>): string {
  const created = resources?.created ?? 0;
  if (created === 0) return "no message created, so none to delete";
  const left = resources?.leftBehind ?? 0;
  const made = `${created} message${created === 1 ? "" : "s"} created`;
  if (left > 0) return `${made}, ${c.red(`${left} could not be deleted`)}`;
  return `${made}, ${created === 1 ? "deleted" : "every one deleted"} at the end`;
}

export function formatLoadReport(r: LoadReport, color: boolean): string {
  const c = pc.createColors(color);
  const merged = r.mergedFrom ? ` (merged from ${r.mergedFrom.length} runs)` : "";
  const lines = [
    `${r.requests} calls in ${(r.durationMs / 1000).toFixed(1)} s to ${t(r.target)} (${r.concurrency} in flight over ${r.connections} connections${r.threads > 1 ? `, ${r.threads} threads` : ""}${r.rate !== undefined ? `, scheduled at ${r.rate}/s` : ""})${merged}${r.interrupted ? ", stopped early" : ""}`,
    `requests/s   ${r.requestsPerSecond}`,
    latencyLine(r.correctedLatencyMs ? "latency ms   from send       " : "latency ms   ", r.latencyMs),
    ...(r.correctedLatencyMs ? [latencyLine("latency ms   from schedule   ", r.correctedLatencyMs)] : []),
    ...(r.unsent ? [c.yellow(`unsent       ${r.unsent} calls due before the end never started: every slot was held by a slower call`)] : []),
    `errors       ${counted(r.errors)}`,
    ...(Object.keys(r.shed).length > 0 ? [`shed         ${counted(r.shed)} (refused to shed load, not counted as errors)`] : []),
    ...(r.reconnections ? [`reconnected  ${r.reconnections} times (the server ended a connection: GOAWAY, or it closed; calls it had not processed were sent again, not counted as errors)`] : []),
    ...(r.mix ? [`mix          ${Object.entries(r.mix).map(([k, n]) => `${t(k)}=${n}`).join(",")} on ${t(r.resources?.collection ?? "")}: ${createdWords(r.resources, c)}`] : []),
    r.mix
      ? r.stateless.compared === 0
        ? c.red("stateless    not judged: no read of a message the run wrote succeeded")
        : r.stateless.mismatches === 0
        ? c.green(`stateless    every one of ${r.stateless.compared} reads returned the message last written, on whichever connection`)
        : c.red(`stateless    ${r.stateless.mismatches} of ${r.stateless.compared} reads differ from what was last written; first: ${t(r.stateless.example ?? "")}`)
      : r.stateless.compared === 0
      ? c.red("stateless    not judged: no call succeeded both at rest and under load")
      : r.stateless.mismatches === 0
      ? c.green(`stateless    every one of ${r.stateless.compared} replies equals the reply at rest (${r.stateless.distinctRequests} distinct requests)`)
      : c.red(`stateless    ${r.stateless.mismatches} of ${r.stateless.compared} replies differ from the reply at rest; first: ${t(r.stateless.example ?? "")}`),
    ...r.slo.map((s) => {
      const line = `slo          ${s.term.padEnd(16)} ${s.figure}${s.unit === "/s" ? "/s" : ` ${s.unit}`} (${s.of}) against ${s.threshold}${s.unit === "/s" ? "/s" : ` ${s.unit}`}: ${s.met ? "met" : "missed"}`;
      return s.met ? c.green(line) : c.red(line);
    }),
  ];
  return `${lines.join("\n")}\n`;
}

export function addLoadCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const command = program
    .command("load")
    .description(
      "load a server with Hello calls over gRPC, Connect or gRPC-Web, or an HTTP interface (--http) with a mix of operations on messages it creates: throughput, latency percentiles, errors, and replies under load equal to replies at rest; `load merge` combines the reports of runs taken at once",
    );
  for (const o of toOptions(LOAD_TABLE)) command.addOption(o);
  addMergeCommand(command, io, setExit);
  command
    .action(async (opts: LoadCliOptions) => {
      const named = [...PROTOCOL_NAMES.map((p) => [p, opts[builtInOptionKey(p)]] as const), ["http", opts.http] as const].filter(
        (t): t is readonly [(typeof PROTOCOL_NAMES)[number] | "http", string] => t[1] !== undefined,
      );
      const [target, ...more] = named;
      if (!target) throw new ConformanceError("usage", "load: name the target: --grpc ADDRESS, --connect URL, --grpc-web URL or --http URL");
      if (more.length > 0) throw new ConformanceError("usage", `load: one target a run: --${target[0]} and --${more[0]?.[0]} were both given`);
      const [protocol, where] = target;
      if (protocol !== "http" && (opts.mix !== undefined || opts.collection !== undefined)) throw new ConformanceError("usage", `--${opts.mix !== undefined ? "mix" : "collection"} is for --http runs`);
      if (protocol !== "grpc" && opts.threads > 1) throw new ConformanceError("usage", `--threads ${opts.threads}: only a gRPC run drives from several threads`);
      const address = protocol === "grpc" ? parseAddress(where) : parseUrlHost(protocol, where);
      if (!isLocal(address) && !opts.allowRemote) {
        throw new ConformanceError("usage", `--${protocol} ${where}: not this machine; a load run elsewhere needs --allow-remote`);
      }
      const transport = transportOptions(opts, protocol, where, io.env);
      const slo = await resolveSlo(opts);
      // Opened before the first call: a path that cannot be written is a usage error now, not after the run.
      const json = opts.json !== undefined ? await openReportFile("--json", opts.json) : undefined;
      // Loaded here, not at start: every other command would pay for hdr-histogram-js's import.
      const { runLoad } = await import("../load/run-load.js");
      const live = io.stderrIsTty === true;
      let drawn = false;
      const controller = new AbortController();
      const interrupt = () => controller.abort();
      process.once("SIGINT", interrupt);
      try {
        const report = await runLoad({
          address: where,
          protocol,
          ...transport,
          ...(opts.mix !== undefined && { mix: opts.mix }),
          ...(opts.collection !== undefined && { collection: opts.collection }),
          durationMs: opts.duration,
          concurrency: opts.concurrency,
          connections: opts.connections,
          timeoutMs: opts.timeout,
          threads: opts.threads,
          slo,
          signal: controller.signal,
          ...(opts.rate !== undefined && { rate: opts.rate }),
          onProgress: (p) => {
            if (opts.quiet) return;
            const line = `load: ${(p.elapsedMs / 1000).toFixed(0)} s, ${p.requests} calls, ${Math.round(p.requestsPerSecond)}/s, ${p.errors} errors`;
            // Redrawn in place on a terminal; in a log (CI, a pipe) one line a second, so a long run shows it is alive.
            io.stderr(live ? `\r${line}\x1b[K` : `${line}\n`);
            drawn = true;
          },
        });
        if (live && drawn) io.stderr("\n");
        io.stdout(formatLoadReport(report, io.isTty));
        await json?.write(`${JSON.stringify(report, null, 2)}\n`);
        setExit(loadFailures(report).length > 0 ? 1 : 0);
      } finally {
        process.off("SIGINT", interrupt);
        await json?.close();
      }
    });
}

/** `load merge A.json B.json ...`: one set of figures and one SLO verdict from runs taken at once. */
function addMergeCommand(load: Command, io: CliIo, setExit: (code: number) => void): void {
  const merge = load
    .command("merge")
    .description("merge load --json reports of runs taken at the same time (from several machines) into one set of figures and one SLO verdict")
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
      io.stdout(formatLoadReport(report, io.isTty));
      await json?.write(`${JSON.stringify(report, null, 2)}\n`);
      setExit(loadFailures(report).length > 0 ? 1 : 0);
    } finally {
      await json?.close();
    }
  });
}
