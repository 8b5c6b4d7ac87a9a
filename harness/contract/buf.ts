// Runs buf lint and buf breaking on a contract, with the product's buf check plugin on PATH.
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join, resolve } from "node:path";
import { ConformanceError } from "../errors.js";
import { BUF_CONFIG, CONTRACT_DIR, PACKAGE_ROOT } from "../_internals/paths.js";

export const BUF_FORMATS = ["text", "json", "junit", "github-actions"] as const;
export type BufFormat = (typeof BUF_FORMATS)[number];

export interface BufRun {
  /** 0: no finding; 1: findings (lint violations or breaking changes). */
  exitCode: 0 | 1;
  /** buf's report in the chosen format. */
  output: string;
}

export interface LintOptions {
  /** The folder holding the contract; default the shipped one. */
  dir?: string;
  format?: BufFormat;
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

function bufBinary(): string {
  // The @bufbuild/buf package ships the binary for this platform; its package.json names it under "bin".
  const pkg = require.resolve("@bufbuild/buf/package.json");
  return join(dirname(pkg), "bin", "buf");
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
  path: string;
  start_line: number;
  start_column: number;
  type: string;
  message: string;
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
  throw new ConformanceError(
    "usage",
    `${role} does not compile: ${first.path}:${first.start_line}:${first.start_column}: ${first.message}${more}`,
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

function finish(run: Spawned): BufRun {
  // buf exits 100 when it found something, 0 when clean, anything else when it could not run.
  if (run.code === 0) return { exitCode: 0, output: run.stdout };
  if (run.code === 100) return { exitCode: 1, output: run.stdout };
  throw new ConformanceError("usage", bufFailure(run));
}

function checkFormat(format: string): asserts format is BufFormat {
  if (!(BUF_FORMATS as readonly string[]).includes(format)) {
    throw new ConformanceError("usage", `--format ${format}: expected one of ${BUF_FORMATS.join(", ")}`);
  }
}

/** `buf lint` with the product's rules (STANDARD less the spec's fixed names, plus GO_PACKAGE_DEFINED). */
export async function lintContract(options: LintOptions = {}): Promise<BufRun> {
  const format = options.format ?? "text";
  checkFormat(format);
  const { input, config } = contractInput(options.dir ?? CONTRACT_DIR, "contract");
  await assertCompiles(input, config, "contract");
  const args = ["lint", input, "--error-format", format];
  if (config[0]) args.push("--config", config[0]);
  return finish(await runBuf(args));
}

/** `buf breaking` of a changed contract against a baseline (FILE rules, FILE_SAME_GO_PACKAGE among them). */
export async function breakingContract(options: BreakingOptions): Promise<BufRun> {
  const format = options.format ?? "text";
  checkFormat(format);
  const { input, config } = contractInput(options.dir, "contract");
  await assertCompiles(input, config, "contract");
  const args = ["breaking", input, "--error-format", format];
  if (config[0]) args.push("--config", config[0]);
  const against = options.against ?? CONTRACT_DIR;
  if (existsSync(against) || options.against === undefined) {
    const base = contractInput(against, "baseline");
    await assertCompiles(base.input, base.config, "baseline");
    args.push("--against", base.input);
    if (base.config[0]) args.push("--against-config", base.config[0]);
  } else {
    // Not a folder here: hand it to buf as an input of its own (a git ref, an image, an archive).
    args.push("--against", against);
  }
  return finish(await runBuf(args));
}
