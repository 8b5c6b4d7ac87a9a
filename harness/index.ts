// The programmatic API of example-conformance.
export { ConformanceError, EXIT_CODES } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export { lintContract, breakingContract, BUF_FORMATS, LINT_FORMATS } from "./contract/buf.js";
export type { BufFormat, BufRun, LintFormat, LintOptions, BreakingOptions } from "./contract/buf.js";
export { runConformance, contractSha256 } from "./runner.js";
export type { RunOptions } from "./runner.js";
export type { CheckResult, CheckStatus, Reporter, RunReport } from "./report.js";
export type { CheckDefinition, CheckContext, CheckOutcome, Severity, Profile, Area } from "./check.js";
export { catalogue } from "../suites/index.js";
export { startReferenceServer } from "../reference-server/start.js";
export type { ReferenceServer, ReferenceServerOptions } from "../reference-server/start.js";
export { createGrpcTarget } from "./targets/create-grpc-target.js";
export type { GrpcTargetOptions } from "./targets/create-grpc-target.js";
export { createHttpTarget } from "./targets/create-http-target.js";
export type { HttpTargetOptions } from "./targets/create-http-target.js";
export type { HttpRunTarget } from "./session.js";
export { runLoad } from "./load/run-load.js";
export type { LoadOptions, LoadReport, LoadProgress } from "./load/run-load.js";
