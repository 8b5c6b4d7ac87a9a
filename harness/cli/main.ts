// The example-conformance CLI: parses arguments, calls the programmatic API, returns the exit code.
import { Command, CommanderError, Help, type Option } from "commander";
import { EXIT_CODE_TABLE } from "../errors.js";
import { errorLine } from "./error-line.js";
import { SUITE_VERSION } from "../version.js";
import { processIo, type CliIo } from "./io.js";

const plainHelp = new Help();

/**
 * An option's help line with its default said once and truly: a repeatable option's empty starting list is no
 * default, and an option whose text already names its default (`default /messages`) does not get commander's too.
 */
export function optionDescription(option: Option): string {
  const emptyList = Array.isArray(option.defaultValue) && option.defaultValue.length === 0;
  if (!emptyList && !/\bdefault\b/.test(option.description)) return plainHelp.optionDescription(option);
  const quiet = Object.assign(Object.create(Object.getPrototypeOf(option) as object) as Option, option, {
    defaultValue: undefined,
    defaultValueDescription: undefined,
  });
  return plainHelp.optionDescription(quiet);
}

type AddCommand = (program: Command, io: CliIo, setExit: (code: number) => void, argv: readonly string[]) => void;

/**
 * Each command's module, loaded only when the command is: `serve` never loads the checks, `lint` neither the checks
 * nor the server (a CLI start is most of a short command's cost). In the order `--help` lists them.
 */
const COMMANDS: ReadonlyArray<{ names: readonly string[]; load: () => Promise<AddCommand> }> = [
  { names: ["check"], load: async () => (await import("./check-command.js")).addCheckCommand },
  { names: ["check-client"], load: async () => (await import("./check-client-command.js")).addCheckClientCommand },
  { names: ["lint", "breaking"], load: async () => (await import("./contract-commands.js")).addContractCommands },
  { names: ["serve"], load: async () => (await import("./serve-command.js")).addServeCommand },
  { names: ["load"], load: async () => (await import("./load-command.js")).addLoadCommand },
  { names: ["verify"], load: async () => (await import("./verify-command.js")).addVerifyCommand },
  { names: ["diff"], load: async () => (await import("./diff-command.js")).addDiffCommand },
];

/**
 * The program, with the command argv names (its first word) and only that one, none for `--version` alone, or every
 * command when the first word names none (`--help`, `help check`, a misspelt command that gets its suggestion).
 */
export async function createProgram(
  io: CliIo,
  setExit: (code: number) => void,
  argv: readonly string[] = [],
): Promise<Command> {
  const program = new Command("example-conformance")
    .description("Contract tests and conformance checks for the Example Message Service")
    .version(SUITE_VERSION)
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureHelp({ optionDescription })
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      outputError: (s, write) => write(s.startsWith("error:") ? `example-conformance: ${s.slice(7)}` : s),
    });
  const first = argv[0] ?? "";
  const named = COMMANDS.filter((c) => c.names.includes(first));
  const versionOnly = argv.length === 1 && (first === "--version" || first === "-V");
  for (const command of versionOnly ? [] : named.length > 0 ? named : COMMANDS)
    (await command.load())(program, io, setExit, argv);
  for (const cmd of program.commands) cmd.exitOverride();
  // The exit codes, from the one table every output uses.
  const codes = EXIT_CODE_TABLE.map((e) => `  ${String(e.code).padStart(2)}  ${e.meaning}`).join("\n");
  for (const name of ["check", "check-client"])
    program.commands.find((c) => c.name() === name)?.addHelpText("after", `\nExit codes:\n${codes}`);
  return program;
}

/** Runs the CLI and returns its exit code; never throws. */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let exitCode = 0;
  try {
    const program = await createProgram(io, (code) => (exitCode = code), argv);
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (reason) {
    if (reason instanceof CommanderError) {
      // Help and version exit 0; every other parse error is a usage error, already printed by commander.
      return reason.exitCode === 0 ? 0 : 2;
    }
    const { line, exitCode, error: err } = errorLine(reason);
    io.stderr(line);
    if (err.code === "internal" && io.env.EXAMPLE_CONFORMANCE_DEBUG && err.cause instanceof Error) {
      io.stderr(`${err.cause.stack ?? ""}\n`);
    }
    return exitCode;
  }
}
