// GitHub Actions annotations: an ::error or ::warning line per failed check, when GITHUB_ACTIONS=true.
import type { Reporter } from "../report.js";

/** Escapes a workflow command's data and property values as the runner expects. */
const data = (s: string) => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
const prop = (s: string) => data(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

export function createGithubReporter(write: (text: string) => void): Reporter {
  return {
    onCheckResult(r) {
      if (r.status !== "fail" && r.status !== "error") return;
      const level = r.gating ? "error" : "warning";
      const text = [r.message, ...(r.counterexample !== undefined ? [`counterexample: ${r.counterexample}`] : []), `replay: ${r.replay}`].join("\n");
      write(`::${level} title=${prop(`${r.id} [${r.severity} ${r.spec}]`)}::${data(text)}\n`);
    },
  };
}
