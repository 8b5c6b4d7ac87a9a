// The JUnit reporter: one testsuite per area, one testcase per check, for CI systems that read JUnit XML. Written
// with fast-xml-parser's builder, which escapes text and attributes (no CDATA section for a target to close);
// the target's text is first made valid XML 1.0 with its control characters shown.
import { XMLBuilder } from "fast-xml-parser";
import type { CheckResult, Reporter, RunReport } from "../report.js";
import { forXml as x } from "../_internals/neutralise.js";
import type { ReportSink } from "./_internals/report-file.js";

type Node = Record<string, unknown>;

const property = (name: string, value: string): Node => ({ "@_name": name, "@_value": x(value) });

/** The run's verdict and what it judged, as properties every testsuite carries. */
function runProperties(report: RunReport): Node[] {
  return [
    property("verdict", report.verdict),
    property("seed", String(report.seed)),
    property("suiteVersion", report.suiteVersion),
    property("contractSha256", report.contractSha256),
    property("contract", report.scope.contract),
    property("interfaces", report.scope.interfaces.join(",")),
    ...(report.target.grpc !== undefined ? [property("grpcTarget", report.target.grpc)] : []),
    ...(report.target.http !== undefined ? [property("httpTarget", report.target.http)] : []),
    ...(report.target.image !== undefined ? [property("image", report.target.image)] : []),
    ...(report.target.imageDigest !== undefined ? [property("imageDigest", report.target.imageDigest)] : []),
    ...(report.target.tlsFingerprint !== undefined
      ? [property("tlsCertificateSha256", report.target.tlsFingerprint)]
      : []),
    ...(report.implementation ? [property("implementation", report.implementation.name)] : []),
    ...(report.implementation?.version !== undefined
      ? [property("implementationVersion", report.implementation.version)]
      : []),
    ...(report.implementation?.url !== undefined ? [property("implementationUrl", report.implementation.url)] : []),
    ...report.claims.map((c) => property("claim", `${c} (declared, not judged)`)),
    property("profiles", report.selection.profiles.join(",")),
    property("strict", String(report.selection.strict)),
    property("only", report.selection.only.join(",")),
    property("skip", report.selection.skip.join(",")),
    ...report.waivers.map((w) => property(`waiver.${w.id}`, `${w.pattern}: ${w.reason}`)),
    ...report.unjudged.map((u) => property(`unjudged.${u.id}`, `${u.why}: ${u.reason}`)),
  ];
}

function testcase(r: CheckResult): Node {
  // A failure's message is its message attribute: its text holds the evidence after it, so that a CI page that shows
  // both (GitHub's test reporters, Jenkins) does not print the message twice.
  const failing = (r.status === "fail" || r.status === "error") && r.gating;
  const body = x(
    [
      ...(failing ? [] : [r.message]),
      ...(r.counterexample !== undefined ? [`counterexample: ${r.counterexample}`] : []),
      ...(r.details ?? []),
      ...(r.replay !== undefined ? [`replay: ${r.replay}`] : []),
      ...(r.grpcurl !== undefined ? [`grpcurl: ${r.grpcurl}`] : []),
      ...(r.note ? [r.note] : []),
    ].join("\n"),
  );
  const tc: Node = {
    "@_classname": `example-conformance.${r.area}.${r.profile}`,
    "@_name": `${r.id} [${r.severity}]`,
    "@_time": String(r.durationMs / 1000),
  };
  const evidence = body !== "" ? { "#text": body } : {};
  if (r.status === "fail" && r.gating) tc.failure = { "@_message": x(r.message), "@_type": r.severity, ...evidence };
  else if (r.status === "error" && r.gating) tc.error = { "@_message": x(r.message), "@_type": "error", ...evidence };
  else if (r.status === "skip") tc.skipped = { "@_message": x(r.message) };
  else tc["system-out"] = r.status === "pass" ? body : `${r.status} (not gating): ${body}`;
  return tc;
}

export function toJunit(report: RunReport): string {
  const areas = [...new Set(report.checks.map((c) => c.area))];
  const suites = areas.map((area) => {
    const cases = report.checks.filter((c) => c.area === area);
    return {
      "@_name": `example-conformance ${area}`,
      "@_timestamp": report.startedAt,
      "@_tests": String(cases.length),
      "@_failures": String(cases.filter((c) => c.status === "fail" && c.gating).length),
      "@_errors": String(cases.filter((c) => c.status === "error" && c.gating).length),
      "@_skipped": String(cases.filter((c) => c.status === "skip").length),
      "@_time": String(cases.reduce((t, c) => t + c.durationMs, 0) / 1000),
      properties: { property: runProperties(report) },
      testcase: cases.map(testcase),
    };
  });
  const builder = new XMLBuilder({
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    format: true,
    suppressEmptyNode: true,
  });
  const doc = {
    "?xml": { "@_version": "1.0", "@_encoding": "UTF-8" },
    // The totals on the root too, as JUnit readers that look only there (and surefire's schema) expect them.
    testsuites: {
      "@_name": "example-conformance",
      "@_tests": String(report.checks.length),
      "@_failures": String(report.checks.filter((c) => c.status === "fail" && c.gating).length),
      "@_errors": String(report.checks.filter((c) => c.status === "error" && c.gating).length),
      "@_skipped": String(report.checks.filter((c) => c.status === "skip").length),
      "@_time": String(report.durationMs / 1000),
      "@_timestamp": report.startedAt,
      testsuite: suites,
    },
  };
  return `${builder.build(doc) as string}`;
}

export function createJunitReporter(file: ReportSink): Reporter {
  return {
    async onRunEnd(report) {
      await file.write(toJunit(report));
    },
  };
}
