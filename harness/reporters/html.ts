// The HTML reporter: one self-contained certification page (no scripts, no external assets) that reads on a phone,
// a desktop and paper. What decides comes first: the verdict, the gating failures (each ID once, its reason once, the
// command that reproduces it, a link to its trace), the findings that do not gate; then what was not judged, the
// run's particulars, the signed attestation when the run wrote one, the passes, and the skips, those of an interface
// not asked for folded into one line per area. Its banner says "Conformant" only for a complete run without waivers.
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { shellQuote } from "../_internals/shell-quote.js";
import { toStatement } from "../attest/statement.js";
import type { Area, Severity } from "../check.js";
import type { CheckResult, Reporter, RunReport, Verdict } from "../report.js";
import { forHtml as h } from "../_internals/neutralise.js";
import type { ReportSink } from "./_internals/report-file.js";
import { gateWords, scopeWords, selectionWords, verdictReason } from "./_internals/verdict-words.js";

/**
 * Target and prose text for the page: neutralised and escaped (forHtml), and each token a browser would break after
 * a hyphen, slash or bar (`--data-binary`, `/messages/0f-3a`, `grpc.limits.over-limit`) kept whole in a box that
 * wraps it only when it cannot fit a line by itself.
 */
const words = (text: string): string =>
  h(text).replace(/[^\s]*[-/|\u2010-\u2014][^\s]*/g, (token) => `<span class="w">${token}</span>`);

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

const AREA_NAMES: Record<Area, string> = {
  grpc: "gRPC, Connect and gRPC-Web",
  http: "HTTP",
  contract: "contract",
  client: "client",
};

export interface HtmlOptions {
  /**
   * The folder the page is written to, so that a trace file's link is relative to the page (a report folder moved
   * or uploaded whole keeps its links). Without it (the page on stdout) a trace's path is linked as the JSON names it.
   */
  pageDir?: string;
}

/**
 * A trace file's path as a link target: relative to the page when the page's folder is known, every segment
 * percent-encoded (so no segment can be read as a scheme, `javascript:` or otherwise), an absolute path as a file URL.
 */
export function traceHref(trace: string, pageDir?: string): string {
  const path = pageDir !== undefined ? relative(pageDir, resolve(trace)) : trace;
  const segments = path.split(sep === "\\" ? /[\\/]/ : "/").map(encodeURIComponent);
  return isAbsolute(path) ? `file://${segments.join("/")}` : segments.join("/");
}

const isFinding = (r: CheckResult): boolean => r.status === "fail" || r.status === "error";

/** Commands and evidence: a block that scrolls sideways on a narrow screen rather than break inside a token. */
const block = (label: string, lines: readonly string[]): string =>
  lines.length === 0
    ? ""
    : `<p class="label">${label}</p><pre><code>${lines.map((l) => words(l)).join("\n")}</code></pre>`;

/** Shortest evidence line taken as said already when the reason holds it; a shorter one is dropped only when equal. */
const SAID_MIN = 16;

/** The evidence lines that add to the reason: a line the reason already says in full is not said again. */
function evidence(r: CheckResult): string[] {
  const reason = r.message.trim();
  const said = (line: string) => line === "" || line === reason || (line.length >= SAID_MIN && reason.includes(line));
  return (r.details ?? []).filter((d) => !said(d.trim()));
}

/** One failure or finding: ID once, what it enforces, the reason once, then what reproduces it and its trace. */
function finding(r: CheckResult, options: HtmlOptions): string {
  const status = r.status === "error" ? "error" : "fail";
  return `<article class="finding ${r.gating ? "gating" : "other"}">
<h3><code>${words(r.id)}</code> <span class="status">${status}</span></h3>
<p class="meta">${r.severity} · ${r.profile} · ${words(r.spec)} · ${words(r.title)}</p>
<p class="reason">${words(r.message)}</p>
${[
  block("replay", r.replay !== undefined ? [r.replay] : []),
  block("grpcurl", r.grpcurl !== undefined ? [r.grpcurl] : []),
  block("counterexample", r.counterexample !== undefined ? [r.counterexample] : []),
  block("evidence", evidence(r)),
].join("")}
${r.trace !== undefined ? traceLink(r.trace, options.pageDir) : ""}${r.note ? `<p>${words(r.note)}</p>` : ""}
</article>`;
}

const traceLink = (trace: string, pageDir: string | undefined): string =>
  `<p class="trace">trace: <a href="${h(traceHref(trace, pageDir))}">${words(trace)}</a></p>`;

const containerLog = (log: readonly string[]): string =>
  section(
    "log",
    `Container log (last ${log.length} lines)`,
    `<pre><code>${log.map((l) => words(l)).join("\n")}</code></pre>`,
  );

