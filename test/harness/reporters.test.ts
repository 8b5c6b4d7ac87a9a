// Reporters turn one run report into text: JSON of the documented shape, valid JUnit XML, a safe HTML page.
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import type { CheckResult, RunReport } from "../../harness/report.js";
import { createConsoleReporter } from "../../harness/reporters/console.js";
import { createGithubReporter } from "../../harness/reporters/github.js";
import { toHtml } from "../../harness/reporters/html.js";
import { toJson } from "../../harness/reporters/json.js";
import { toJunit } from "../../harness/reporters/junit.js";

const result = (over: Partial<CheckResult>): CheckResult => ({
  id: "grpc.defaults.decodes",
  title: "replies decode",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§2",
  status: "pass",
  message: "ok",
  gating: false,
  durationMs: 3,
  replay: "npx example-conformance check --only grpc.defaults.decodes --seed 1",
  ...over,
});

const report: RunReport = {
  suiteVersion: "0.1.0",
  contractSha256: "ab".repeat(32),
  target: { grpc: "127.0.0.1:5", contract: "proto (shipped)" },
  seed: 1,
  startedAt: "2026-01-01T00:00:00.000Z",
  durationMs: 1234,
  exitCode: 1,
  checks: [
    result({}),
    result({ id: "grpc.stateless.history-independent", status: "fail", gating: true, message: 'reply <b>"x"</b> & more', counterexample: "request \"a\"" }),
    result({ id: "grpc.encoding.gzip", severity: "SHOULD", profile: "protocol", status: "fail", message: "50%: bad,\nline" }),
    result({ id: "grpc.stateless.replicas", status: "skip", message: "no --replica given" }),
    result({ id: "grpc.unary.cardinality", status: "expected-fail", message: "OK", note: "expected to fail: stack" }),
  ],
};

describe("JSON reporter", () => {
  it("writes the documented shape", () => {
    const json = JSON.parse(toJson(report)) as Record<string, unknown> & { checks: Record<string, unknown>[] };
    expect(Object.keys(json)).toEqual(expect.arrayContaining(["suiteVersion", "contractSha256", "target", "seed", "durationMs", "checks"]));
    expect(json.checks[1]).toMatchObject({ id: "grpc.stateless.history-independent", severity: "MUST", status: "fail", message: expect.any(String), replay: expect.any(String) });
    expect(json.checks.map((c) => c.status)).toEqual(["pass", "fail", "fail", "skip", "expected-fail"]);
  });
});

describe("JUnit reporter", () => {
  it("writes valid XML with one testcase per check and a failure only for gating failures", () => {
    const xml = toJunit(report);
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === "testcase" || name === "testsuite" }).parse(xml) as {
      testsuites: { testsuite: { testcase: Record<string, unknown>[] }[] };
    };
    const cases = doc.testsuites.testsuite.flatMap((s) => s.testcase);
    expect(cases).toHaveLength(5);
    expect(cases.filter((c) => "failure" in c)).toHaveLength(1);
    expect(cases.filter((c) => "skipped" in c)).toHaveLength(1);
  });
});

describe("HTML reporter", () => {
  it("escapes what the target sent and names the contract, seed and verdict", () => {
    const html = toHtml(report);
    expect(html).not.toContain("<b>");
    expect(html).toContain("reply &lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp; more");
    expect(html).toContain("ab".repeat(32));
    expect(html).toContain("Not conformant");
    expect(html).not.toMatch(/<script|src=|href=/);
  });
});

describe("GitHub annotations", () => {
  it("writes an error for a gating failure and a warning otherwise, escaped as workflow commands", () => {
    let out = "";
    const r = createGithubReporter((t) => (out += t));
    for (const c of report.checks) r.onCheckResult?.(c);
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^::error title=grpc\.stateless\.history-independent \[MUST §2\]::/);
    expect(lines[1]).toMatch(/^::warning title=grpc\.encoding\.gzip \[SHOULD §2\]::50%25: bad,%0Aline%0Areplay: /);
  });
});

describe("console reporter", () => {
  it("prints each failure with its replay line and a summary", () => {
    let out = "";
    const r = createConsoleReporter({ write: (t) => (out += t), color: false });
    for (const c of report.checks) r.onCheckResult?.(c);
    void r.onRunEnd?.(report);
    expect(out).toContain("FAIL grpc.stateless.history-independent");
    expect(out).toContain('counterexample: request "a"');
    expect(out).toContain("replay: npx example-conformance check --only grpc.defaults.decodes --seed 1");
    expect(out).toContain("1 passed, 2 failed, 1 skipped, 0 errored, 1 expected failures");
    expect(out).toContain("not conformant");
  });
});
