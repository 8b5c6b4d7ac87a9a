// `diff OLD.json NEW.json`: two runs' reports compared; exit 1 only when --fail-on asks and the newer run fails so.
import { Option, type Command } from "commander";
import { compareRuns, diffExitCode, FAIL_ON, type FailOn } from "../diff/compare-runs.js";
import { diffJson, diffText } from "../diff/format-diff.js";
import { loadReport } from "../diff/load-report.js";
import type { CliIo } from "./io.js";

export function addDiffCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command("diff")
    .description("compare two runs' JSON reports: newly failing, newly passing, still failing, no longer judged")
    .argument("<old>", "the earlier run's report (check --report-json), the baseline")
    .argument("<new>", "the later run's report")
    .addOption(
      new Option(
        "--fail-on <when>",
        "exit 1 on: none; new, a gating failure the baseline did not have; any gating failure of the new run",
      )
        .choices(FAIL_ON)
        .default("none"),
    )
    .addOption(new Option("--format <format>", "text, or json").choices(["text", "json"]).default("text"))
    .action(async (oldFile: string, newFile: string, opts: { failOn: FailOn; format: "text" | "json" }) => {
      const before = await loadReport(oldFile, "old report");
      const after = await loadReport(newFile, "new report");
      const diff = compareRuns(before, after);
      const code = diffExitCode(
        diff,
        opts.failOn,
        after.exitCode ?? (after.checks.some((c) => c.gating && (c.status === "fail" || c.status === "error")) ? 1 : 0),
      );
      io.stdout(opts.format === "json" ? diffJson(diff, opts.failOn, code) : diffText(diff, opts.failOn, code));
      setExit(code);
    });
}
