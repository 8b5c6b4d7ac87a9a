// Runs buf lint and buf breaking on a contract, with the product's buf check plugin on PATH.
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { ConformanceError } from "../errors.js";
import { BUF_CONFIG, CONTRACT_DIR, PACKAGE_ROOT } from "../../common/paths.js";

/** buf's formats; every path in them is shown from the working directory (see relativePaths). */
export const BUF_FORMATS = ["text", "json", "junit", "github-actions", "msvs", "gitlab-code-quality"] as const;
export type BufFormat = (typeof BUF_FORMATS)[number];
/** lint also writes buf's config-ignore-yaml: the `ignore_only` entries that would silence every finding. */
export const LINT_FORMATS = [...BUF_FORMATS, "config-ignore-yaml"] as const;
export type LintFormat = (typeof LINT_FORMATS)[number];

/** One lint violation or breaking change, as data. */
export interface ContractFinding {
  /**
   * The file, relative to the contract's folder: `example/example.proto`; "" for a finding in no file (a deleted one).
   */
  path: string;
  line: number;
  column: number;
  /** The rule's ID: GO_PACKAGE_DEFINED, FIELD_NO_DELETE, ... */
  rule: string;
  message: string;
}

export interface BufRun {
  /** 0: no finding; 1: findings (lint violations or breaking changes). */
  exitCode: 0 | 1;
  /** buf's report in the chosen format. */
  output: string;
  /** Every finding as data, whatever the format. */
  findings: ContractFinding[];
}

export interface LintOptions {
  /** The folder holding the contract; default the shipped one. */
  dir?: string;
  format?: LintFormat;
}

export interface BreakingOptions {
  dir: string;
  /** A folder, or any buf input (for example `.git#branch=main,subdir=proto`); default the shipped contract. */
  against?: string;
  format?: BufFormat;
}

interface Spawned {
  code: number;
  stdout: string;
  bytes: Uint8Array;
  stderr: string;
}

const require = createRequire(import.meta.url);

/** @bufbuild/buf's optional package holding the binary, by `${process.platform} ${process.arch}` (its own table). */
const BUF_PLATFORM_PACKAGES: Record<string, string> = {
  "linux x64": "@bufbuild/buf-linux-x64",
  "linux arm64": "@bufbuild/buf-linux-aarch64",
  "linux arm": "@bufbuild/buf-linux-armv7",
  "darwin x64": "@bufbuild/buf-darwin-x64",
  "darwin arm64": "@bufbuild/buf-darwin-arm64",
  "win32 x64": "@bufbuild/buf-win32-x64",
  "win32 arm64": "@bufbuild/buf-win32-arm64",
};

/** `buf` on PATH (what bufbuild/buf-action with setup_only puts there), or undefined. */
function bufOnPath(): string | undefined {
  const name = process.platform === "win32" ? "buf.exe" : "buf";
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/**
 * The buf binary for this platform, from the optional package npm installed beside @bufbuild/buf, so that each run
 * starts buf itself and not first a node process that finds it (the package's own bin/buf, kept as the fallback;
 * its install script, which would put the binary in its place, is not run: see allowScripts). With no node_modules
 * (the GitHub Action's bundle), `buf` on PATH; with none there either, one line saying how to get it.
 */
function bufBinary(): string {
  const platformPackage = BUF_PLATFORM_PACKAGES[`${process.platform} ${process.arch}`];
  if (platformPackage !== undefined) {
    try {
      return join(
        dirname(require.resolve(`${platformPackage}/package.json`)),
        "bin",
        process.platform === "win32" ? "buf.exe" : "buf",
      );
    } catch {
      // Not installed for this platform: the shim below finds what is.
    }
  }
  try {
    return join(dirname(require.resolve("@bufbuild/buf/package.json")), "bin", "buf");
  } catch {
    // No npm package: buf on PATH, below.
  }
  const onPath = bufOnPath();
  if (onPath !== undefined) return onPath;
  throw new ConformanceError(
    "usage",
    "buf is not installed: add bufbuild/buf-action with setup_only: true before this step (or put buf on PATH)",
  );
}

function pluginPath(): string {
  return join(PACKAGE_ROOT, "proto", "plugin");
}

function runBuf(args: readonly string[]): Promise<Spawned> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(bufBinary(), args, {
      env: { ...process.env, PATH: [pluginPath(), process.env.PATH ?? ""].join(delimiter) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", (err) => reject(new ConformanceError("internal", `cannot run buf: ${err.message}`)));
    child.on("close", (code) => {
      const bytes = Buffer.concat(out);
      resolvePromise({ code: code ?? 1, stdout: bytes.toString("utf8"), bytes: new Uint8Array(bytes), stderr });
    });
  });
}

interface Diagnostic {
  /** Absent for a finding buf places in no file, such as FILE_NO_DELETE. */
  path?: string;
  start_line: number;
  start_column: number;
  /** The rule's ID, e.g. GO_PACKAGE_DEFINED or FIELD_NO_DELETE (for a compile error, COMPILE). */
  type: string;
  message: string;
  plugin?: string;
}

function parseDiagnostics(jsonLines: string): Diagnostic[] {
  return jsonLines
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l) as Diagnostic);
}

