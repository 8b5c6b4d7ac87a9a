// The package's runConformance: the engine given the shipped catalogue unless the caller names its own checks. A
// composition root, like the CLI: the engine itself (harness/runner.ts) never imports the checks.
import type { RunReport } from "../report.js";
import { replayFromOptions } from "../cli/replay-from-options.js";
import type { RunOptions } from "../run-config.js";
import { runConformance as runEngine } from "../runner.js";
import { pathWords } from "../cli/catalogue.js";
import { catalogue } from "../../suites/index.js";

export { catalogue };
export { clientCatalogue, clientChecks } from "../../suites/client/index.js";

/** The engine's options, with the checks optional (default the whole catalogue, with its verb lexicon). */
export type ApiRunOptions = Omit<RunOptions, "checks"> & { checks?: RunOptions["checks"] };

/**
 * Runs the selected checks of the catalogue (or of `checks`) and returns the report as data. Each result carries
 * `replay`, the command line that replays it (secrets as placeholders), as the CLI's JSON report does, unless
 * `replayCommand` says otherwise or the target is in memory.
 */
export function runConformance(options: ApiRunOptions = {}): Promise<RunReport> {
  const replay = options.replayCommand ?? replayFromOptions(options);
  // The catalogue's lexicon goes with it, as the CLI gives it; a caller's own pathWords replace it.
  return runEngine({
    ...options,
    checks: options.checks ?? catalogue,
    pathWords: options.pathWords ?? pathWords,
    ...(replay !== undefined && { replayCommand: replay }),
  });
}
