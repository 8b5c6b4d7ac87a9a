// The JSON reporter: the run report as one file, for machines. It keeps the target's text whole (JSON escapes
// every control character), so it is where the full text of a long message is found.
import type { Reporter, RunReport } from "../report.js";
import type { ReportSink } from "./_internals/report-file.js";

export function toJson(report: RunReport): string {
  const {
    suiteVersion,
    contractSha256,
    target,
    seed,
    startedAt,
    durationMs,
    verdict,
    scope,
    selection,
    waivers,
    unjudged,
    claims,
    exitCode,
  } = report;
  const checks = report.checks.map((r) => ({
    id: r.id,
    severity: r.severity,
    profile: r.profile,
    spec: r.spec,
    status: r.status,
    gating: r.gating,
    message: r.message,
    replayArgs: r.replayArgs,
    ...(r.replay !== undefined && { replay: r.replay }),
    ...(r.grpcurl !== undefined && { grpcurl: r.grpcurl }),
    ...(r.trace !== undefined && { trace: r.trace }),
    durationMs: r.durationMs,
    ...(r.traffic && { traffic: r.traffic }),
    ...(r.counterexample !== undefined && { counterexample: r.counterexample }),
    ...(r.details && { details: r.details }),
    ...(r.note && { note: r.note }),
    ...(r.needs !== undefined && { needs: r.needs }),
    ...(r.claim !== undefined && { claim: r.claim }),
  }));
  const containerLog = report.containerLog && { containerLog: report.containerLog };
  const backpressure = report.backpressure && { backpressure: report.backpressure };
  const capabilities = report.capabilities && { capabilities: report.capabilities };
  const attestation = report.attestation && { attestation: report.attestation };
  const out = {
    ...(report.implementation && { implementation: report.implementation }),
    suiteVersion,
    contractSha256,
    target,
    seed,
    startedAt,
    durationMs,
    verdict,
    scope,
    selection,
    claims,
    waivers,
    unjudged,
    exitCode,
    checks,
    ...containerLog,
    ...backpressure,
    ...capabilities,
    ...attestation,
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}

export function createJsonReporter(file: ReportSink): Reporter {
  return {
    async onRunEnd(report) {
      await file.write(toJson(report));
    },
  };
}
