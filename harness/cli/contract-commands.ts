// `lint` and `breaking`: the contract commands for API owners, thin over lintContract and breakingContract.
import { Option, type Command } from "commander";
import { BUF_FORMATS, breakingContract, lintContract, type BufFormat, type BufRun } from "../contract/buf.js";
import type { CliIo } from "./io.js";

const formatOption = () =>
  new Option("--format <format>", "report format").choices(BUF_FORMATS).default("text" satisfies BufFormat);

function report(io: CliIo, run: BufRun, clean: string): number {
  if (run.output) io.stdout(run.output.endsWith("\n") ? run.output : `${run.output}\n`);
  else if (run.exitCode === 0) io.stderr(`${clean}\n`);
  return run.exitCode;
}

export function addContractCommands(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command("lint")
    .description("buf lint a contract with the product's rules, GO_PACKAGE_DEFINED among them (exit 1 on a violation)")
    .argument("[dir]", "folder holding the .proto files (default: the shipped contract)")
    .addOption(formatOption())
    .action(async (dir: string | undefined, opts: { format: BufFormat }) => {
      const run = await lintContract({ ...(dir !== undefined && { dir }), format: opts.format });
      setExit(report(io, run, "lint: no violation"));
    });

  program
    .command("breaking")
    .description("buf breaking of a changed contract against a baseline (exit 1 on a breaking change)")
    .argument("<dir>", "folder holding the changed .proto files")
    .option("--against <baseline>", "baseline folder or buf input (default: the shipped contract)")
    .addOption(formatOption())
    .action(async (dir: string, opts: { against?: string; format: BufFormat }) => {
      const run = await breakingContract({
        dir,
        ...(opts.against !== undefined && { against: opts.against }),
        format: opts.format,
      });
      setExit(report(io, run, "breaking: no breaking change"));
    });
}
