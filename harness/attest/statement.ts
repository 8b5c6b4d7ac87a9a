// The run as an in-toto Statement (v1) with a test-result predicate (v0.1): the subject is what was checked (the
// implementation, bound to the image's digest, the TLS certificate's fingerprint, or failing both a digest of how
// the report names it), the predicate the verdict and every check's outcome, with what the run was configured with.
import { createHash } from "node:crypto";
import type { RunReport } from "../report.js";

export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
export const TEST_RESULT_TYPE = "https://in-toto.io/attestation/test-result/v0.1";
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

interface ResourceDescriptor {
  name: string;
  digest?: Record<string, string>;
  uri?: string;
  annotations?: Record<string, unknown>;
}

export interface Statement {
  _type: typeof STATEMENT_TYPE;
  subject: ResourceDescriptor[];
  predicateType: typeof TEST_RESULT_TYPE;
  predicate: {
    result: "PASSED" | "WARNED" | "FAILED";
    configuration: ResourceDescriptor[];
    url?: string;
    passedTests: string[];
    warnedTests: string[];
    failedTests: string[];
  };
}

const RESULT: Record<RunReport["verdict"], Statement["predicate"]["result"]> = {
  conformant: "PASSED",
  "conformant with waivers": "WARNED",
  partial: "WARNED",
  "not conformant": "FAILED",
};

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** What the run checked, named as the report names it. */
function subject(report: RunReport): ResourceDescriptor {
  const t = report.target;
  const name = report.implementation?.name ?? t.image ?? t.grpc ?? t.http ?? "unnamed target";
  const annotations = {
    ...(report.implementation?.version !== undefined && { version: report.implementation.version }),
    ...(t.grpc !== undefined && { grpc: t.grpc }),
    ...(t.http !== undefined && { http: t.http }),
    ...(t.image !== undefined && { image: t.image }),
    ...(t.tlsFingerprint !== undefined && { tlsCertificateSha256: t.tlsFingerprint }),
  };
  // The strongest binding the run has: the image's content address, else the certificate the server presented.
  const digest =
    t.imageDigest !== undefined
      ? { sha256: t.imageDigest.replace(/^sha256:/, "") }
      : t.tlsFingerprint !== undefined
        ? { sha256: t.tlsFingerprint.replace(/:/g, "").toLowerCase() }
        : { sha256: sha256(JSON.stringify({ name, ...annotations })) };
  return {
    name,
    digest,
    ...(report.implementation?.url !== undefined && { uri: report.implementation.url }),
    annotations: {
      ...annotations,
      boundBy:
        t.imageDigest !== undefined
          ? "image digest"
          : t.tlsFingerprint !== undefined
            ? "TLS certificate fingerprint"
            : "the names above only (no image or certificate identifies the server)",
    },
  };
}

export function toStatement(report: RunReport): Statement {
  const judged = report.checks.filter((c) => c.status !== "skip");
  return {
    _type: STATEMENT_TYPE,
    subject: [subject(report)],
    predicateType: TEST_RESULT_TYPE,
    predicate: {
      result: RESULT[report.verdict],
      configuration: [
        {
          name: "example-conformance",
          annotations: { suiteVersion: report.suiteVersion, seed: report.seed, startedAt: report.startedAt },
        },
        {
          name: "contract",
          digest: { sha256: report.contractSha256 },
          annotations: { contract: report.scope.contract },
        },
        {
          name: "run",
          annotations: {
            verdict: report.verdict,
            scope: report.scope,
            selection: report.selection,
            claims: report.claims,
            waivers: report.waivers,
            unjudged: report.unjudged.map((u) => ({
              id: u.id,
              why: u.why,
              ...(u.needs !== undefined && { needs: u.needs }),
              ...(u.claim !== undefined && { claim: u.claim }),
            })),
          },
        },
      ],
      ...(report.implementation?.url !== undefined && { url: report.implementation.url }),
      passedTests: judged.filter((c) => c.status === "pass").map((c) => c.id),
      warnedTests: judged.filter((c) => !c.gating && c.status !== "pass").map((c) => c.id),
      failedTests: judged.filter((c) => c.gating).map((c) => c.id),
    },
  };
}
