// The programmatic API of example-conformance.
export { ConformanceError, EXIT_CODES } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export { lintContract, breakingContract, BUF_FORMATS, LINT_FORMATS } from "./contract/buf.js";
export type { BufFormat, BufRun, ContractFinding, LintFormat, LintOptions, BreakingOptions } from "./contract/buf.js";
export { compareRuns, diffExitCode, newGatingFailures, FAIL_ON } from "./diff/compare-runs.js";
export type { ComparableReport, DiffEntry, FailOn, RunDiff } from "./diff/compare-runs.js";
export { loadReport } from "./diff/load-report.js";
export { contractSha256 } from "./runner.js";
import { runConformance as run, type RunOptions } from "./runner.js";
import { replayFromOptions, type RunReport } from "./report.js";
/**
 * Runs the conformance checks against the targets given and returns the report. Each result carries `replay`, the
 * command line that replays it (secrets as placeholders), as the CLI's JSON report does, unless `replayCommand` says
 * otherwise or the target is in memory.
 */
export function runConformance(options: RunOptions = {}): Promise<RunReport> {
  const replay = options.replayCommand ?? replayFromOptions(options);
  return run({ ...options, ...(replay !== undefined && { replayCommand: replay }) });
}
export type { RunOptions } from "./runner.js";
export { replayFromOptions } from "./report.js";
export type { ReplaySource } from "./report.js";
export type { CheckResult, CheckStatus, ReplayArgs, Reporter, RunReport, RunScope, RunSelection, Unjudged, Verdict, Waiver } from "./report.js";
export { REPORTERS, REPORTER_NAMES, createReporters, openReportFile } from "./reporters/index.js";
export type { ReporterEntry, ReporterName, ReporterStreams, ReportFile, ReportSink } from "./reporters/index.js";
export type { CheckDefinition, CheckContext, CheckOutcome, Severity, Profile, Area, Protocol, Sharing } from "./check.js";
export { catalogue } from "../suites/index.js";
export { clientCatalogue, clientChecks } from "../suites/client/index.js";
export type { ClientUnderTest } from "./client/run-scenario.js";
export { startReferenceServer } from "../reference-server/start.js";
export type { ReferenceServer, ReferenceServerOptions } from "../reference-server/start.js";
export { createGrpcTarget } from "./targets/create-grpc-target.js";
export type { GrpcTargetOptions } from "./targets/create-grpc-target.js";
export { createInMemoryClient } from "./targets/in-memory-client.js";
export type { InMemoryAnswer, InMemoryCall, InMemoryHandler } from "./targets/in-memory-client.js";
export { createHttpTarget } from "./targets/create-http-target.js";
export type { HttpTargetOptions } from "./targets/create-http-target.js";
export type { HttpRunTarget } from "./session.js";
export { runLoad } from "./load/run-load.js";
export type { LoadOptions, LoadReport, LoadProgress } from "./load/run-load.js";