const section = (id: string, title: string, body: string): string =>
  `<section id="${id}">\n<h2>${title}</h2>\n${body}\n</section>`;

const list = (items: readonly string[], none: string): string =>
  items.length === 0 ? none : `<ul>${items.map((i) => `<li>${i}</li>`).join("")}</ul>`;

/** "my-service 1.4.2: Example Message Service conformance", or the plain title when the run names no implementation. */
function implementationWords(report: RunReport): string {
  const i = report.implementation;
  return i
    ? `${i.name}${i.version !== undefined ? ` ${i.version}` : ""}: Example Message Service conformance`
    : "Example Message Service conformance";
}

const count = (report: RunReport, s: CheckResult["status"]): number =>
  report.checks.filter((c) => c.status === s).length;

function findings(report: RunReport, options: HtmlOptions): string {
  const gating = report.checks.filter((r) => r.gating);
  const other = report.checks.filter((r) => isFinding(r) && !r.gating);
  // On paper only, the gating failures' IDs in one line under the heading, so that page 1 names every one of them
  // even when their evidence runs past it; on a screen the cards follow at once and the line would say them twice.
  const index =
    gating.length > 1 ? `<p class="print-only">${gating.map((r) => `<code>${words(r.id)}</code>`).join(", ")}</p>` : "";
  return [
    gating.length > 0
      ? section(
          "gating",
          `Gating failures (${gating.length})`,
          index + gating.map((r) => finding(r, options)).join("\n"),
        )
      : "",
    other.length > 0
      ? section(
          "findings",
          `Findings that do not gate (${other.length})`,
          other.map((r) => finding(r, options)).join("\n"),
        )
      : "",
  ].join("\n");
}

/** Each waiver once: its ID, the pattern that matched it when that is not the ID itself, why, and what failed. */
function waived(report: RunReport): string {
  if (report.waivers.length === 0) return "";
  const items = report.waivers.map((w) => {
    const r = report.checks.find((c) => c.id === w.id);
    const pattern = w.pattern !== w.id ? ` (waived by <code>${words(w.pattern)}</code>)` : "";
    const expires = w.expires !== undefined ? `; expires ${words(w.expires)}` : "";
    return (
      `<code>${words(w.id)}</code>${pattern}: ` +
      `${words(w.reason)}${expires}${r !== undefined ? `<div class="meta">what failed: ${words(r.message)}</div>` : ""}`
    );
  });
  return section("waived", `Waived failures (${report.waivers.length})`, list(items, ""));
}

/** A claimed check's reason begins by saying the claim (the result's message does): the bullet says it once. */
const CLAIM_PREFIX = /^not applicable by claim \([^)]*\); /;

function unjudged(report: RunReport): string {
  if (report.unjudged.length === 0) return "";
  const items = report.unjudged.map(
    (u) =>
      `<code>${words(u.id)}</code> [${u.severity}] ` +
      `${UNJUDGED_WORDS[u.why]}` +
      `${u.needs !== undefined && u.why === "needs" ? ` (needs <code>${words(u.needs)}</code>)` : ""}` +
      `${u.claim !== undefined ? ` (claim <code>${words(u.claim)}</code>, declared, not judged)` : ""}: ` +
      `${words(u.why === "claimed" ? u.reason.replace(CLAIM_PREFIX, "") : u.reason)}`,
  );
  return section("unjudged", `Gating checks not judged (${report.unjudged.length})`, list(items, ""));
}

/** The run's particulars, what a certificate records: each row a term and its value, a row without a value left out. */
function particulars(report: RunReport): string {
  const t = report.target;
  const code = (text: string | undefined) => (text === undefined ? undefined : `<code>${words(text)}</code>`);
  const rows: [string, string | undefined][] = [
    ["Judged", words(scopeWords(report))],
    ["Implementation URL", report.implementation?.url !== undefined ? words(report.implementation.url) : undefined],
    ["Image digest", code(t.imageDigest)],
    ["TLS certificate SHA-256", code(t.tlsFingerprint)],
    [
      "Claims (declared, not judged)",
      list(
        report.claims.map((c) => words(c)),
        "none",
      ),
    ],
    ["Gating", words(gateWords(report))],
    ["Selection", words(selectionWords(report))],
    ["Waivers", report.waivers.length > 0 ? `${report.waivers.length}, listed above` : "none"],
    ["Contract SHA-256", code(report.contractSha256)],
    ["Suite version", words(report.suiteVersion)],
    ["Seed", String(report.seed)],
    ["Date", words(report.startedAt)],
    ["Duration", `${(report.durationMs / 1000).toFixed(1)} s`],
    [
      "Results",
      `${count(report, "pass")} passed, ${count(report, "fail")} failed, ${count(report, "skip")} skipped, ` +
        `${count(report, "error")} errored, ${count(report, "expected-fail")} expected failures`,
    ],
  ];
  const shown = rows.filter((r): r is [string, string] => r[1] !== undefined);
  return section(
    "run",
    "This run",
    `<dl>\n${shown.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join("\n")}\n</dl>`,
  );
}

