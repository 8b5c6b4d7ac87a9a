// What the GitHub Action runs for `command: contract` (harness/ci/action.ts): lint of the contract and buf breaking
// against the pull request's base (a git ref) or, on a push, the commit before it, annotations on the .proto lines of
// each finding, the job summary, the step's outputs. Inputs come from the environment only (INPUT_CONTRACT, INPUT_BASE
// or GITHUB_BASE_REF, GITHUB_EVENT_NAME and GITHUB_EVENT_PATH, which the runner sets, INPUT_LINT).
import { execFile } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { breakingContract, lintContract, type ContractFinding } from "../buf/buf.js";
import { ConformanceError } from "../errors.js";
import { forAnnotationData, forAnnotationProperty, forMarkdown as md, forTerminal } from "../_internals/neutralise.js";

const git = promisify(execFile);
/** Bound on each git command: a repository that does not answer does not hold the job. */
const GIT_TIMEOUT_MS = 60_000;
/**
 * Past this, annotations are left out (GitHub shows at most 10 errors per step anyway); the summary counts them all.
 */
const MAX_ANNOTATIONS = 50;

type Level = "error" | "warning";
interface Gate {
  lint: ContractFinding[];
  breaking: ContractFinding[];
  /** Why breaking was not run (no base given, or the base has no contract there). */
  breakingSkipped?: string;
  /** What breaking compared with, as the summary says it. */
  comparedWith?: string;
}

/** What the contract is compared with: a ref the user or the pull request named, or the commit before a push. */
type Base = { kind: "ref"; ref: string } | { kind: "before"; commit: string } | { kind: "none"; why: string };

/** A push event's `before`: all zeros when the push created the branch (or the tag). */
function pushedBefore(): Base {
  const fallback: Base = { kind: "none", why: "no base: give the base input, or run on a pull_request or push event" };
  if (process.env.GITHUB_EVENT_NAME !== "push" || !process.env.GITHUB_EVENT_PATH) return fallback;
  let before: unknown;
  try {
    before = (JSON.parse(readFileSync(process.env.GITHUB_EVENT_PATH, "utf8")) as { before?: unknown }).before;
  } catch {
    return {
      kind: "none",
      why: "the push event's payload (GITHUB_EVENT_PATH) cannot be read, so there is no commit before to compare with",
    };
  }
  if (typeof before !== "string" || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(before))
    return { kind: "none", why: "the push event names no commit before it" };
  if (/^0+$/.test(before))
    return { kind: "none", why: "this push created the branch: there is no commit before it to compare with" };
  return { kind: "before", commit: before };
}

function baseFromEnvironment(): Base {
  const ref = process.env.INPUT_BASE || process.env.GITHUB_BASE_REF;
  return ref ? { kind: "ref", ref } : pushedBefore();
}

/** The contract folder as the base commit had it, written under `out`; undefined when the base had none. */
async function baseContract(dir: string, base: string, out: string): Promise<string | undefined> {
  const opts = { timeout: GIT_TIMEOUT_MS, maxBuffer: 1 << 20 };
  const top = await git("git", ["rev-parse", "--show-toplevel"], opts).then(
    (r) => r.stdout.trim(),
    () => {
      throw new ConformanceError(
        "usage",
        `base ${base}: the workspace is not a git checkout (run actions/checkout first)`,
      );
    },
  );
  // A pull request's checkout knows the base as origin/BASE; a local branch or any commit-ish is taken as it is.
  const remote = await git("git", ["rev-parse", "-q", "--verify", `refs/remotes/origin/${base}^{commit}`], opts).then(
    (r) => r.stdout.trim(),
    () => "",
  );
  const commit =
    remote ||
    (await git("git", ["rev-parse", "-q", "--verify", `${base}^{commit}`], opts).then(
      (r) => r.stdout.trim(),
      () => "",
    ));
  if (commit === "")
    throw new ConformanceError(
      "usage",
      `base ${base}: no such branch or commit in this checkout (fetch it: actions/checkout with fetch-depth: 0)`,
    );
  const sub = relative(top, resolve(dir)) || ".";
  const listed = (
    await git("git", ["ls-tree", "-r", "--name-only", commit, "--", sub], { ...opts, cwd: top })
  ).stdout.trim();
  if (listed === "") return undefined;
  // git archive | tar, as one bounded pipeline: the base's files, nothing of the working tree.
  await git(
    "bash",
    ["-o", "pipefail", "-c", 'git archive "$1" -- "$2" | tar -x -C "$3"', "archive", commit, sub, out],
    { ...opts, cwd: top },
  );
  return join(out, sub);
}

/**
 * The commit before a push is not in a shallow checkout (actions/checkout fetches one commit by default): fetched
 * alone, as buf-action has buf fetch it. Undefined when it cannot be had (a force push dropped it, no remote).
 */
async function fetchBefore(commit: string): Promise<string | undefined> {
  const opts = { timeout: GIT_TIMEOUT_MS, maxBuffer: 1 << 20 };
  const has = () =>
    git("git", ["rev-parse", "-q", "--verify", `${commit}^{commit}`], opts).then(
      () => true,
      () => false,
    );
  if (await has()) return commit;
  await git("git", ["fetch", "-q", "--no-tags", "--depth=1", "origin", commit], opts).catch(() => undefined);
  return (await has()) ? commit : undefined;
}

