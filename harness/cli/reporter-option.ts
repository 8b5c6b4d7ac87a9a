// --reporter NAME[=FILE] and its aliases (--report-json FILE, ...): which reporters a run gets and where each writes.
import { InvalidArgumentError } from "commander";
import { ConformanceError } from "../errors.js";
import {
  isReporterName,
  openReportFile,
  REPORTER_NAMES,
  REPORTERS,
  type ReporterName,
  type ReporterStreams,
  type ReportFile,
} from "../reporters/index.js";
import type { CliIo } from "./io.js";

/** One reporter the user asked for: its name, and the file it writes when one was given. */
export interface ReporterRequest {
  name: ReporterName;
  path?: string;
  /** How the user named it, for messages: `--reporter json=`, `--report-json`. */
  flag: string;
}

/** The alias flags, each a document reporter writing to the file it names. */
export const REPORT_FILE_FLAGS = {
  reportJson: ["--report-json", "json"],
  reportJunit: ["--report-junit", "junit"],
  reportHtml: ["--report-html", "html"],
} as const satisfies Record<string, readonly [string, ReporterName]>;

export type ReportFlags = { [K in keyof typeof REPORT_FILE_FLAGS]?: string };

/** Parses one --reporter value; a name that is not a reporter is a usage error that lists the known ones. */
export function parseReporter(value: string): ReporterRequest {
  const eq = value.indexOf("=");
  const name = eq < 0 ? value : value.slice(0, eq);
  if (!isReporterName(name))
    throw new InvalidArgumentError(`unknown reporter ${JSON.stringify(name)}; known: ${REPORTER_NAMES.join(", ")}`);
  if (eq < 0) return { name, flag: "--reporter" };
  const path = value.slice(eq + 1);
  if (path === "") throw new InvalidArgumentError(`${name}=: the file name is empty`);
  if (!REPORTERS[name].document) throw new InvalidArgumentError(`${name} writes to the terminal and takes no file`);
  return { name, path, flag: `--reporter ${name}=` };
}

export const collectReporter = (value: string, previous: ReporterRequest[]): ReporterRequest[] => [
  ...previous,
  parseReporter(value),
];

/**
 * The reporters of a run. Reporters given no file write to stdout; without any such, stdout gets the console
 * (and GitHub annotations under GitHub Actions). A document on stdout must be alone there, or it would not parse.
 */
export function chooseReporters(
  requested: readonly ReporterRequest[],
  flags: ReportFlags,
  env: Readonly<Record<string, string | undefined>>,
): ReporterRequest[] {
  const aliases = Object.entries(REPORT_FILE_FLAGS).flatMap(([key, [flag, name]]) => {
    const path = flags[key as keyof ReportFlags];
    return path !== undefined ? [{ name, path, flag }] : [];
  });
  const all = [...requested, ...aliases];
  const seen = new Set<string>();
  const unique = all.filter((r) => {
    const key = `${r.name}=${r.path ?? ""}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
  const onStdout = unique.filter((r) => r.path === undefined);
  const document = onStdout.find((r) => REPORTERS[r.name].document);
  if (document && onStdout.length > 1) {
    const others = onStdout.filter((r) => r !== document).map((r) => r.name);
    throw new ConformanceError(
      "usage",
      `--reporter ${document.name} without a file writes its report to stdout, where nothing else may write: ` +
        `give it a file (--reporter ${document.name}=FILE) or leave out ${others.join(", ")}`,
    );
  }
  if (onStdout.length > 0) return unique;
  const defaults: ReporterRequest[] = [
    { name: "console", flag: "--reporter" },
    ...(env.GITHUB_ACTIONS === "true" ? [{ name: "github" as const, flag: "--reporter" }] : []),
  ];
  return [...defaults, ...unique];
}

/** Opens every report file before the first call, so a path that cannot be written is refused at once. */
export async function openReporterFiles(
  chosen: readonly ReporterRequest[],
): Promise<{ name: ReporterName; file?: ReportFile }[]> {
  const opened: { name: ReporterName; file?: ReportFile }[] = [];
  try {
    for (const r of chosen)
      opened.push(
        r.path !== undefined ? { name: r.name, file: await openReportFile(r.flag, r.path) } : { name: r.name },
      );
  } catch (err) {
    for (const o of opened) await o.file?.close();
    throw err;
  }
  return opened;
}

/** Where the reporters write, and how much the console says: from the command's streams, environment and flags. */
export function reporterStreams(io: CliIo, flags: { quiet?: boolean; verbose?: boolean }): ReporterStreams {
  return {
    stdout: io.stdout,
    stderr: io.stderr,
    color: io.isTty && !io.env.NO_COLOR,
    ...(io.env.GITHUB_STEP_SUMMARY !== undefined && { stepSummary: io.env.GITHUB_STEP_SUMMARY }),
    verbosity: flags.quiet ? "quiet" : flags.verbose ? "verbose" : "normal",
  };
}
