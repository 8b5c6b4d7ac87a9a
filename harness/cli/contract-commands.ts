// `lint` and `breaking`: the contract commands for API owners, thin over lintContract and breakingContract.
import { Option, type Command } from "commander";
import {
  BUF_FORMATS,
  LINT_FORMATS,
  breakingContract,
  lintContract,
  type BufFormat,
  type BufRun,
  type LintFormat,
} from "../contract/buf.js";
import type { CliIo } from "./io.js";

const formatOption = (formats: readonly string[], description: string) =>
  new Option("--format <format>", description).choices(formats).default("text" satisfies BufFormat);

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
    .addOption(
      formatOption(
        LINT_FORMATS,
        "report format: text (with each rule's ID), buf's json, junit, github-actions, msvs or " +
          "gitlab-code-quality (paths from the working directory), or config-ignore-yaml (ignore entries for every " +
          "finding)",
      ),
    )
    .action(async (dir: string | undefined, opts: { format: LintFormat }) => {
      const run = await lintContract({ ...(dir !== undefined && { dir }), format: opts.format });
      setExit(report(io, run, "lint: no violation"));
    });

  program
    .command("breaking")
    .description("buf breaking of a changed contract against a baseline (exit 1 on a breaking change)")
    .argument("<dir>", "folder holding the changed .proto files")
    .option("--against <baseline>", "baseline folder or buf input (default: the shipped contract)")
    .addOption(
      formatOption(
        BUF_FORMATS,
        "report format: text (with each rule's ID, and the fix for a removed field), buf's json, junit, " +
          "github-actions, msvs or gitlab-code-quality (paths from the working directory)",
      ),
    )
    .action(async (dir: string, opts: { against?: string; format: BufFormat }) => {
      const run = await breakingContract({
        dir,
        ...(opts.against !== undefined && { against: opts.against }),
        format: opts.format,
      });
      setExit(report(io, run, "breaking: no breaking change"));
    });
}
