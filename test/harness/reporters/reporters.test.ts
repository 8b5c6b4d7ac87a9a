// Reporters turn one run report into text: JSON of the documented shape, valid JUnit XML, a safe HTML page.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import type { CheckResult, RunReport } from "../../../harness/report.js";
import { createConsoleReporter } from "../../../harness/reporters/console.js";
import { createGithubReporter, toJobSummary } from "../../../harness/reporters/github.js";
import { neutralise } from "../../../harness/_internals/neutralise.js";
import {
  HEADER_PAYLOAD,
  HUGE_PAYLOAD,
  PAYLOAD,
  RAW_BYTES_FORBIDDEN,
  XML_BREAKERS,
} from "../../../fixtures/hostile-targets/payloads.js";
import { createHtmlReporter, toHtml } from "../../../harness/reporters/html.js";
import { createReporters, REPORTER_NAMES, REPORTERS } from "../../../harness/reporters/index.js";
import { toJson } from "../../../harness/reporters/json.js";
import { toJunit } from "../../../harness/reporters/junit.js";

/** The page's text with the boxes that keep a token whole taken off, to compare with what was shown. */
const plain = (html: string): string => html.replace(/<span class="w">([^<]*)<\/span>/g, "$1");

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
  replayArgs: { only: over.id ?? "grpc.defaults.decodes", seed: 1 },
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
  verdict: "not conformant",
  scope: { interfaces: ["grpc"], contract: "proto (shipped)" },
  selection: { profiles: ["contract"], strict: false, only: [], skip: [] },
  waivers: [{ id: "grpc.unary.cardinality", pattern: "grpc.unary.*", reason: "stack" }],
  unjudged: [
    { id: "grpc.stateless.replicas", severity: "MUST", why: "needs", needs: "--replica", reason: "no --replica given" },
  ],
  claims: [],
  exitCode: 1,
  checks: [
    result({}),
    result({
      id: "grpc.stateless.history-independent",
      status: "fail",
      gating: true,
      message: 'reply <b>"x"</b> & more',
      counterexample: 'request "a"',
    }),
    result({
      id: "grpc.encoding.gzip",
      severity: "SHOULD",
      profile: "protocol",
      status: "fail",
      message: "50%: bad,\nline",
    }),
    result({ id: "grpc.stateless.replicas", status: "skip", message: "no --replica given" }),
    result({ id: "grpc.unary.cardinality", status: "expected-fail", message: "OK", note: "expected to fail: stack" }),
  ],
};

describe("JSON reporter", () => {
  it("writes the documented shape", () => {
    const json = JSON.parse(toJson(report)) as Record<string, unknown> & { checks: Record<string, unknown>[] };
    expect(Object.keys(json)).toEqual(
      expect.arrayContaining(["suiteVersion", "contractSha256", "target", "seed", "durationMs", "checks"]),
    );
    expect(json.checks[1]).toMatchObject({
      id: "grpc.stateless.history-independent",
      severity: "MUST",
      status: "fail",
      message: expect.any(String),
      replay: expect.any(String),
    });
    expect(json.checks.map((c) => c.status)).toEqual(["pass", "fail", "fail", "skip", "expected-fail"]);
  });
});

describe("JUnit reporter", () => {
  it("writes valid XML with one testcase per check and a failure only for gating failures", () => {
    const xml = toJunit(report);
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({
      ignoreAttributes: false,
      isArray: (name) => name === "testcase" || name === "testsuite",
    }).parse(xml) as {
      testsuites: { testsuite: { testcase: Record<string, unknown>[] }[] };
    };
    const cases = doc.testsuites.testsuite.flatMap((s) => s.testcase);
    expect(cases).toHaveLength(5);
    expect(cases.filter((c) => "failure" in c)).toHaveLength(1);
    expect(cases.filter((c) => "skipped" in c)).toHaveLength(1);
  });

  it("says a failure's message once, in its message attribute, with the evidence as its text (issue 41)", () => {
    const doc = new XMLParser({
      ignoreAttributes: false,
      isArray: (name) => name === "testcase" || name === "testsuite",
    }).parse(toJunit(report)) as {
      testsuites: { testsuite: { testcase: { failure?: { "@_message": string; "#text"?: string } }[] }[] };
    };
    const failure = doc.testsuites.testsuite.flatMap((s) => s.testcase).find((c) => c.failure !== undefined)?.failure;
    expect(failure?.["@_message"]).toBe('reply <b>"x"</b> & more');
    expect(failure?.["#text"]).toMatch(/^counterexample: request "a"\nreplay: npx example-conformance check/);
    expect(failure?.["#text"]).not.toContain("reply <b>");
  });

  it("puts the run's totals and time on the root element as on each testsuite", () => {
    const doc = new XMLParser({ ignoreAttributes: false }).parse(toJunit(report)) as {
      testsuites: Record<string, string>;
    };
    expect(doc.testsuites).toMatchObject({
      "@_tests": "5",
      "@_failures": "1",
      "@_errors": "0",
      "@_skipped": "1",
      "@_time": "1.234",
      "@_timestamp": "2026-01-01T00:00:00.000Z",
    });
  });
});

