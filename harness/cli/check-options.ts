// The options of `check` as one typed table, and the pure step from argv to those options: nothing runs here.
import { Command, CommanderError } from "commander";
import { DEFAULT_CONFIG_FILE } from "../config/default-file.js";
import { FAIL_ON, type FailOn } from "../diff/compare-runs.js";
import { ConformanceError } from "../errors.js";
import { REPORTER_NAMES } from "../reporters/index.js";
import { RUN_DEFAULTS } from "../run-config.js";
import { DEFAULT_ALLOWED_WORDS, DEFAULT_VERBS } from "./catalogue.js";
import { withoutCredentials } from "../_internals/url-credentials.js";
import { rpcOptionRows, type RpcTargetOptions } from "./rpc-target.js";
import { collect, integerSpec, repeat, shared, toOptions, type OptionTable } from "./option-table.js";
import { collectReporter, REPORT_FILE_FLAGS, type ReporterRequest } from "./reporter-option.js";
import { GRPC } from "../protocols/grpc/index.js";

/** The port an image serves gRPC on when --grpc-port does not say: gRPC's customary 50051. */
export const DEFAULT_IMAGE_GRPC_PORT = 50051;

/** The options of `check`: the RPC targets' keys come from PROTOCOLS (a registered protocol's too, untyped). */
export interface CheckCliOptions extends RpcTargetOptions {
  config?: string;
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
  grpcPort?: number;
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
  concurrency: number;
  path?: string;
  profile: "contract" | "protocol";
  strict?: boolean;
  expectFailures?: string;
  baseline?: string;
  failOn?: FailOn;
  reporter: ReporterRequest[];
  reportJson?: string;
  reportJunit?: string;
  reportHtml?: string;
  trace?: string;
  attestation?: string;
  signKey?: string;
  verbose?: boolean;
  quiet?: boolean;
  list?: boolean;
}

const reportFile = (key: keyof typeof REPORT_FILE_FLAGS, what: string) => ({
  flags: `${REPORT_FILE_FLAGS[key][0]} <file>`,
  description: `${what}; the same as --reporter ${REPORT_FILE_FLAGS[key][1]}=FILE`,
  replay: "leave-out" as const,
});

/**
 * Every option of `check`, in the order --help shows them, with one row for each protocol in the map as it stands
 * when called: a protocol registered before the command is built gets its flag.
 */
export function checkTable(): OptionTable<CheckCliOptions> {
  const rpcRows = rpcOptionRows((m) =>
    m.name === GRPC
      ? `${m.cli.description} (with no RPC flag and no --http: check the built-in reference server)`
      : m.cli.description,
  );
  return { config: CONFIG_ROW, ...(rpcRows as OptionTable<RpcTargetOptions>), ...CHECK_ROWS };
}

const CONFIG_ROW = {
  flags: "--config <file>",
  description:
    `a configuration file: implementation, targets, credentials by environment variable name, claims, expected ` +
    `failures, profile and selection; flags override it (default ./${DEFAULT_CONFIG_FILE} when present)`,
};