async function runGate(dir: string, base: Base): Promise<Gate> {
  const lint = (await lintContract({ dir, format: "json" })).findings;
  if (base.kind === "none") return { lint, breaking: [], breakingSkipped: base.why };
  let ref: string;
  let comparedWith: string;
  if (base.kind === "before") {
    const found = await fetchBefore(base.commit);
    if (found === undefined)
      return {
        lint,
        breaking: [],
        breakingSkipped:
          `the commit before this push, ${base.commit.slice(0, 12)}, is neither in this checkout nor on the remote ` +
          `(a force push?): nothing to compare with`,
      };
    ref = found;
    comparedWith = `${base.commit.slice(0, 12)}, the commit before this push`;
  } else {
    ref = base.ref;
    comparedWith = base.ref;
  }
  const out = mkdtempSync(join(tmpdir(), "contract-base-"));
  try {
    const against = await baseContract(dir, ref, out);
    if (against === undefined)
      return { lint, breaking: [], breakingSkipped: `the base ${comparedWith} has no contract in ${dir}` };
    return { lint, breaking: (await breakingContract({ dir, against, format: "json" })).findings, comparedWith };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** `::error file=proto/example/example.proto,line=7,col=1,title=FIELD_NO_DELETE::...`, its path from the workspace. */
function annotation(level: Level, kind: string, dir: string, f: ContractFinding): string {
  const file = relative(process.cwd(), resolve(dir, f.path));
  const title = `title=${forAnnotationProperty(`${kind} ${forTerminal(f.rule)}`)}`;
  // A finding in no file (a deleted one) is annotated on the job, not on a line.
  const props =
    f.path === "" ? title : `file=${forAnnotationProperty(forTerminal(file))},line=${f.line},col=${f.column},${title}`;
  return `::${level} ${props}::${forAnnotationData(forTerminal(f.message))}\n`;
}

function summary(verdict: string, dir: string, gate: Gate): string {
  const where = (f: ContractFinding) =>
    `${relative(process.cwd(), resolve(dir, f.path)) || "."}${f.path !== "" ? `:${f.line}` : ""}`;
  const row = (kind: string, f: ContractFinding) => `| ${kind} | ${md(where(f))} | ${md(f.rule)} | ${md(f.message)} |`;
  const rows = [...gate.breaking.map((f) => row("breaking", f)), ...gate.lint.map((f) => row("lint", f))];
  return [
    `### example-conformance contract: ${verdict}`,
    "",
    `${gate.breaking.length} breaking change(s), ${gate.lint.length} lint ` +
      `finding(s)${gate.breakingSkipped !== undefined ? `; breaking not checked: ${md(gate.breakingSkipped)}` : ""}`,
    ...(gate.comparedWith !== undefined ? ["", `Compared with ${md(gate.comparedWith)}.`] : []),
    ...(rows.length > 0 ? ["", "| kind | where | rule | message |", "|---|---|---|---|", ...rows] : []),
    "",
  ].join("\n");
}

/** Runs the gate in the working directory, writes the annotations, outputs and summary, and returns the exit code. */
export async function contractGate(): Promise<number> {
  const dir = process.env.INPUT_CONTRACT || "proto";
  const base = baseFromEnvironment();
  const lintLevel: Level = process.env.INPUT_LINT === "warning" ? "warning" : "error";
  let code: number;
  let verdict: string;
  let text: string;
  try {
    const gate = await runGate(dir, base);
    const lintFails = lintLevel === "error" && gate.lint.length > 0;
    code = gate.breaking.length > 0 || lintFails ? 1 : 0;
    verdict = gate.breaking.length > 0 ? "breaking" : lintFails ? "lint-violations" : "compatible";
    const lines = [
      ...gate.breaking.map((f) => annotation("error", "breaking", dir, f)),
      ...gate.lint.map((f) => annotation(lintLevel, "lint", dir, f)),
    ];
    process.stdout.write(lines.slice(0, MAX_ANNOTATIONS).join(""));
    // Never a silent "compatible": the job shows that nothing was compared, and why.
    if (gate.breakingSkipped !== undefined)
      process.stdout.write(
        `::warning title=${forAnnotationProperty("example-conformance contract: breaking not checked")}` +
          `::${forAnnotationData(forTerminal(gate.breakingSkipped))}\n`,
      );
    text = summary(verdict, dir, gate);
  } catch (reason) {
    const err = ConformanceError.from(reason);
    code = err.exitCode;
    verdict = code === 2 ? "usage-error" : "internal-error";
    process.stderr.write(
      `example-conformance: ${err.code === "internal" ? "internal error: " : ""}${forTerminal(err.message)}\n`,
    );
    text = `### example-conformance contract: ${verdict}\n\n${md(err.message)}\n`;
  }
  if (process.env.GITHUB_OUTPUT)
    appendFileSync(
      process.env.GITHUB_OUTPUT,
      `verdict=${verdict}\nexit-code=${code}\nreport-json=\nreport-junit=\nreport-html=\n`,
    );
  if (process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, text);
  else process.stdout.write(text);
  return code;
}