/**
 * The signed attestation: the file, the key that signed it, and what its statement binds, read from the subject as
 * toStatement writes it (the very function the signed statement is made from, so the page cannot say other than the
 * file), then the commands that verify it. Names and addresses may come from the target: escaped as all else is.
 */
function attested(report: RunReport): string {
  const a = report.attestation;
  if (a === undefined) return "";
  const statement = toStatement(report);
  const subject = statement.subject[0];
  const notes = (subject?.annotations ?? {}) as Record<string, unknown>;
  const code = (text: string) => `<code>${words(text)}</code>`;
  const note = (key: string) => (typeof notes[key] === "string" ? code(notes[key]) : undefined);
  const p = statement.predicate;
  const rows: [string, string | undefined][] = [
    ["File", code(a.file)],
    [
      "Signing key",
      `ed25519, fingerprint ${code(a.keyId)} <span class="meta">(its key ID: the SHA-256 of the public key, as ` +
        `the envelope and in-toto name it)</span>`,
    ],
    ["Subject", subject !== undefined ? code(subject.name) : undefined],
    [
      "Subject digest",
      subject?.digest !== undefined
        ? Object.entries(subject.digest)
            .map(([k, v]) => code(`${k}:${v}`))
            .join(" ")
        : undefined,
    ],
    ["Bound by", typeof notes.boundBy === "string" ? words(notes.boundBy) : undefined],
    ["Version", note("version")],
    ["gRPC", note("grpc")],
    ["HTTP", note("http")],
    ["Image", note("image")],
    ["TLS certificate SHA-256", note("tlsCertificateSha256")],
    [
      "Result",
      words(
        `${p.result}: ${p.passedTests.length} passed, ${p.warnedTests.length} warned, ${p.failedTests.length} ` +
          `failed; and the verdict, claims, waivers, seed and contract SHA-256 this page shows`,
      ),
    ],
  ];
  const shown = rows.filter((r): r is [string, string] => r[1] !== undefined);
  const verify = block("verify it with the public half of the signing key", [
    "openssl pkey -in KEY.pem -pubout -out key.pub.pem",
    `example-conformance verify ${shellQuote(a.file)} --key key.pub.pem`,
  ]);
  const intro =
    "<p>This run is signed: an in-toto Statement (test-result) in a DSSE envelope. It holds only if no byte of " +
    "the file changed and the key is the one below.</p>";
  return section(
    "attestation",
    "Signed attestation",
    `${intro}\n<dl>\n${shown.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join("\n")}\n</dl>\n${verify}`,
  );
}

function passed(report: RunReport): string {
  const ok = report.checks.filter((r) => r.status === "pass");
  if (ok.length === 0) return "";
  const items = ok.map(
    (r) =>
      `<code>${words(r.id)}</code> <span ` +
      `class="meta">${severityWord(r.severity)}${words(r.title)}</span>${r.note ? `<div>${words(r.note)}</div>` : ""}`,
  );
  return section(
    "passed",
    `Passed (${ok.length})`,
    `<ul class="compact">${items.map((i) => `<li>${i}</li>`).join("")}</ul>`,
  );
}

const severityWord = (s: Severity): string => (s === "SHOULD" ? "SHOULD · " : "");

/**
 * The skips: those of an interface the run was not asked to judge (area not in its scope), and every other skip that
 * gives the same reason, fold into one line per area with their IDs behind a disclosure; the rest one line each.
 * Gating checks not judged are listed above, with what would judge them, and not again here.
 */
