// Reporters chosen by the CLI's options: the console always, files and annotations on request.
import type { CliIo } from "../cli/io.js";
import type { Reporter } from "../report.js";
import { createConsoleReporter } from "./console.js";
import { createGithubReporter } from "./github.js";
import { createHtmlReporter } from "./html.js";
import { createJsonReporter } from "./json.js";
import { createJunitReporter } from "./junit.js";

export interface ReportFiles {
  reportJson?: string;
  reportJunit?: string;
  reportHtml?: string;
}

export function createReporters(files: ReportFiles, io: CliIo): Reporter[] {
  const reporters: Reporter[] = [createConsoleReporter({ write: io.stdout, color: io.isTty && !io.env.NO_COLOR })];
  if (files.reportJson) reporters.push(createJsonReporter(files.reportJson));
  if (files.reportJunit) reporters.push(createJunitReporter(files.reportJunit));
  if (files.reportHtml) reporters.push(createHtmlReporter(files.reportHtml));
  if (io.env.GITHUB_ACTIONS === "true") reporters.push(createGithubReporter(io.stdout));
  return reporters;
}