describe("HTML reporter", () => {
  it("escapes what the target sent and names the contract, seed and verdict", () => {
    const html = toHtml(report);
    expect(html).not.toContain("<b>");
    expect(plain(html)).toContain("reply &lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp; more");
    expect(html).toContain("ab".repeat(32));
    expect(html).toContain("Not conformant");
    expect(html).not.toMatch(/<script|src=|href=/);
  });
});

describe("the HTML certificate", () => {
  it("says a claimed check is not applicable by claim, declared, not judged, once in its bullet (issue 41)", () => {
    const reason =
      "not applicable by claim (replicas: single: declared by the implementation, not judged); no other instance " +
      "given (--replica ADDRESS)";
    const html = plain(
      toHtml({
        ...report,
        claims: ["replicas: single"],
        unjudged: [
          {
            id: "grpc.stateless.replicas",
            severity: "MUST",
            why: "claimed",
            claim: "replicas: single",
            needs: "--replica",
            reason,
          },
        ],
      }),
    );
    const bullet = /<li><code>grpc\.stateless\.replicas<\/code>.*?<\/li>/s.exec(html)?.[0] ?? "";
    expect(bullet).toContain("no other instance given");
    expect(bullet.match(/not applicable by claim/g)).toHaveLength(1);
    expect(bullet.match(/not judged/g)).toHaveLength(1);
  });

  it(
    "leads with the implementation, the verdict and the scope, then the gating failures, the other findings, and " +
      "the run's particulars",
    () => {
      const html = toHtml({
        ...report,
        implementation: { name: "acme-msg", version: "3.1" },
        claims: ["replicas: single"],
        target: { ...report.target, tlsFingerprint: "AB:CD" },
      });
      const at = (needle: string) => html.indexOf(needle);
      expect(plain(html)).toMatch(/<h1>acme-msg 3\.1: Example Message Service conformance<\/h1>/);
      expect(at("<h1>")).toBeLessThan(at(`class="verdict-banner`));
      expect(at(`class="verdict-banner`)).toBeLessThan(at(`<section id="gating">`));
      expect(at(`<section id="gating">`)).toBeLessThan(at(`<section id="findings">`));
      expect(at(`<section id="findings">`)).toBeLessThan(at("<dt>Judged</dt>"));
      expect(at("<dt>Judged</dt>")).toBeLessThan(at(`<section id="passed">`));
      expect(html).toContain("<dt>TLS certificate SHA-256</dt><dd><code>AB:CD</code></dd>");
      expect(html).toMatch(/<dt>Claims \(declared, not judged\)<\/dt><dd><ul><li>replicas: single<\/li><\/ul><\/dd>/);
      // The gating failure's card comes before every other, whatever the catalogue order.
      const cards = [
        ...plain(html).matchAll(/<article class="finding (gating|other)">\n<h3><code>([a-z.-]+)<\/code>/g),
      ].map((m) => `${m[1]} ${m[2]}`);
      expect(cards).toEqual(["gating grpc.stateless.history-independent", "other grpc.encoding.gzip"]);
    },
  );

  it("says a failure's reason once, its ID once, and a waiver's ID once", () => {
    const message = "POST /messages answered 200 OK, not 201 Created";
    const failing = result({
      id: "http.create.status-201",
      area: "http",
      status: "fail",
      gating: true,
      message,
      details: [message, "  reproduce: curl -sS -X POST http://127.0.0.1:1/messages"],
    });
    const html = plain(
      toHtml({
        ...report,
        checks: [failing, report.checks[4] as CheckResult],
        waivers: [{ id: "grpc.unary.cardinality", pattern: "grpc.unary.cardinality", reason: "our stack" }],
      }),
    );
    // With two gating failures or more, paper gets their IDs in one line under the heading; a screen shows it not.
    expect(html).not.toContain(`class="print-only"`);
    const two = plain(toHtml({ ...report, checks: [failing, { ...failing, id: "http.maturity" }] }));
    expect(two).toMatch(
      /<p class="print-only"><code>http\.create\.status-201<\/code>, <code>http\.maturity<\/code><\/p>/,
    );
    expect(two).toMatch(/\.print-only\{display:none\}/);
    const times = (needle: string) => html.split(needle).length - 1;
    expect(times(message)).toBe(1);
    expect(times("http.create.status-201<")).toBe(1);
    expect(html).toContain("curl -sS -X POST http://127.0.0.1:1/messages");
    // A short line is said again unless it is the whole reason: "200" alone is evidence, not a repetition.
    expect(plain(toHtml({ ...report, checks: [{ ...failing, details: ["200"] }] }))).toContain(
      "<pre><code>200</code></pre>",
    );
    expect(times("grpc.unary.cardinality")).toBe(1);
    // A waiver matched by a pattern names the pattern, and the ID still once.
    const byPattern = plain(toHtml(report));
    expect(byPattern.split("grpc.unary.cardinality").length - 1).toBe(1);
    expect(byPattern).toContain("waived by <code>grpc.unary.*</code>");
  });

  it("folds the skips of an interface not asked for into one line, and lists other skips one by one", () => {
    const noRpc = "no RPC target (--grpc HOST:PORT, --connect URL or --grpc-web URL)";
    const rpcSkips = Array.from({ length: 40 }, (_, i) =>
      result({ id: `grpc.skipped-${i}`, status: "skip", message: noRpc }),
    );
    const httpOnly: RunReport = {
      ...report,
      target: { http: "http://127.0.0.1:1", contract: "proto (shipped)" },
      scope: { interfaces: ["http"], contract: "proto (shipped)" },
      unjudged: [],
      waivers: [],
      checks: [
        ...rpcSkips,
        result({ id: "contract.reflection-match", area: "contract", status: "skip", message: noRpc }),
        result({ id: "http.auth.api-key", area: "http", status: "skip", message: "no key control to judge" }),
      ],
    };
    const html = plain(toHtml(httpOnly));
    const lines = [...html.matchAll(/<summary>([^<]*)/g)].map((m) => m[1]);
    expect(lines).toEqual([
      `gRPC, Connect and gRPC-Web: not asked for, 41 check(s) skipped: ${noRpc.replace(/\(/g, "(")}`,
    ]);
    expect(html).toMatch(/<li><code>http\.auth\.api-key<\/code>: no key control to judge<\/li>/);
    expect(html).not.toMatch(/<li><code>grpc\./);
  });

  it("links a failure's trace file, relative to the page's folder, with a path that cannot become a script or markup", () => {
    const traced = (trace: string) => ({
      ...report,
      checks: [result({ id: "http.create.status-201", status: "fail", gating: true, message: "no", trace })],
    });
    expect(toHtml(traced("traces/http.create.status-201.har"))).toContain(
      `<a href="traces/http.create.status-201.har">`,
    );
    expect(toHtml(traced("/runs/7/traces/a b.har"), { pageDir: "/runs/7" })).toContain(`<a href="traces/a%20b.har">`);
    expect(toHtml(traced("/runs/7/traces/a.har"), { pageDir: "/elsewhere" })).toContain(
      `<a href="../runs/7/traces/a.har">`,
    );
    expect(toHtml(traced("/runs/7/a.har"))).toContain(`<a href="file:///runs/7/a.har">`);
    const hostile = toHtml(traced(`javascript:alert(1)" onclick="x\u001b[2J<script>`));
    expect(hostile).toContain(`<a href="javascript%3Aalert(1)%22%20onclick%3D%22x%1B%5B2J%3Cscript%3E">`);
    expect(hostile).not.toMatch(/href="javascript:|<script|<[^>]*\sonclick=|\u001b/);
    // Written to a report file, the page links relative to the file's own folder.
    let page = "";
    void createHtmlReporter({ path: "/runs/7/report.html", write: (text: string) => void (page = text) }).onRunEnd?.(
      traced("/runs/7/traces/a.har"),
    );
    expect(page).toContain(`<a href="traces/a.har">`);
    // Without a trace, no link at all.
    expect(toHtml(report)).not.toMatch(/<a\b/);
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
    expect(lines[1]).toMatch(/^::warning title=grpc\.encoding\.gzip \[SHOULD §2\]::50%25: bad,\\nline%0Areplay: /);
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
    expect(out).toContain(
      "1 gating failure(s), 1 finding(s) that do not gate; 1 passed, 1 skipped, 1 expected failures",
    );
    expect(out).toContain("not conformant");
  });

  it("names a failure's trace file under its replay line, inert", () => {
    let out = "";
    const traced = result({
      id: "http.create.status-201",
      status: "fail",
      gating: true,
      message: "no",
      trace: "traces/a\x1b[2J.har",
    });
    void createConsoleReporter({ write: (t) => (out += t), color: false }).onRunEnd?.({ ...report, checks: [traced] });
    expect(out).toMatch(/^ {5}replay: .*\n {5}trace: traces\/a\\x1b\[2J\.har$/m);
  });
});

describe("target text in every medium", () => {
  const hostile = result({
    id: "grpc.errors.unknown-method",
    status: "fail",
    gating: true,
    message: PAYLOAD,
    details: [HEADER_PAYLOAD],
    counterexample: XML_BREAKERS,
  });
  const long = result({ id: "grpc.limits.large-message", status: "fail", gating: true, message: HUGE_PAYLOAD });
  const bad: RunReport = { ...report, checks: [...report.checks, hostile, long] };

  it("neutralise shows controls as escapes, keeps one line, and cuts long text saying how much", () => {
    expect(neutralise("a\x1b[31mb\rc\nd\u202ee\u0000\ud800")).toBe("a\\x1b[31mb\\rc\\nd\\u202ee\\x00\\ud800");
    const cutText = neutralise("é".repeat(2000));
    expect(cutText).toMatch(/^(é){512}\.\.\. \(2976 more bytes\)$/);
    expect(neutralise("a\nb\x1bc", { multiline: true })).toBe("a\nb\\x1bc");
    expect(neutralise("::a\n::stop-commands::t", { multiline: true })).toBe("\\x3a:a\n\\x3a:stop-commands::t");
  });

  it("the console gets no raw control character, one line per text, and the real verdict line last", () => {
    let out = "";
    const r = createConsoleReporter({ write: (t) => (out += t), color: false });
    for (const c of bad.checks) r.onCheckResult?.(c);
    void r.onRunEnd?.(bad);
    for (const b of RAW_BYTES_FORBIDDEN) expect(out).not.toContain(b);
    expect(out).not.toMatch(/^::/m);
    expect(out).not.toMatch(/^conformant/m);
    expect(out).not.toMatch(/^PASS grpc\.stateless\.history-independent forged/m);
    expect(out.trimEnd().split("\n").at(-1)).toMatch(/^not conformant: 3 gating check\(s\) failed \(seed 1\)$/);
    expect(out.length).toBeLessThan(20_000);
    expect(out).toMatch(/\.\.\. \(\d+ more bytes\)/);
  });

  it("GitHub annotations carry the text as data: no line starts with :: but the product's own", () => {
    let out = "";
    const r = createGithubReporter((t) => (out += t));
    for (const c of bad.checks) r.onCheckResult?.(c);
    const lines = out.split("\n").filter(Boolean);
    expect(lines.every((l) => /^::(error|warning) title=[^:]*::/.test(l))).toBe(true);
    expect(lines).toHaveLength(4);
    for (const b of RAW_BYTES_FORBIDDEN) expect(out).not.toContain(b);
    expect(out).not.toMatch(/%0A::/);
    const summary = toJobSummary(bad);
    expect(summary).not.toMatch(/<script|<img|<testcase/);
    expect(summary).toContain("### example-conformance: not conformant");
  });

  it("JUnit parses, holds exactly one testcase per check, and no forged testcase", () => {
    const xml = toJunit(bad);
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({
      ignoreAttributes: false,
      isArray: (name) => name === "testcase" || name === "testsuite",
    }).parse(xml) as {
      testsuites: { testsuite: { testcase: { "@_name": string }[] }[] };
    };
    const names = doc.testsuites.testsuite.flatMap((s) => s.testcase.map((c) => c["@_name"]));
    expect(names).toHaveLength(bad.checks.length);
    expect(names).not.toContain("forged");
    // eslint-disable-next-line no-control-regex
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/);
    expect(xml).not.toContain("<![CDATA[");
    expect(xml).toContain('name="verdict" value="not conformant"');
    // Printed to stdout (no --report-junit file) or by a CI step, no line of it is a workflow command.
    expect(xml).not.toMatch(/^::/m);
  });

  it("HTML has no raw control character and no executable markup", () => {
    const html = toHtml(bad);
    // eslint-disable-next-line no-control-regex
    expect(html).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202e\u2066\ufffe]/);
    // Markup only in tags of the page's own: no script, image, handler or link anywhere inside a tag.
    expect(html).not.toMatch(/<(script|img|iframe|a)\b/i);
    expect(html).not.toMatch(/<[^>]*\s(on\w+|src|href)=/i);
    expect(html).toContain("&lt;script&gt;");
    expect(html).not.toMatch(/^::/m);
    // Long text never widens the page: prose wraps a word too long for its line, a token kept whole still wraps when
    // it cannot fit a line by itself, and evidence scrolls inside its block (the browser test measures it).
    expect(html).toMatch(/(^|\})body\{[^}]*overflow-wrap:break-word/m);
    expect(html).toMatch(/(^|\})\.w,:not\(pre\)>code\{[^}]*max-width:100%;overflow-wrap:anywhere/m);
    expect(html).toMatch(/(^|\})pre\{[^}]*overflow-x:auto/m);
  });
});

