// The options of `load` as one typed table, from which its --help and its parser are made; the defaults it shows are
// run-config.ts's LOAD_DEFAULTS, applied and checked where the run is resolved (resolveLoadOptions), not here.
import { InvalidArgumentError } from "commander";
import { DEFAULT_CONFIG_FILE } from "../config/default-file.js";
import { parseMix, type Mix } from "../load/_internals/resource-caller.js";
import { GRPC_WEB } from "../protocols/grpc-web/index.js";
import { PROTOCOLS } from "../protocols/index.js";
import { LOAD_DEFAULTS } from "../run-config.js";
import type { CheckCliOptions } from "./check-options.js";
import { durationSpec, integerSpec, shared, type OptionTable } from "./option-table.js";
import { rpcOptionRow, type RpcTargetOptions } from "./rpc-target.js";

/** TLS and credentials, named and parsed as check names them. */
type TransportCliOptions = Pick<
  CheckCliOptions,
  "tls" | "ca" | "cert" | "key" | "authority" | "metadata" | "metadataFromEnv" | "metadataFile" | "apiKey" | "apiKeyIn"
>;

/** The options of `load`: its RPC targets are the built-in protocols' flags (it drives only those). */
export interface LoadCliOptions extends TransportCliOptions, RpcTargetOptions {
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

export const SLO_OPTION = {
  flags: "--slo <thresholds>",
  description:
    "exit 1 when a threshold is missed: p50/p90/p99/p99.9/max/mean<DURATION, errors<N%, shed<N%, rps>=N, joined " +
    "by commas (p99<20ms,errors<0.1%); latency is judged corrected under --rate",
};
export const CONFIG_OPTION = {
  flags: "--config <file>",
  description:
    `a configuration file whose load.slo sets the thresholds when --slo is not given (default ` +
    `./${DEFAULT_CONFIG_FILE} when present)`,
};

/** Every option of `load`, in the order --help shows them. */
export const LOAD_TABLE: OptionTable<LoadCliOptions> = {
  grpc: shared.grpc("gRPC target: host:port, dns:///host:port or unix:///path"),
  connect: rpcOptionRow(
    PROTOCOLS.connect,
    "a target spoken to in the Connect protocol over HTTP/1.1: the base URL of its procedures, " +
      "http://host:port[/prefix] (instead of --grpc)",
  ),
  grpcWeb: rpcOptionRow(
    PROTOCOLS[GRPC_WEB],
    "a target spoken to in gRPC-Web over HTTP/1.1: the base URL of its procedures, http://host:port[/prefix] " +
      "(instead of --grpc)",
  ),
  http: {
    flags: "--http <url>",
    description:
      "an HTTP resource interface, http://host:port: a mix of operations on messages the run creates (and " +
      "deletes at its end) instead of Hello",
  },
  collection: {
    flags: "--collection <path>",
    description: `with --http: the collection the messages are created in (default ${LOAD_DEFAULTS.collection})`,
  },
  mix: {
    flags: "--mix <weights>",
    description: `with --http: how often each operation comes, ${Object.entries(LOAD_DEFAULTS.mix)
      .map(([op, n]) => `${op}=${n}`)
      .join(",")} by default; reads and updates work on messages the same slot created`,
    parse: (v: string) => {
      try {
        return parseMix(v);
      } catch (err) {
        throw new InvalidArgumentError((err as Error).message);
      }
    },
  },
  // Bounded where the run is resolved (resolveLoadOptions), for the API's callers as for the CLI's.
  duration: durationSpec(
    "--duration <duration>",
    `how long calls keep starting: 500ms, 10s, 1m (at most ${LOAD_DEFAULTS.maxDurationMs / 60_000}m)`,
    LOAD_DEFAULTS.durationMs,
    `${LOAD_DEFAULTS.durationMs / 1000}s`,
    Infinity,
  ),
  concurrency: integerSpec("--concurrency <n>", "calls in flight at once", 1, 10_000, LOAD_DEFAULTS.concurrency),
  connections: integerSpec(
    "--connections <n>",
    "connections the calls are spread over",
    1,
    1_000,
    LOAD_DEFAULTS.connections,
  ),
  rate: shared.rate(
    "the open model: calls scheduled at this many a second, each one's latency also measured from its scheduled " +
      "send (default: as fast as the target answers)",
    10_000_000,
  ),
  timeout: shared.timeout("one call"),
  threads: integerSpec(
    "--threads <n>",
    "threads driving the calls, for a generator that needs more than one core",
    1,
    64,
    LOAD_DEFAULTS.threads,
  ),
  json: { flags: "--json <file>", description: "write the results as JSON" },
  allowRemote: {
    flags: "--allow-remote",
    description: "allow a target that is not this machine (a load test is not for production by mistake)",
  },
  quiet: { flags: "--quiet", description: "no progress line on stderr, only the summary" },
  slo: SLO_OPTION,
  config: CONFIG_OPTION,
  tls: {
    flags: "--tls",
    description: "with --connect, --grpc-web or --http: TLS (implied by an https:// URL; system roots unless --ca)",
  },
  ca: shared.ca,
  cert: shared.cert,
  key: shared.key,
  authority: {
    flags: "--authority <name>",
    description: "with --connect, --grpc-web or --http: the Host header and TLS server name",
  },
  metadata: {
    ...shared.metadata,
    description:
      "with --connect or --grpc-web: metadata sent as headers on every call, such as credentials (repeatable; " +
      "-bin values base64; never printed)",
  },
  metadataFromEnv: shared.metadataFromEnv,
  metadataFile: shared.metadataFile,
  apiKey: shared.apiKey("with --http: the API key sent with every request (default: $EXAMPLE_API_KEY); never printed"),
  apiKeyIn: {
    flags: "--api-key-in <placement>",
    description:
      "with --http: where the key goes: header:NAME, bearer (Authorization: Bearer K) or query:NAME (default " +
      "header:X-API-Key)",
  },
};
