// The HTML reporter: one self-contained certification page (no scripts, no external assets). Its banner says
// "Conformant" only for a complete run without waivers, and the page lists what was judged and what was not.
import type { CheckResult, Reporter, RunReport, Verdict } from "../report.js";
import { forHtml as h } from "./_internals/neutralise.js";
import type { ReportSink } from "./_internals/report-file.js";
import { gateWords, scopeWords, selectionWords, verdictReason } from "./_internals/verdict-words.js";

const VERDICT_CLASS: Record<CheckResult["status"], string> = {
  pass: "pass",
  fail: "fail",
  error: "fail",
  skip: "skip",
  "expected-fail": "skip",
};

const BANNER: Record<Verdict, { title: string; css: string }> = {
  conformant: { title: "Conformant", css: "ok" },
  "conformant with waivers": { title: "Conformant with waivers", css: "warn" },
  partial: { title: "Partial", css: "warn" },
  "not conformant": { title: "Not conformant", css: "bad" },
};

const UNJUDGED_WORDS: Record<RunReport["unjudged"][number]["why"], string> = {
  selection: "not run",
  needs: "not judged for want of an input",
  claimed: "not applicable by claim",
  skipped: "skipped",
};

function row(r: CheckResult): string {
  const extra = [
    r.counterexample !== undefined ? `<div>counterexample: <code>${h(r.counterexample)}</code></div>` : "",
    ...(r.details ?? []).map((d) => `<div><code>${h(d)}</code></div>`),
    (r.status === "fail" || r.status === "error") && r.replay !== undefined ? `<div>replay: <code>${h(r.replay)}</code></div>` : "",
    r.grpcurl !== undefined ? `<div>grpcurl: <code>${h(r.grpcurl)}</code></div>` : "",
    r.note ? `<div>${h(r.note)}</div>` : "",
  ].join("");
  const verdict = r.status + (r.gating ? "" : r.status === "fail" || r.status === "error" ? " (not gating)" : "");
  return `<tr class="${VERDICT_CLASS[r.status]}"><td><code>${h(r.id)}</code><div class="title">${h(r.title)}</div></td><td>${r.severity}</td><td>${r.profile}</td><td>${h(r.spec)}</td><td class="verdict">${h(verdict)}</td><td class="why">${h(r.message)}${extra}</td></tr>`;
}

/** "my-service 1.4.2: Example Message Service conformance", or the plain title when the run names no implementation. */
function implementationWords(report: RunReport): string {
  const i = report.implementation;
  return i ? `${i.name}${i.version !== undefined ? ` ${i.version}` : ""}: Example Message Service conformance` : "Example Message Service conformance";
}

/** The gating failures first, then the findings that do not gate, then the rest, each group in catalogue order. */
function decidingFirst(checks: readonly CheckResult[]): CheckResult[] {
  const rank = (r: CheckResult) => (r.gating ? 0 : r.status === "fail" || r.status === "error" ? 1 : 2);
  return [...checks].sort((a, b) => rank(a) - rank(b));
}

const list = (items: string[], none: string): string => (items.length === 0 ? none : `<ul>${items.map((i) => `<li>${i}</li>`).join("")}</ul>`);

export function toHtml(report: RunReport): string {
  const banner = BANNER[report.verdict];
  const count = (s: CheckResult["status"]) => report.checks.filter((c) => c.status === s).length;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>example-conformance: ${h(report.verdict)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1f24;max-width:100%}
h1{margin:0 0 .5rem}.verdict-banner{padding:.6rem 1rem;border-radius:6px;font-weight:600;display:inline-block}
.ok{background:#dafbe1;color:#116329}.bad{background:#ffebe9;color:#a40e26}.warn{background:#fff8c5;color:#7d4e00}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;table-layout:fixed;margin-top:1rem}th,td{border-bottom:1px solid #d0d7de;padding:.4rem;text-align:left;vertical-align:top;overflow-wrap:anywhere;word-break:break-word}
th:nth-child(1){width:22%}th:nth-child(2),th:nth-child(3){width:7%}th:nth-child(4){width:14%}th:nth-child(5){width:9%}
tr.pass .verdict{color:#116329}tr.fail .verdict{color:#a40e26;font-weight:600}tr.skip .verdict{color:#7d4e00}
.title{color:#57606a;font-size:12px}code{font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-all}
pre{white-space:pre-wrap;overflow-wrap:anywhere}
@media (max-width:40rem){body{margin:1rem}dl{grid-template-columns:minmax(0,1fr);gap:0}dd{margin:0 0 .5rem}}
</style>
</head>
<body>
<h1>${h(implementationWords(report))}</h1>
<p class="verdict-banner ${banner.css}">${banner.title}: ${h(verdictReason(report))}</p>
<dl>
<dt>Judged</dt><dd>${h(scopeWords(report))}</dd>
${report.implementation?.url !== undefined ? `<dt>Implementation URL</dt><dd>${h(report.implementation.url)}</dd>` : ""}
${report.target.imageDigest !== undefined ? `<dt>Image digest</dt><dd><code>${h(report.target.imageDigest)}</code></dd>` : ""}
${report.target.tlsFingerprint !== undefined ? `<dt>TLS certificate SHA-256</dt><dd><code>${h(report.target.tlsFingerprint)}</code></dd>` : ""}
<dt>Claims (declared, not judged)</dt><dd>${list(report.claims.map((c) => h(c)), "none")}</dd>
<dt>Gating</dt><dd>${h(gateWords(report))}</dd>
<dt>Selection</dt><dd>${h(selectionWords(report))}</dd>
<dt>Waivers</dt><dd>${list(report.waivers.map((w) => `<code>${h(w.id)}</code> (${h(w.pattern)}): ${h(w.reason)}`), "none")}</dd>
<dt>Not judged</dt><dd>${list(report.unjudged.map((u) => `<code>${h(u.id)}</code> [${u.severity}] ${UNJUDGED_WORDS[u.why]}${u.needs !== undefined && u.why === "needs" ? ` (needs <code>${h(u.needs)}</code>)` : ""}${u.claim !== undefined ? ` (claim <code>${h(u.claim)}</code>, declared, not judged)` : ""}: ${h(u.reason)}`), "none")}</dd>
<dt>Contract SHA-256</dt><dd><code>${h(report.contractSha256)}</code></dd>
<dt>Suite version</dt><dd>${h(report.suiteVersion)}</dd>
<dt>Seed</dt><dd>${report.seed}</dd>
<dt>Date</dt><dd>${h(report.startedAt)}</dd>
<dt>Duration</dt><dd>${(report.durationMs / 1000).toFixed(1)} s</dd>
<dt>Results</dt><dd>${count("pass")} passed, ${count("fail")} failed, ${count("skip")} skipped, ${count("error")} errored, ${count("expected-fail")} expected failures</dd>
</dl>
<table>
<thead><tr><th>Check</th><th>Severity</th><th>Profile</th><th>Spec</th><th>Verdict</th><th>Reason</th></tr></thead>
<tbody>
${decidingFirst(report.checks).map(row).join("\n")}
</tbody>
</table>
${report.containerLog ? `<h2>Container log (last ${report.containerLog.length} lines)</h2>\n<pre><code>${report.containerLog.map((l) => h(l)).join("\n")}</code></pre>` : ""}
</body>
</html>
`;
}

export function createHtmlReporter(file: ReportSink): Reporter {
  return {
    async onRunEnd(report) {
      await file.write(toHtml(report));
    },
  };
}