function skipped(report: RunReport): string {
  const listedAbove = new Set(report.unjudged.map((u) => u.id));
  const skips = report.checks.filter((r) => r.status === "skip" && !listedAbove.has(r.id));
  if (skips.length === 0) return "";
  const asked = new Set<Area>([...report.scope.interfaces, "contract"]);
  const folded = new Map<Area, { reasons: Set<string>; ids: string[] }>();
  for (const r of skips.filter((s) => !asked.has(s.area))) {
    const f = folded.get(r.area) ?? { reasons: new Set<string>(), ids: [] };
    folded.set(r.area, f);
    f.reasons.add(r.message);
  }
  const areaOf = (r: CheckResult): Area | undefined =>
    !asked.has(r.area) ? r.area : [...folded].find(([, f]) => f.reasons.has(r.message))?.[0];
  const single: string[] = [];
  for (const r of skips) {
    const area = areaOf(r);
    if (area !== undefined) folded.get(area)?.ids.push(r.id);
    else single.push(`<code>${words(r.id)}</code>: ${words(r.message)}`);
  }
  const lines = [...folded].map(
    ([area, f]) =>
      `<details><summary>${AREA_NAMES[area]}: not asked for, ${f.ids.length} check(s) skipped: ` +
      `${[...f.reasons].map((m) => words(m)).join("; ")}</summary><p ` +
      `class="meta">${f.ids.map((id) => `<code>${words(id)}</code>`).join(", ")}</p></details>`,
  );
  return section(
    "skipped",
    `Skipped (${skips.length})`,
    [...lines, single.length > 0 ? list(single, "") : ""].join("\n"),
  );
}

const STYLE = `
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;padding:1.5rem 2rem;color:#1b1f24;max-width:72rem;
overflow-wrap:break-word}
h1{font-size:1.6rem;margin:0 0 .5rem;line-height:1.25}
h2{font-size:1.15rem;margin:1.6rem 0 .6rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
h3{font-size:1rem;margin:0 0 .2rem;font-weight:600}
.verdict-banner{padding:.5rem .9rem;border-radius:6px;font-weight:600;margin:.4rem 0}
.ok{background:#dafbe1;color:#116329}.bad{background:#ffebe9;color:#a40e26}.warn{background:#fff8c5;color:#7d4e00}
.scope{color:#57606a;margin:.2rem 0}
.finding{border:1px solid #d0d7de;border-left:4px solid #a40e26;border-radius:6px;padding:.6rem .8rem;margin:.6rem 0}
.finding.other{border-left-color:#bf8700}
.finding p{margin:.2rem 0}.status{color:#a40e26;font-weight:600;font-size:.85rem}.other .status{color:#7d4e00}
.meta{color:#57606a;font-size:.85rem}.label{color:#57606a;font-size:.8rem;margin:.5rem 0 0}
code{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.w,:not(pre)>code{display:inline-block;max-width:100%;overflow-wrap:anywhere}
pre{margin:.1rem 0 .3rem;padding:.4rem .6rem;background:#f6f8fa;border-radius:4px;white-space:pre;overflow-x:auto;
max-width:100%}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem 1rem}
dt{font-weight:600}dd{margin:0;min-width:0}
ul{padding-left:1.2rem;margin:.3rem 0}li{margin:.15rem 0}ul.compact li{margin:0}
details{margin:.3rem 0}summary{cursor:pointer}
.print-only{display:none}
@media (max-width:40rem){
body{padding:1rem;font-size:14px}dl{grid-template-columns:minmax(0,1fr);gap:0}dd{margin:0 0 .5rem}
}
@media print{
@page{size:A4;margin:12mm}
.print-only{display:block}.verdict-banner{print-color-adjust:exact;-webkit-print-color-adjust:exact}
body{padding:0;max-width:none;font-size:10pt}h1{font-size:14pt}h2{font-size:11pt;margin-top:1rem}
.finding{break-inside:avoid;padding:.3rem .5rem;margin:.3rem 0}
code{font-size:8pt}
pre{white-space:pre-wrap;overflow:visible;background:none;padding:0 0 0 .5rem;border-left:2px solid #d0d7de}
details>summary{list-style:none}
}`;

export function toHtml(report: RunReport, options: HtmlOptions = {}): string {
  const banner = BANNER[report.verdict];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>example-conformance: ${h(report.verdict)}</title>
<style>${STYLE}
</style>
</head>
<body>
<h1>${words(implementationWords(report))}</h1>
<p class="verdict-banner ${banner.css}">${banner.title}: ${words(verdictReason(report))}</p>
<p class="scope">${words(scopeWords(report))}; gating: ${words(gateWords(report))}; seed ${report.seed}</p>
${findings(report, options)}
${waived(report)}
${unjudged(report)}
${particulars(report)}
${attested(report)}
${passed(report)}
${skipped(report)}
${report.containerLog ? containerLog(report.containerLog) : ""}
</body>
</html>
`;
}

/** A report file (ReportFile) knows its path: the page's trace links are then relative to its folder. */
export function createHtmlReporter(file: ReportSink & { readonly path?: string }): Reporter {
  const options: HtmlOptions = file.path !== undefined ? { pageDir: dirname(resolve(file.path)) } : {};
  return {
    async onRunEnd(report) {
      await file.write(toHtml(report, options));
    },
  };
}
