// `load --json FILE`: the load report as one JSON document (mergeable with `load merge`), written when the run ends.
import type { LoadReporter } from "../load/load-report.js";
import type { ReportSink } from "./_internals/report-file.js";

export function createLoadJsonReporter(out: ReportSink): LoadReporter {
  return { onLoadEnd: (report) => out.write(`${JSON.stringify(report, null, 2)}\n`) };
}