function bufFailure(run: Spawned): string {
  const line = run.stderr.split("\n").find((l) => l.trim() !== "") ?? `buf exited with ${run.code}`;
  return line.replace(/^Failure:\s*/, "");
}

/** A folder the user named: it must exist; its own buf.yaml wins, else the shipped configuration applies. */
function contractInput(dir: string, role: string): { input: string; config: string[] } {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new ConformanceError("usage", `${role} ${dir}: no such directory`);
  if (!statSync(abs).isDirectory()) throw new ConformanceError("usage", `${role} ${dir}: not a directory`);
  return { input: abs, config: existsSync(join(abs, "buf.yaml")) ? [] : [BUF_CONFIG] };
}

/** Compiles the input first, so that a proto that does not compile is a usage error (2), not a finding (1). */
async function assertCompiles(input: string, config: string[], role: string): Promise<void> {
  const args = ["build", input, "--error-format", "json", "-o", "/dev/null"];
  if (config[0]) args.push("--config", config[0]);
  const run = await runBuf(args);
  if (run.code === 0) return;
  const diags = parseDiagnostics(`${run.stdout}\n${run.stderr}`);
  const first = diags[0];
  if (!first) throw new ConformanceError("usage", `${role} ${input}: ${bufFailure(run)}`);
  const more = diags.length > 1 ? ` (and ${diags.length - 1} more)` : "";
  const where = first.path !== undefined ? `${first.path}:${first.start_line}:${first.start_column}: ` : "";
  throw new ConformanceError(
    "usage",
    relativePaths(`${role} does not compile: ${where}${first.message}${more}`, [input]),
  );
}

/** The compiled contract as a binary FileDescriptorSet of its own files (no imports, no source info). */
export async function buildImage(dir: string): Promise<Uint8Array> {
  const { input, config } = contractInput(dir, "contract");
  const args = ["build", input, "--exclude-imports", "--exclude-source-info", "-o", "-#format=binpb"];
  if (config[0]) args.push("--config", config[0]);
  const run = await runBuf(args);
  if (run.code === 0) return run.bytes;
  // Only a contract that fails pays for the second build that reads buf's diagnostics (each costs ~0.2 s).
  await assertCompiles(input, config, "contract");
  throw new ConformanceError("usage", bufFailure(run));
}

function finish(run: Spawned): Omit<BufRun, "findings"> {
  // buf exits 100 when it found something, 0 when clean, anything else when it could not run.
  if (run.code === 0) return { exitCode: 0, output: run.stdout };
  if (run.code === 100) return { exitCode: 1, output: run.stdout };
  throw new ConformanceError("usage", bufFailure(run));
}

/** A finding whose file is relative to the contract's folder (buf names it from the absolute input). */
const toFinding = (d: Diagnostic, input: string): ContractFinding => ({
  path: d.path === undefined ? "" : isAbsolute(d.path) ? relative(input, d.path) : d.path,
  line: d.start_line,
  column: d.start_column,
  rule: d.type,
  message: d.message,
});

const xmlText = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&#34;");
const jsonText = (s: string) => JSON.stringify(s).slice(1, -1);
/** Go's encoding/json, which buf writes with, also escapes &, < and > inside strings. */
const goJsonText = (s: string) => jsonText(s).replace(/[&<>]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);

/**
 * buf names each file from the input it was given, and it is given absolute folders (a relative input with the
 * shipped configuration is refused: buf reads the configuration's module path `.` from its own working directory,
 * which then contains the input). What a user sees is the path from the working directory, as git or buf run from
 * there would show it (`proto/example/example.proto`, `../contract/...`), so that annotations attach: every folder's
 * absolute prefix is replaced, in each form a format may write it (plain, XML, JSON as JavaScript and as Go write it).
 */
function relativePaths(output: string, dirs: readonly string[]): string {
  let out = output;
  // The deeper folder first: a changed contract may sit inside its baseline's folder.
  for (const dir of [...dirs].sort((a, b) => b.length - a.length)) {
    const shown = relative(process.cwd(), dir).split(sep).join("/");
    const from = `${dir}${sep}`;
    const to = shown === "" ? "" : `${shown}/`;
    for (const form of [(s: string) => s, xmlText, jsonText, goJsonText]) out = out.split(form(from)).join(form(to));
  }
  return out;
}

function checkFormat<F extends string>(format: string, formats: readonly F[]): asserts format is F {
  if (!(formats as readonly string[]).includes(format)) {
    throw new ConformanceError("usage", `--format ${format}: expected one of ${formats.join(", ")}`);
  }
}

/** A deleted field or enum value: what keeps a later edit from reusing its number or name. */
function reservedFix(d: Diagnostic): string | undefined {
  if (!/^(FIELD|ENUM_VALUE)_NO_DELETE/.test(d.type)) return undefined;
  const m = /field "(\d+)" with name "(\w+)"|enum value "(\d+)" with name "(\w+)"/.exec(d.message);
  const number = m?.[1] ?? m?.[3];
  const name = m?.[2] ?? m?.[4];
  const what =
    number !== undefined && name !== undefined
      ? `\`reserved ${number};\` and \`reserved "${name}";\``
      : "`reserved` with its number and name";
  // A renumbered field shows as a deleted one: its old number is what clients still send.
  return `fix: a field's number is its identity on the wire: keep it, or if it is gone for good reserve it with ${
    what
  }`;
}

