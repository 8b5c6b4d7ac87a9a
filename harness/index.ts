// The programmatic API of example-conformance.
export { ConformanceError, EXIT_CODES } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export { lintContract, breakingContract, BUF_FORMATS, LINT_FORMATS } from "./contract/buf.js";
export type { BufFormat, BufRun, ContractFinding, LintFormat, LintOptions, BreakingOptions } from "./contract/buf.js";
export { compareRuns, diffExitCode, newGatingFailures, FAIL_ON } from "./diff/compare-runs.js";
export type { ComparableReport, DiffEntry, FailOn, RunDiff } from "./diff/compare-runs.js";
export { loadReport } from "./diff/load-report.js";
export { contractSha256 } from "./runner.js";
export type { RunOptions, GrpcTargetOptions, HttpTargetOptions, HttpRunTarget } from "./run-config.js";
export { runConformance } from "./api/run-conformance.js";
export type { ApiRunOptions } from "./api/run-conformance.js";
export { replayFromOptions } from "./cli/replay-from-options.js";
export type { ReplaySource } from "./cli/replay-from-options.js";
export type {
  CheckResult,
  CheckStatus,
  ReplayArgs,
  Reporter,
  RunReport,
  RunScope,
  RunSelection,
  Unjudged,
  Verdict,
  Waiver,
} from "./report.js";
export { REPORTERS, REPORTER_NAMES, createReporters, openReportFile } from "./reporters/index.js";
export type { ReporterEntry, ReporterName, ReporterStreams, ReportFile, ReportSink } from "./reporters/index.js";
export type {
  CheckDefinition,
  CheckContext,
  CheckOutcome,
  Severity,
  Profile,
  Area,
  Protocol,
  Sharing,
} from "./check.js";
export { catalogue, clientCatalogue, clientChecks } from "./api/run-conformance.js";
export type { ClientUnderTest } from "./client/run-scenario.js";
export { startReferenceServer } from "../reference-server/start.js";
export type { ReferenceServer, ReferenceServerOptions } from "../reference-server/start.js";
export { createGrpcTarget } from "./targets/create-grpc-target.js";
export { createInMemoryClient } from "./targets/in-memory-client.js";
export type { InMemoryAnswer, InMemoryCall, InMemoryHandler } from "./targets/in-memory-client.js";
export { createHttpTarget } from "./targets/create-http-target.js";
export type { HttpHandler } from "./targets/http-inject.js";
export { runLoad } from "./load/run-load.js";
export type { LoadOptions, LoadReport, LoadProgress } from "./load/run-load.js";
export { PROTOCOLS, PROTOCOL_NAMES, registerProtocol } from "./protocols/index.js";
export type { ProtocolModule, TransportSetup, UnaryTransport, ExchangeObserver } from "./protocols/index.js";
export { createHttpExchange } from "./protocols/http-exchange.js";
