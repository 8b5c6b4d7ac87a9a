// `command: check` of the GitHub Action: the CLI's check run in this process with the inputs' flags, then the
// step's outputs, the job summary and the `require` gate on a partial verdict. Secrets reach the CLI through the
// environment it is given (EXAMPLE_API_KEY, the metadata variable) or a file of this run's own (the signing key).
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../cli/main.js";
import { ConformanceError } from "../errors.js";
import { forTerminal } from "../_internals/neutralise.js";
import { processIo } from "../cli/io.js";
import { actionInput } from "./action-input.js";
import { actionVerdict } from "./action-verdict.js";
import { checkArgs, METADATA_ENV, type ActionFiles } from "./check-args.js";
import { requireVerdict, type RequireLevel } from "./require-verdict.js";
import { writeJobSummary } from "./write-job-summary.js";

/** The formats the reports input may name, and their files; all three by default. */
const FORMATS = { json: "conformance.json", junit: "conformance.xml", html: "conformance.html" } as const;
type Format = keyof typeof FORMATS;

/** The report formats the reports input asks for; JSON always, as the verdict and the summary are read from it. */
function formatsOf(text: string): Format[] {
  const names = Object.keys(FORMATS) as Format[];
  const asked = text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const unknown = asked.find((f) => !(names as string[]).includes(f));
  if (unknown !== undefined)
    throw new ConformanceError(
      "usage",
      `reports ${forTerminal(unknown)}: expected json, junit or html (comma-separated)`,
    );
  return names.filter((f) => f === "json" || asked.length === 0 || asked.includes(f));
}

/** The files this run writes, the old ones of the same names removed first so that none is taken for this run's. */
function plannedFiles(formats: readonly Format[]): ActionFiles {
  const dir = actionInput("report-dir") || "conformance-reports";
  mkdirSync(dir, { recursive: true });
  const files: ActionFiles = {};
  for (const f of formats) {
    files[f] = join(dir, FORMATS[f]);
    rmSync(files[f], { force: true });
  }
  const trace = actionInput("trace");
  if (trace !== "") files.trace = trace;
  const attestation = actionInput("attestation");
  if (attestation !== "") {
    files.attestation = attestation;
    rmSync(attestation, { force: true });
  }
  return files;
}

/** The environment the CLI reads: the runner's, the summary left to this step, the secrets under the CLI's names. */
function cliEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, GITHUB_STEP_SUMMARY: "" };
  const apiKey = actionInput("api-key");
  // An empty key is no key: the CLI must not read an empty EXAMPLE_API_KEY as one.
  if (apiKey !== "") env.EXAMPLE_API_KEY = apiKey;
  else delete env.EXAMPLE_API_KEY;
  env[METADATA_ENV] = actionInput("metadata");
  return env;
}

/** A path when the run wrote it (a folder: with something in it), else empty. */
function written(path: string | undefined, folder = false): string {
  if (path === undefined || !existsSync(path)) return "";
  return folder && readdirSync(path).length === 0 ? "" : path;
}

/** The signing-key input, written to a file only this user can read, for --sign-key; removed after the run. */
function signingKeyFile(): { file?: string; remove(): void } {
  const pem = actionInput("signing-key");
  if (pem === "") return { remove: () => undefined };
  const dir = mkdtempSync(join(process.env.RUNNER_TEMP || tmpdir(), "example-conformance-key-"));
  const file = join(dir, "signing-key.pem");
  writeFileSync(file, `${pem}\n`, { mode: 0o600 });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function actionCheck(required: RequireLevel): Promise<number> {
  const files = plannedFiles(formatsOf(actionInput("reports")));
  const key = signingKeyFile();
  let code: number;
  try {
    code = await main(checkArgs({ ...files, ...(key.file !== undefined && { signKey: key.file }) }), {
      ...processIo,
      env: cliEnv(),
    });
  } finally {
    key.remove();
  }
  const verdict = actionVerdict(code, files.json);
  const outputs = [
    `verdict=${verdict}`,
    `exit-code=${code}`,
    ...(["json", "junit", "html"] as const).map((f) => `report-${f}=${written(files[f])}`),
    `trace=${written(files.trace, true)}`,
    `attestation=${written(files.attestation)}`,
  ];
  if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, `${outputs.join("\n")}\n`);
  writeJobSummary(files.json ?? "", verdict);
  // A partial verdict is never silently green; exit-code stays the CLI's.
  return verdict === "partial" && files.json !== undefined ? requireVerdict(files.json, required) : code;
}