/** The options of `check` after its config and RPC target rows. */
const CHECK_ROWS: Omit<OptionTable<CheckCliOptions>, "config" | keyof RpcTargetOptions> = {
  replica: {
    flags: "--replica <address>",
    description: "another instance of the same service, for cross-replica statelessness (repeatable)",
    parse: repeat,
    default: [],
    replay: withoutCredentials,
  },
  replicaMode: {
    flags: "--replica-mode <mode>",
    description:
      "stateless: history on one instance changes no other's replies; equal: every instance gives the same reply",
    choices: ["stateless", "equal"],
    default: "stateless",
  },
  http: {
    flags: "--http <url>",
    description: "HTTP target: the base URL of its resource interface, http://host:port[/prefix]",
    replay: withoutCredentials,
  },
  collection: {
    flags: "--collection <path>",
    description: "a collection path to probe, such as /messages (repeatable; default /messages)",
    parse: repeat,
    default: [],
  },
  openapi: {
    flags: "--openapi <file|url>",
    description: "an OpenAPI document naming more paths (a file, or a URL on the HTTP target)",
  },
  apiKey: shared.apiKey(
    "API key the HTTP target needs (default: $EXAMPLE_API_KEY, which keeps it off the command line); never printed",
  ),
  apiKeyHeader: {
    flags: "--api-key-header <name>",
    description: "header that carries the API key (default X-API-Key)",
  },
  apiKeyIn: {
    flags: "--api-key-in <placement>",
    description:
      "where the API key goes: header:NAME, bearer (Authorization: Bearer K) or query:NAME (default header:X-API-Key)",
  },
  httpReplica: {
    flags: "--http-replica <url>",
    description: "another instance of the HTTP target: what one stores, each must serve (repeatable)",
    parse: repeat,
    default: [],
  },
  filter: {
    flags: "--filter <name>",
    description: "a query parameter that filters a collection, for the rule 11 check (repeatable)",
    parse: repeat,
    default: [],
  },
  verbs: {
    flags: "--verbs <words>",
    description:
      `words that name an action in a path, replacing the default list of the CRUD verbs, their synonyms and the ` +
      `HTTP method names (comma-separated; default ${DEFAULT_VERBS.join(", ")})`,
    parse: collect,
    default: [],
  },
  allowWord: {
    flags: "--allow-word <word>",
    description:
      `a noun of your interface that the verb rule would flag (repeatable; ${DEFAULT_ALLOWED_WORDS.join(", ")} ` +
      `always allowed)`,
    parse: repeat,
    default: [],
  },
  image: {
    flags: "--image <image>",
    description:
      "start this image with testcontainers and check it (gRPC on --grpc-port, HTTP on --http-port when given); " +
      "the container is removed afterwards",
  },
  grpcPort: shared.grpcPort(`with --image: the port the image serves gRPC on (default ${DEFAULT_IMAGE_GRPC_PORT})`, 1),
  httpPort: shared.httpPort("with --image: the port the image serves its HTTP interface on", 1),
  env: {
    flags: "--env <name=value>",
    description: "with --image: an environment variable for the container (repeatable)",
    parse: repeat,
    default: [],
  },
  waitLog: {
    flags: "--wait-log <regex>",
    description: "with --image: wait for a log line matching this instead of probing the port",
  },
  tls: shared.tls,
  ca: shared.ca,
  cert: shared.cert,
  key: shared.key,
  authority: shared.authority,
  metadata: shared.metadata,
  metadataFromEnv: shared.metadataFromEnv,
  metadataFile: shared.metadataFile,
  timeout: shared.timeout("one call or HTTP request"),
  maxRpcs: shared.maxRpcs,
  rate: shared.rate("calls per second (default: no limit on loopback, 50 elsewhere)", 1_000_000),
  contract: {
    flags: "--contract <dir>",
    description: "folder holding example/example.proto (default: the shipped contract)",
  },
  only: {
    flags: "--only <ids>",
    description: "run only these check IDs or globs (repeatable, comma-separated)",
    parse: collect,
    default: [],
    replay: "renew",
  },
  skip: {
    flags: "--skip <ids>",
    description: "skip these check IDs or globs (repeatable, comma-separated)",
    parse: collect,
    default: [],
  },
  seed: {
    ...integerSpec("--seed <n>", "seed of the property checks (every run prints its seed)", 0, 2 ** 31 - 1),
    replay: "renew",
  },
  runs: integerSpec("--runs <n>", "cases per property check", 1, 100_000, 100),
  concurrency: integerSpec(
    "--concurrency <n>",
    "checks run side by side, and a property check's cases at once; checks that compare replies over time still " +
      "run alone",
    1,
    64,
    RUN_DEFAULTS.concurrency,
  ),
  path: {
    flags: "--path <path>",
    description: "replay path of one failing property case (with --only and --seed)",
    replay: "renew",
  },
  profile: {
    flags: "--profile <profile>",
    description: "profiles that gate: contract, or protocol too",
    choices: ["contract", "protocol"],
    default: "contract",
  },
  strict: { flags: "--strict", description: "SHOULD failures and protocol checks gate too" },
  expectFailures: {
    flags: "--expect-failures <file>",
    description:
      'check-ID patterns, each with a # reason, whose failures do not fail the run (the verdict says "with ' +
      'waivers"); a listed check that passes fails it: remove it from the list',
  },
  baseline: {
    flags: "--baseline <file>",
    description:
      "an earlier run's JSON report: the run is compared with it when it ends (newly failing, newly passing, " +
      "still failing, no longer judged)",
    replay: "leave-out",
  },
  failOn: {
    flags: "--fail-on <when>",
    description:
      "with --baseline, what exits 1: any gating failure (default), new (only a gating failure the baseline did " +
      "not have), or none; the verdict and reports stay the run's",
    choices: FAIL_ON,
    replay: "leave-out",
  },
  reporter: {
    flags: "--reporter <name[=file]>",
    description:
      `a reporter by name: ${REPORTER_NAMES.join(", ")}; json, junit and html write to the file given, or alone to ` +
      `stdout; default console (repeatable)`,
    parse: collectReporter,
    default: [],
    replay: "leave-out",
  },
  reportJson: reportFile("reportJson", "write the run report as JSON (opened before the first call)"),
  reportJunit: reportFile("reportJunit", "write a JUnit XML report, one testcase per check"),
  reportHtml: reportFile("reportHtml", "write a self-contained HTML certification page"),
  trace: {
    flags: "--trace <dir>",
    description:
      "write the exchanges of each failing or erring check into this folder: <check-id>.har (HTTP, Connect, " +
      "gRPC-Web) or <check-id>.grpc.txt (gRPC frames); the JSON report names each file",
    replay: "leave-out",
  },
  attestation: {
    flags: "--attestation <file>",
    description:
      "write a signed attestation of the run: an in-toto Statement (test-result predicate) in a DSSE envelope, " +
      "signed with --sign-key",
    replay: "leave-out",
  },
  signKey: {
    flags: "--sign-key <key.pem>",
    description:
      "the ed25519 private key (PEM) that signs --attestation; check it with `example-conformance verify FILE " +
      "--key PUB.pem`",
    replay: "leave-out",
  },
  verbose: {
    flags: "--verbose",
    description: "the console lists every check, passing and skipped ones too",
    replay: "leave-out",
  },
  quiet: {
    flags: "--quiet",
    description:
      "the console prints only the gating failures and the verdict, and no progress on stderr (a line every 10 s " +
      "in a log, redrawn on a terminal)",
    replay: "leave-out",
  },
  list: {
    flags: "--list",
    description: "print every check with its ID, severity, profile and spec section, and exit",
    replay: "leave-out",
  },
};

/**
 * The table of the built-in protocols, as the map stands when this module loads (commands build theirs with
 * checkTable).
 */
export const CHECK_TABLE: OptionTable<CheckCliOptions> = checkTable();

/**
 * argv (what follows `check`) to typed options, as the command reads them; a parse error is a usage error
 * with commander's one line. Runs nothing and touches nothing: usage rules that read files or the environment
 * are checkUsage's.
 */
export function parseCheckArgs(argv: readonly string[]): CheckCliOptions {
  const command = new Command("check")
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  for (const o of toOptions(checkTable())) command.addOption(o);
  try {
    command.parse([...argv], { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) throw new ConformanceError("usage", err.message.replace(/^error: /, ""));
    throw err;
  }
  return command.opts<CheckCliOptions>();
}
