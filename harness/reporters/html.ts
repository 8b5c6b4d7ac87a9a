// The HTML reporter: one self-contained certification page (no scripts, no external assets).
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { CheckResult, Reporter, RunReport } from "../report.js";

const escape = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

const VERDICT_CLASS: Record<CheckResult["status"], string> = {
  pass: "pass",
  fail: "fail",
  error: "fail",
  skip: "skip",
  "expected-fail": "skip",
};

function row(r: CheckResult): string {
  const extra = [
    r.counterexample !== undefined ? `<div>counterexample: <code>${escape(r.counterexample)}</code></div>` : "",
    ...(r.details ?? []).map((d) => `<div><code>${escape(d)}</code></div>`),
    r.status === "fail" || r.status === "error" ? `<div>replay: <code>${escape(r.replay)}</code></div>` : "",
    r.note ? `<div>${escape(r.note)}</div>` : "",
  ].join("");
  const verdict = r.status + (r.gating ? "" : r.status === "fail" || r.status === "error" ? " (not gating)" : "");
  return `<tr class="${VERDICT_CLASS[r.status]}"><td><code>${escape(r.id)}</code><div class="title">${escape(r.title)}</div></td><td>${r.severity}</td><td>${r.profile}</td><td>${escape(r.spec)}</td><td class="verdict">${escape(verdict)}</td><td>${escape(r.message)}${extra}</td></tr>`;
}

export function toHtml(report: RunReport): string {
  const conformant = report.exitCode === 0;
  const count = (s: CheckResult["status"]) => report.checks.filter((c) => c.status === s).length;
  const target = [report.target.image && `image ${report.target.image}`, report.target.grpc && `gRPC ${report.target.grpc}`, report.target.http && `HTTP ${report.target.http}`]
    .filter(Boolean)
    .join(", ");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>example-conformance: ${conformant ? "conformant" : "not conformant"}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1f24}
h1{margin:0 0 .5rem}.verdict-banner{padding:.6rem 1rem;border-radius:6px;font-weight:600;display:inline-block}
.ok{background:#dafbe1;color:#116329}.bad{background:#ffebe9;color:#a40e26}
dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}dt{font-weight:600}dd{margin:0}
table{border-collapse:collapse;width:100%;margin-top:1rem}th,td{border-bottom:1px solid #d0d7de;padding:.4rem;text-align:left;vertical-align:top}
tr.pass .verdict{color:#116329}tr.fail .verdict{color:#a40e26;font-weight:600}tr.skip .verdict{color:#7d4e00}
.title{color:#57606a;font-size:12px}code{font-size:12px;word-break:break-all}
</style>
</head>
<body>
<h1>Example Message Service conformance</h1>
<p class="verdict-banner ${conformant ? "ok" : "bad"}">${conformant ? "Conformant: no gating check failed" : "Not conformant: a gating check failed"}</p>
<dl>
<dt>Target</dt><dd>${escape(target || "contract only")}</dd>
<dt>Contract</dt><dd>${escape(report.target.contract)}</dd>
<dt>Contract SHA-256</dt><dd><code>${report.contractSha256}</code></dd>
<dt>Suite version</dt><dd>${escape(report.suiteVersion)}</dd>
<dt>Seed</dt><dd>${report.seed}</dd>
<dt>Date</dt><dd>${escape(report.startedAt)}</dd>
<dt>Duration</dt><dd>${(report.durationMs / 1000).toFixed(1)} s</dd>
<dt>Results</dt><dd>${count("pass")} passed, ${count("fail")} failed, ${count("skip")} skipped, ${count("error")} errored, ${count("expected-fail")} expected failures</dd>
</dl>
<table>
<thead><tr><th>Check</th><th>Severity</th><th>Profile</th><th>Spec</th><th>Verdict</th><th>Reason</th></tr></thead>
<tbody>
${report.checks.map(row).join("\n")}
</tbody>
</table>
${report.containerLog ? `<h2>Container log (last ${report.containerLog.length} lines)</h2>\n<pre><code>${escape(report.containerLog.join("\n"))}</code></pre>` : ""}
</body>
</html>
`;
}

export function createHtmlReporter(file: string): Reporter {
  return {
    async onRunEnd(report) {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, toHtml(report));
    },
  };
}
