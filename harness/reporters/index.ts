// Reporters by name: each factory receives the streams and the opened file it writes to, and nothing else.
import type { Reporter } from "../report.js";
import { createConsoleReporter } from "./console.js";
import { createGithubReporter } from "./github.js";
import { createHtmlReporter } from "./html.js";
import { createJsonReporter } from "./json.js";
import { createJunitReporter } from "./junit.js";
import type { ReportFile } from "./_internals/report-file.js";

export { openReportFile, type ReportFile } from "./_internals/report-file.js";

export interface ReporterStreams {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Colour on the console. */
  color: boolean;
  /** GitHub Actions' job summary file, when the run has one. */
  stepSummary?: string;
}

export type ReporterName = "console" | "github" | "json" | "junit" | "html";

export const REPORTERS: Readonly<Record<ReporterName, (streams: ReporterStreams, file?: ReportFile) => Reporter>> = {
  console: (s) => createConsoleReporter({ write: s.stdout, color: s.color }),
  github: (s) => createGithubReporter({ write: s.stdout, warn: s.stderr, ...(s.stepSummary !== undefined && { summaryFile: s.stepSummary }) }),
  json: (_, file) => createJsonReporter(needFile("json", file)),
  junit: (_, file) => createJunitReporter(needFile("junit", file)),
  html: (_, file) => createHtmlReporter(needFile("html", file)),
};

function needFile(name: string, file: ReportFile | undefined): ReportFile {
  if (!file) throw new Error(`the ${name} reporter writes to a file: open one with openReportFile`);
  return file;
}

/** The reporters a run asks for, by name, each with its file where it writes one. */
export function createReporters(wanted: readonly { name: ReporterName; file?: ReportFile }[], streams: ReporterStreams): Reporter[] {
  return wanted.map((w) => REPORTERS[w.name](streams, w.file));
}