describe("a container's log lines (--image), which the target writes", () => {
  const withLog: RunReport = {
    ...report,
    target: { ...report.target, image: "hostile:latest" },
    containerLog: [PAYLOAD, HEADER_PAYLOAD, HUGE_PAYLOAD],
  };

  it("reach the console one line each, inert and cut, before the real verdict line", () => {
    let out = "";
    void createConsoleReporter({ write: (t) => (out += t), color: false }).onRunEnd?.(withLog);
    for (const b of RAW_BYTES_FORBIDDEN) expect(out).not.toContain(b);
    expect(out).not.toMatch(/^(::|conformant|PASS)/m);
    const log = out.slice(out.indexOf("container log of hostile:latest (last 3 lines):\n")).split("\n");
    expect(log.slice(1, 4).every((l) => l.startsWith("  hostile "))).toBe(true);
    expect(log[3]).toMatch(/\.\.\. \(\d+ more bytes\)$/);
    expect(out.trimEnd().split("\n").at(-1)).toMatch(/^not conformant: /);
  });

  it("reach the HTML page with no raw control character or markup, and the JSON whole", () => {
    const html = toHtml(withLog);
    expect(html).toContain("Container log (last 3 lines)");
    // eslint-disable-next-line no-control-regex
    expect(html).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202e\u2066\ufffe]/);
    expect(html).not.toMatch(/<(script|img)\b/i);
    expect((JSON.parse(toJson(withLog)) as RunReport).containerLog).toEqual(withLog.containerLog);
  });
});

