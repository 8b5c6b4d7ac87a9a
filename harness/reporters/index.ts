// Reporters by name: each factory receives the streams and, for a reporter that writes one document, where it
// writes it; nothing else. A new reporter is a file beside this one and a line in REPORTERS.
import type { Reporter } from "../report.js";
import { createConsoleReporter, type ConsoleVerbosity } from "./console.js";
import { createGithubReporter } from "./github.js";
import { createHtmlReporter } from "./html.js";
import { createJsonReporter } from "./json.js";
import { createJunitReporter } from "./junit.js";
import type { ReportSink } from "./_internals/report-file.js";

export { openReportFile, type ReportFile, type ReportSink } from "./_internals/report-file.js";

export interface ReporterStreams {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Colour on the console. */
  color: boolean;
  /** GitHub Actions' job summary file, when the run has one. */
  stepSummary?: string;
  /** How much the console prints: --quiet, default, --verbose. */
  verbosity?: ConsoleVerbosity;
}

export interface ReporterEntry {
  /** What it writes, for --help and usage errors. */
  readonly description: string;
  /** Whether it writes one document (to a file when given one, else to stdout) rather than lines as the run goes. */
  readonly document: boolean;
  create(streams: ReporterStreams, out?: ReportSink): Reporter;
}

/** Where a document reporter writes without a file: stdout, whole, at the end of the run. */
const toStdout = (s: ReporterStreams): ReportSink => ({ write: (text) => s.stdout(text) });

export const REPORTERS = {
  console: {
    description:
      "the gating failures with their reason and replay, the findings that do not gate, one line for the rest, " +
      "the verdict",
    document: false,
    create: (s) =>
      createConsoleReporter({
        write: s.stdout,
        color: s.color,
        ...(s.verbosity !== undefined && { verbosity: s.verbosity }),
      }),
  },
  github: {
    description: "GitHub Actions annotations, and a job summary in $GITHUB_STEP_SUMMARY",
    document: false,
    create: (s) =>
      createGithubReporter({
        write: s.stdout,
        warn: s.stderr,
        ...(s.stepSummary !== undefined && { summaryFile: s.stepSummary }),
      }),
  },
  json: {
    description: "the run report as JSON",
    document: true,
    create: (s, out) => createJsonReporter(out ?? toStdout(s)),
  },
  junit: {
    description: "JUnit XML, one testcase per check",
    document: true,
    create: (s, out) => createJunitReporter(out ?? toStdout(s)),
  },
  html: {
    description: "a self-contained HTML certification page",
    document: true,
    create: (s, out) => createHtmlReporter(out ?? toStdout(s)),
  },
} as const satisfies Record<string, ReporterEntry>;

export type ReporterName = keyof typeof REPORTERS;

export const REPORTER_NAMES = Object.keys(REPORTERS) as readonly ReporterName[];

export const isReporterName = (name: string): name is ReporterName => Object.hasOwn(REPORTERS, name);

/** The reporters a run asks for, by name, each with where it writes when it writes a document. */
export function createReporters(
  wanted: readonly { name: ReporterName; file?: ReportSink }[],
  streams: ReporterStreams,
): Reporter[] {
  return wanted.map((w) => (REPORTERS[w.name] as ReporterEntry).create(streams, w.file));
}
