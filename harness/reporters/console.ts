// The console reporter: what decides first. Gating failures with their reason and replay, then the findings that do
// not gate (marked so at the start of each line), the checks that could not judge, one line for the rest, the verdict
// last. --verbose lists every check; --quiet prints only the gating failures and the verdict.
import pc from "picocolors";
import type { CheckResult, Reporter, RunReport } from "../report.js";
import { forTerminal as t } from "../_internals/neutralise.js";
import { gateWords, scopeWords, verdictReason } from "./_internals/verdict-words.js";

export type ConsoleVerbosity = "quiet" | "normal" | "verbose";

export interface ConsoleReporterOptions {
  write(text: string): void;
  color: boolean;
  /** Default "normal". */
  verbosity?: ConsoleVerbosity;
}

const MARKS: Record<CheckResult["status"], string> = {
  pass: "PASS",
  fail: "FAIL",
  skip: "SKIP",
  error: "ERR ",
  "expected-fail": "XFAIL",
};

/** Gating checks left out by --only/--skip named on the console; the reports list them all. */
const NOT_RUN_SHOWN = 10;

const isFinding = (r: CheckResult) => r.status === "fail" || r.status === "error";

/** What every part of the console's output writes with: the colours, the sink, how much to say. */
interface ConsoleOut {
  c: ReturnType<typeof pc.createColors>;
  w: (text: string) => void;
  verbosity: NonNullable<ConsoleReporterOptions["verbosity"]>;
}

export function createConsoleReporter(options: ConsoleReporterOptions): Reporter {
  const con: ConsoleOut = {
    c: pc.createColors(options.color),
    w: options.write,
    verbosity: options.verbosity ?? "normal",
  };
  const { c, w, verbosity } = con;
  return {
    onRunStart({ total, target, seed }) {
      if (verbosity === "quiet") return;
      const where = [
        target.grpc && `grpc ${target.grpc}`,
        target.http && `http ${target.http}`,
        target.client && `client ${target.client}`,
        `contract ${target.contract}`,
      ]
        .filter(Boolean)
        .join(", ");
      w(`example-conformance: ${total} checks against ${t(where)} (seed ${seed})\n`);
    },
    onRunEnd(report: RunReport) {
      gatingFailures(con, report);
      if (verbosity !== "quiet") {
        findings(con, report);
        if (verbosity === "verbose") everyCheck(con, report);
        if (report.containerLog) {
          w(
            `\ncontainer log of ${t(report.target.image ?? "the image")} (last ${report.containerLog.length} lines):\n`,
          );
          for (const line of report.containerLog) w(`  ${t(line)}\n`);
        }
        summary(con, report);
        notJudged(con, report);
      }
      const line = `${report.verdict}: ${verdictReason(report)} (seed ${report.seed})\n`;
      const colour = report.verdict === "conformant" ? c.green : report.verdict === "not conformant" ? c.red : c.yellow;
      w(colour(line));
    },
  };
}

// Every piece of text below that a target or a user could have written goes through t(): one line, inert.
const head = ({ c }: ConsoleOut, r: CheckResult, mark: string) =>
  `${mark} ${r.id} ${c.dim(`[${r.severity} ${r.spec}]`)} ${t(r.message)}\n`;

function evidence({ w }: ConsoleOut, r: CheckResult): void {
  if (r.counterexample !== undefined) w(`     counterexample: ${t(r.counterexample)}\n`);
  for (const d of r.details ?? []) w(`     ${t(d)}\n`);
  if (r.replay !== undefined) w(`     replay: ${t(r.replay)}\n`);
  if (r.grpcurl !== undefined) w(`     grpcurl: ${t(r.grpcurl)}\n`);
  if (r.trace !== undefined) w(`     trace: ${t(r.trace)}\n`);
}

function gatingFailures(con: ConsoleOut, report: RunReport): void {
  for (const r of report.checks.filter((x) => x.gating)) {
    con.w(head(con, r, con.c.red(MARKS[r.status])));
    evidence(con, r);
  }
}