/** Control characters from a file's path or a quoted string would reach the terminal: shown escaped instead. */
const printable = (s: string) =>
  s.replace(/[\p{Cc}\u202A-\u202E\u2066-\u2069]/gu, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);

/** buf's text format with each finding's rule ID, which an ignore comment or an `except` entry needs. */
function findingsText(json: string): string {
  return parseDiagnostics(json)
    .map((d) => {
      const plugin = d.plugin !== undefined ? ` (${d.plugin})` : "";
      const fix = reservedFix(d);
      const where = d.path !== undefined ? `${d.path}:${d.start_line}:${d.start_column}:` : "";
      return (
        printable(`${where}[${d.type}] ${d.message}${plugin}`) +
        (fix !== undefined ? `\n  ${printable(fix)}` : "") +
        "\n"
      );
    })
    .join("");
}

/**
 * buf writes config-ignore-yaml as `version: v1` whatever the configuration's version; a v2 buf.yaml (the shipped
 * one) reads it only as v2, whose ignore paths are relative to the workspace, not the module: its module path prefixes
 * them.
 */
async function ignoreYamlFor(output: string, config: string): Promise<string> {
  // Loaded only for this format: a run that never asks for it never needs the YAML library.
  const { parse: parseYaml, stringify: stringifyYaml } = await import("yaml");
  const ours = parseYaml(readFileSync(config, "utf8")) as { version?: string; modules?: { path?: string }[] } | null;
  if (ours?.version !== "v2") return output;
  const doc = (parseYaml(output) ?? {}) as { version?: string; lint?: { ignore_only?: Record<string, string[]> } };
  const modulePath = ours.modules?.length === 1 ? (ours.modules[0]?.path ?? ".") : ".";
  const ignore = doc.lint?.ignore_only ?? {};
  for (const rule of Object.keys(ignore)) ignore[rule] = (ignore[rule] ?? []).map((p) => posix.join(modulePath, p));
  return stringifyYaml({ ...doc, version: "v2" });
}

/**
 * Runs a lint or breaking command in the chosen format, and reads its findings from buf's JSON (text is rendered
 * from it, so it can carry rule IDs; another format costs a second run of buf).
 */
async function runCheck(args: string[], format: LintFormat, dirs: readonly string[], config: string): Promise<BufRun> {
  const input = dirs[0] as string;
  const json = finish(await runBuf([...args, "--error-format", "json"]));
  const findings = parseDiagnostics(json.output).map((d) => toFinding(d, input));
  if (format === "json") return { ...json, output: relativePaths(json.output, dirs), findings };
  if (format === "text") return { ...json, output: findingsText(relativePaths(json.output, dirs)), findings };
  const other = finish(await runBuf([...args, "--error-format", format]));
  // config-ignore-yaml's paths are the configuration's own (from its workspace), not the user's: kept as buf wrote
  // them.
  return {
    ...other,
    output:
      format === "config-ignore-yaml" ? await ignoreYamlFor(other.output, config) : relativePaths(other.output, dirs),
    findings,
  };
}

/** `buf lint` with the product's rules (STANDARD less the spec's fixed names, plus GO_PACKAGE_DEFINED). */
export async function lintContract(options: LintOptions = {}): Promise<BufRun> {
  const format = options.format ?? "text";
  checkFormat(format, LINT_FORMATS);
  const { input, config } = contractInput(options.dir ?? CONTRACT_DIR, "contract");
  await assertCompiles(input, config, "contract");
  const args = ["lint", input];
  if (config[0]) args.push("--config", config[0]);
  return runCheck(args, format, [input], config[0] ?? join(input, "buf.yaml"));
}

/** `buf breaking` of a changed contract against a baseline (FILE rules, FILE_SAME_GO_PACKAGE among them). */
export async function breakingContract(options: BreakingOptions): Promise<BufRun> {
  const format = options.format ?? "text";
  checkFormat(format, BUF_FORMATS);
  const { input, config } = contractInput(options.dir, "contract");
  await assertCompiles(input, config, "contract");
  const args = ["breaking", input];
  if (config[0]) args.push("--config", config[0]);
  const against = options.against ?? CONTRACT_DIR;
  const dirs = [input];
  if (existsSync(against) || options.against === undefined) {
    const base = contractInput(against, "baseline");
    await assertCompiles(base.input, base.config, "baseline");
    args.push("--against", base.input);
    if (base.config[0]) args.push("--against-config", base.config[0]);
    dirs.push(base.input);
  } else {
    // Not a folder here: hand it to buf as an input of its own (a git ref, an image, an archive).
    args.push("--against", against);
  }
  return runCheck(args, format, dirs, config[0] ?? join(input, "buf.yaml"));
}
