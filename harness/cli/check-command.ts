// `check`: runs the conformance catalogue against a target and reports; thin over runConformance.
import { InvalidArgumentError, type Command } from "commander";
import { catalogue } from "../../suites/index.js";
import { createConsoleReporter } from "../reporters/console.js";
import { createJsonReporter } from "../reporters/json.js";
import type { Reporter } from "../report.js";
import { runConformance } from "../runner.js";
import type { CliIo } from "./io.js";

export interface CheckCliOptions {
  contract?: string;
  only: string[];
  skip: string[];
  seed?: number;
  runs?: number;
  path?: string;
  strict?: boolean;
  list?: boolean;
  reportJson?: string;
}

const collect = (value: string, previous: string[]) => [...previous, ...value.split(",").filter(Boolean)];

export function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number, got ${JSON.stringify(value)}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

function listChecks(io: CliIo): void {
  const width = Math.max(...catalogue.map((c) => c.id.length));
  for (const c of catalogue) {
    io.stdout(`${c.id.padEnd(width)}  ${c.severity.padEnd(6)}  ${c.profile.padEnd(8)}  ${c.spec.padEnd(10)}  ${c.title}\n`);
  }
}

export function addCheckCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command("check", { isDefault: false })
    .description("check the contract (and, with a target, a server) against the interface specification")
    .option("--contract <dir>", "folder holding example/example.proto (default: the shipped contract)")
    .option("--only <ids>", "run only these check IDs or globs (repeatable, comma-separated)", collect, [])
    .option("--skip <ids>", "skip these check IDs or globs (repeatable, comma-separated)", collect, [])
    .option("--seed <n>", "seed of the property checks (printed by every run)", integer("--seed", 0, 2 ** 31 - 1))
    .option("--runs <n>", "cases per property check", integer("--runs", 1, 100_000), 100)
    .option("--path <path>", "replay path of one failing property case (with --only and --seed)")
    .option("--strict", "SHOULD failures and protocol checks gate too")
    .option("--list", "print every check with its ID, severity and spec reference, and exit")
    .option("--report-json <file>", "write the run report as JSON")
    .action(async (opts: CheckCliOptions) => {
      if (opts.list) {
        listChecks(io);
        return;
      }
      const reporters: Reporter[] = [createConsoleReporter({ write: io.stdout, color: io.isTty && !io.env.NO_COLOR })];
      if (opts.reportJson) reporters.push(createJsonReporter(opts.reportJson));
      const report = await runConformance({
        ...(opts.contract !== undefined && { contract: opts.contract }),
        only: opts.only,
        skip: opts.skip,
        ...(opts.seed !== undefined && { seed: opts.seed }),
        ...(opts.runs !== undefined && { runs: opts.runs }),
        ...(opts.path !== undefined && { path: opts.path }),
        ...(opts.strict !== undefined && { strict: opts.strict }),
        reporters,
      });
      setExit(report.exitCode);
    });
}