function findings(con: ConsoleOut, report: RunReport): void {
  const found = report.checks.filter((r) => isFinding(r) && !r.gating);
  if (found.length === 0) return;
  con.w(`\n${found.length} finding(s) that do not gate:\n`);
  for (const r of found) {
    con.w(head(con, r, con.c.yellow(`not gating: ${MARKS[r.status].trim()}`)));
    evidence(con, r);
  }
}

function everyCheck(con: ConsoleOut, report: RunReport): void {
  const { c, w } = con;
  w("\nevery check:\n");
  for (const r of report.checks) {
    const mark =
      r.status === "pass"
        ? c.green(MARKS.pass)
        : isFinding(r)
          ? (r.gating ? c.red : c.yellow)(MARKS[r.status])
          : c.yellow(MARKS[r.status]);
    w(head(con, r, mark));
  }
}

function notJudged({ w }: ConsoleOut, report: RunReport): void {
  for (const u of report.unjudged.filter((x) => x.why === "needs"))
    w(`could not judge without ${t(u.needs ?? "")}: ${u.id}: ${t(u.reason)}\n`);
  for (const u of report.unjudged.filter((x) => x.why === "claimed"))
    w(`not applicable by claim ${t(u.claim ?? "")} (declared, not judged): ${u.id}\n`);
  for (const u of report.unjudged.filter((x) => x.why === "skipped")) w(`could not judge: ${u.id}: ${t(u.reason)}\n`);
  const notRun = report.unjudged.filter((u) => u.why === "selection");
  if (notRun.length > 0) {
    const shown = notRun.slice(0, NOT_RUN_SHOWN).map((u) => u.id);
    const more = notRun.length - shown.length;
    w(`not run: ${shown.join(", ")}${more > 0 ? `, and ${more} more (all in the JSON report)` : ""}\n`);
  }
  for (const x of report.waivers) w(`waived: ${x.id} (${t(x.pattern)}): ${t(x.reason)}\n`);
  for (const r of report.checks.filter((x) => x.note !== undefined && x.status !== "expected-fail"))
    w(`${r.id}: ${t(r.note ?? "")}\n`);
}

function summary({ w, verbosity }: ConsoleOut, report: RunReport): void {
  const count = (s: CheckResult["status"]) => report.checks.filter((r) => r.status === s).length;
  const rest = [
    `${count("pass")} passed`,
    `${count("skip")} skipped`,
    `${count("expected-fail")} expected failures`,
  ].join(", ");
  const gating = report.checks.filter((r) => r.gating).length;
  const failed =
    `${gating} gating failure(s), ${report.checks.filter((r) => isFinding(r) && !r.gating).length} finding(s) that ` +
    `do not gate`;
  w(
    `\n${failed}; ${rest}${verbosity === "verbose" ? "" : " (--verbose lists every check)"} in ` +
      `${(report.durationMs / 1000).toFixed(1)} s\n`,
  );
  w(`judged: ${t(scopeWords(report))}; gating: ${gateWords(report)}\n`);
  const slowed = report.backpressure;
  if (slowed)
    w(
      `waited: the target asked the run to slow down (429, or 503 with Retry-After, or RESOURCE_EXHAUSTED with ` +
        `grpc-retry-pushback-ms) ${slowed.waits} time(s), ${(slowed.waitedMs / 1000).toFixed(1)} s in all; each ` +
        `request was sent again after the wait it asked for\n`,
    );
  for (const r of report.capabilities ?? [])
    w(
      `learned: ${t(r.resource)}: ${t(
        Object.entries(r.operations)
          .map(([op, found]) => `${op} ${found}`)
          .join("; "),
      )}\n`,
    );
  const identity = [
    report.implementation &&
      `implementation ${report.implementation.name}` +
        `${report.implementation.version !== undefined ? ` ${report.implementation.version}` : ""}`,
    report.target.imageDigest !== undefined && `image digest ${report.target.imageDigest}`,
    report.target.tlsFingerprint !== undefined && `TLS certificate SHA-256 ${report.target.tlsFingerprint}`,
  ].filter(Boolean);
  if (identity.length > 0) w(`certifies: ${t(identity.join("; "))}\n`);
  if (report.claims.length > 0)
    w(`claims (declared by the implementation, not judged): ${t(report.claims.join(", "))}\n`);
}