describe("verdict kinds", () => {
  const base = { ...report, exitCode: 0 as const, checks: [result({})], unjudged: [], waivers: [] };
  const cases: [string, RunReport, RegExp, RegExp][] = [
    [
      "conformant",
      { ...base, verdict: "conformant" },
      /^conformant: no gating check failed \(seed 1\)$/m,
      /Conformant: no gating check failed/,
    ],
    [
      "conformant with waivers",
      {
        ...base,
        verdict: "conformant with waivers",
        waivers: [{ id: "grpc.unary.cardinality", pattern: "grpc.unary.*", reason: "our stack" }],
      },
      /^conformant with waivers: no gating check failed, 1 failure\(s\) waived/m,
      /Conformant with waivers/,
    ],
    [
      "partial",
      {
        ...base,
        verdict: "partial",
        selection: { ...base.selection, only: ["grpc.defaults.decodes"] },
        unjudged: [
          {
            id: "grpc.stateless.replicas",
            severity: "MUST",
            why: "selection",
            reason: "not in --only grpc.defaults.decodes",
          },
        ],
      },
      /^partial: no gating check failed, but 1 gating check\(s\) were not run \(--only grpc\.defaults\.decodes\)/m,
      /Partial: /,
    ],
    [
      "partial",
      {
        ...base,
        verdict: "partial",
        unjudged: [
          {
            id: "http.stateless.replicas",
            severity: "MUST",
            why: "needs",
            needs: "--http-replica",
            reason: "no other instance given",
          },
          {
            id: "http.level.status",
            severity: "MUST",
            why: "skipped",
            reason: "POST /messages answered 201 with no Location, self link or id: nothing to probe it by",
          },
          {
            id: "http.delete.gone",
            severity: "MUST",
            why: "skipped",
            reason: "POST /messages answered 201 with no Location, self link or id: nothing to probe it by",
          },
        ],
      },
      // Issue 41: the checks the server's own answers left unjudged are counted and named beside the flag the run
      // lacked.
      /^partial: no gating check failed, but 1 gating check\(s\) could not be judged without --http-replica \(http\.stateless\.replicas\), and 2 more gating check\(s\) could not judge \(http\.level\.status, http\.delete\.gone: each says why\)/m,
      /Partial: /,
    ],
  ];
  it.each(cases)(
    "%s: the console, JSON, JUnit and HTML say it, and only a complete run gets the plain banner",
    (kind, r, line, banner) => {
      let out = "";
      void createConsoleReporter({ write: (t) => (out += t), color: false }).onRunEnd?.(r);
      expect(out).toMatch(line);
      expect(JSON.parse(toJson(r))).toMatchObject({
        verdict: kind,
        selection: r.selection,
        waivers: r.waivers,
        unjudged: r.unjudged,
        scope: r.scope,
      });
      const junit = toJunit(r);
      expect(junit).toContain(`name="verdict" value="${kind}"`);
      // The certificate's particulars, in JUnit and on the page: profile, strictness, scope, selection, waivers,
      // unjudged.
      for (const p of [
        'name="profiles" value="contract"',
        'name="strict" value="false"',
        'name="interfaces" value="grpc"',
        `name="only" value="${r.selection.only.join(",")}"`,
      ])
        expect(junit).toContain(p);
      for (const w of r.waivers) expect(junit).toContain(`name="waiver.${w.id}" value="${w.pattern}: ${w.reason}"`);
      for (const u of r.unjudged) expect(junit).toContain(`name="unjudged.${u.id}" value="${u.why}: ${u.reason}"`);
      const html = toHtml(r);
      expect(html).toContain("contract profile");
      expect(html).toContain("gRPC 127.0.0.1:5, the contract proto (shipped)");
      expect(plain(html)).toContain(
        r.selection.only.length > 0 ? `--only ${r.selection.only.join(",")}` : "every check",
      );
      expect(html).toMatch(banner);
      if (kind !== "conformant") expect(html).not.toMatch(/>Conformant: /);
      for (const w of r.waivers) expect(html).toContain(w.reason);
      for (const u of r.unjudged) expect(html).toContain(u.id);
    },
  );
});

