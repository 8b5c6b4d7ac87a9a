// `check-client`: runs a client under test against the harness's own recording servers, once per scenario, and
// judges what it sends and how it copes; the same reports, verdicts, exit codes, waivers, config file and replay
// lines as `check`, through the same runner.
import type { Command } from "commander";
import { clientCatalogue, clientChecks } from "./catalogue.js";
import { applyConfig, type ConfigExtras } from "../config/apply-config.js";
import type { ConformanceConfig } from "../config/config-file.js";
import { configFileToRead } from "../config/default-file.js";
import { ConformanceError } from "../errors.js";
import { redactor } from "../client/recorded-request.js";
import { resolveCommand } from "../client/run-client.js";
import { SCENARIOS } from "../client/scenarios.js";
import { shellQuote } from "../_internals/shell-quote.js";
import { createReporters } from "../reporters/index.js";
import { runConformance } from "../runner.js";
import { CHECK_TABLE, parseCheckArgs, type CheckCliOptions } from "./check-options.js";
import type { CliIo } from "./io.js";
import { durationSpec, givenOn, shared, toOptions, type OptionTable } from "./option-table.js";
import { createReplayRenderer } from "./replay.js";
import { chooseReporters, openReporterFiles, reporterStreams } from "./reporter-option.js";

/** check's options that mean the same for a client run, and the bound on one run of the client. */
export type CheckClientCliOptions = Pick<
  CheckCliOptions,
  | "config"
  | "apiKey"
  | "timeout"
  | "only"
  | "skip"
  | "seed"
  | "strict"
  | "expectFailures"
  | "reporter"
  | "reportJson"
  | "reportJunit"
  | "reportHtml"
  | "verbose"
  | "quiet"
  | "list"
>;

/** A client's run is bounded by this unless --timeout says otherwise. */
export const DEFAULT_CLIENT_TIMEOUT_MS = 10_000;

export const CHECK_CLIENT_TABLE: OptionTable<CheckClientCliOptions> = {
  config: CHECK_TABLE.config,
  apiKey: shared.apiKey(
    "API key handed to the client as EXAMPLE_API_KEY; the api-key scenario's servers then require it on every " +
      "request (default: $EXAMPLE_API_KEY); never printed",
  ),
  timeout: durationSpec(
    "--timeout <duration>",
    "bound on one run of the client; past it the client and every process it started are killed and it is " +
      "reported hung: 500ms, 5s, 1m",
    DEFAULT_CLIENT_TIMEOUT_MS,
    "10s",
  ),
  only: CHECK_TABLE.only,
  skip: CHECK_TABLE.skip,
  seed: CHECK_TABLE.seed,
  strict: CHECK_TABLE.strict,
  expectFailures: CHECK_TABLE.expectFailures,
  reporter: CHECK_TABLE.reporter,
  reportJson: CHECK_TABLE.reportJson,
  reportJunit: CHECK_TABLE.reportJunit,
  reportHtml: CHECK_TABLE.reportHtml,
  verbose: CHECK_TABLE.verbose,
  quiet: CHECK_TABLE.quiet,
  list: {
    flags: "--list",
    description: "print every client check with its ID, severity, scenario and spec section, and exit",
    replay: "leave-out",
  },
};

function listClientChecks(io: CliIo): void {
  const width = Math.max(...clientChecks.map((c) => c.id.length));
  const across = Math.max(...clientChecks.map((c) => c.scenario.length));
  io.stdout(`${"ID".padEnd(width)}  SEVERITY  ${"SCENARIO".padEnd(across)}  SPEC\n`);
  for (const c of clientChecks)
    io.stdout(`${c.id.padEnd(width)}  ${c.severity.padEnd(8)}  ${c.scenario.padEnd(across)}  ${c.spec}\n`);
  io.stdout("\nScenarios (each a legal server the recording servers play):\n");
  for (const s of Object.values(SCENARIOS)) io.stdout(`  ${s.name.padEnd(across)}  ${s.plays}\n`);
}

/** What a configuration file may say that describes a server under check, and so means nothing to a client run. */
export function ignoredByClientRuns(config: ConformanceConfig): string[] {
  const cred = config.credentials ?? {};
  return [
    ...(config.targets !== undefined ? ["targets"] : []),
    ...(config.profile !== undefined ? ["profile"] : []),
    ...(config.claims !== undefined ? ["claims"] : []),
    ...(cred["api-key-in"] !== undefined ? ["credentials.api-key-in"] : []),
    ...(cred["metadata-env"] !== undefined ? ["credentials.metadata-env"] : []),
  ];
}

/**
 * The options under the configuration file, flags first: the file's credentials (api-key-env), selection,
 * strictness, implementation and waivers. What describes a server (targets, profile, claims, where a server
 * takes the key) is ignored, with one line on stderr saying so: every client check is of the contract profile, and
 * no claim answers a client check's need.
 */
async function configured(
  opts: CheckClientCliOptions,
  command: Command,
  io: CliIo,
): Promise<{ opts: CheckClientCliOptions; extras: ConfigExtras }> {
  const env = io.env;
  const file = configFileToRead(opts.config);
  if (file === undefined) return { opts, extras: { expectations: [] } };
  const given = givenOn(command);
  const { loadConfigFile } = await import("../config/config-file.js");
  // check's defaults under this command's options: the file fills what neither gave, and a client run reads back
  // only the options it has.
  const config = loadConfigFile(file);
  const ignored = ignoredByClientRuns(config);
  if (ignored.length > 0)
    io.stderr(
      `example-conformance: warning: ${file}: check-client ignores ${ignored.join(", ")} (they describe a server ` +
        `under check; a client run starts its own servers)\n`,
    );
  const applied = applyConfig(
    { ...parseCheckArgs([]), ...opts },
    config,
    given,
    env,
    clientCatalogue(placeholderClient),
  );
  const o = applied.opts;
  return {
    opts: {
      ...opts,
      ...(o.apiKey !== undefined && { apiKey: o.apiKey }),
      only: o.only,
      skip: o.skip,
      ...(o.strict !== undefined && { strict: o.strict }),
    },
    extras: applied.extras,
  };
}

/** For the catalogue's IDs alone (waiver patterns are checked against them): never run. */
const placeholderClient = { command: { command: "", args: [] }, timeoutMs: 0, env: {} };

export function addCheckClientCommand(
  program: Command,
  io: CliIo,
  setExit: (code: number) => void,
  argv: readonly string[] = [],
): void {
  const command = program
    .command("check-client")
    .description(
      "run a client (the command after --) against recording servers, once per scenario, and judge what it sends " +
        "and how it copes",
    )
    .argument(
      "[command...]",
      "the client under check and its arguments, after --; it finds its servers in EXAMPLE_GRPC_TARGET and " +
        "EXAMPLE_HTTP_URL",
    );
  for (const o of toOptions(CHECK_CLIENT_TABLE)) command.addOption(o);
  command.action(async (words: string[], given: CheckClientCliOptions) => {
    if (given.list) return listClientChecks(io);
    const [client, ...args] = words;
    if (client === undefined)
      throw new ConformanceError(
        "usage",
        "check-client: give the client to run after --, such as: check-client -- ./my-client --flag",
      );
    const { opts, extras } = await configured(given, command, io);
    resolveCommand(client, io.env);
    const envKey =
      io.env.EXAMPLE_API_KEY !== undefined && io.env.EXAMPLE_API_KEY !== "" ? io.env.EXAMPLE_API_KEY : undefined;
    const apiKey = opts.apiKey ?? envKey;
    const files = await openReporterFiles(chooseReporters(opts.reporter, opts, io.env));
    try {
      const streams = reporterStreams(io, opts);
      const at = argv.indexOf("check-client");
      // The key is the client's to send, never ours to print: not in the command line the report names, nor in a
      // replay line (a client's own arguments may carry it), nor in any result (the runner's redactor has it).
      const redact = redactor(apiKey);
      const replay = createReplayRenderer(at < 0 ? [] : argv.slice(at + 1), CHECK_CLIENT_TABLE, "check-client");
      const report = await runConformance({
        checks: clientCatalogue({
          command: { command: client, args },
          ...(apiKey !== undefined && { apiKey }),
          timeoutMs: opts.timeout,
          env: io.env,
        }),
        client: redact([client, ...args].map(shellQuote).join(" ")),
        ...(apiKey !== undefined && { clientApiKey: apiKey }),
        only: opts.only,
        skip: opts.skip,
        ...(opts.seed !== undefined && { seed: opts.seed }),
        ...(opts.strict !== undefined && { strict: opts.strict }),
        ...(opts.expectFailures !== undefined && { expectFailures: opts.expectFailures }),
        ...(extras.implementation && { implementation: extras.implementation }),
        ...(extras.expectations.length > 0 && { expectations: extras.expectations }),
        reporters: createReporters(files, streams),
        replayCommand: (a) => redact(replay(a)),
      });
      setExit(report.exitCode);
    } finally {
      for (const f of files) await f.file?.close();
    }
  });
}