describe("reporters by name", () => {
  it("each is made from the streams alone, and a document reporter without a file writes its document to stdout", async () => {
    for (const name of REPORTER_NAMES) {
      let stdout = "";
      const [reporter] = createReporters([{ name }], {
        stdout: (t) => void (stdout += t),
        stderr: () => undefined,
        color: false,
      });
      for (const r of report.checks) reporter?.onCheckResult?.(r);
      await reporter?.onRunEnd?.(report);
      expect(stdout, name).not.toBe("");
      if (REPORTERS[name].document)
        expect(stdout, name).toBe(
          { json: toJson, junit: toJunit, html: toHtml }[name as "json" | "junit" | "html"](report),
        );
    }
  });

  it("a document reporter given a file writes there and nothing to the streams", async () => {
    const written: string[] = [];
    let streams = "";
    const [reporter] = createReporters([{ name: "junit", file: { write: (t) => void written.push(t) } }], {
      stdout: (t) => void (streams += t),
      stderr: (t) => void (streams += t),
      color: false,
    });
    await reporter?.onRunEnd?.(report);
    expect(written).toEqual([toJunit(report)]);
    expect(streams).toBe("");
  });

  it("import nothing from the CLI", () => {
    const dir = join(import.meta.dirname, "../../../harness/reporters");
    const sources = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    expect(sources.length).toBeGreaterThan(5);
    for (const f of sources) expect(readFileSync(join(dir, f), "utf8"), f).not.toMatch(/from "[^"]*\/cli\//);
  });
});
