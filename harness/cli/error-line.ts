// The one line every entry prints for an error that ends it (the CLI's main, the GitHub Action's), with its exit
// code: a ConformanceError's own code, anything else the harness's fault (internal, exit 70), never the target's.
// The message may carry a target's or a file's words: it is made inert here.
import { ConformanceError } from "../errors.js";
import { forTerminal } from "../_internals/neutralise.js";

export function errorLine(reason: unknown): { line: string; exitCode: number; error: ConformanceError } {
  const error = ConformanceError.from(reason);
  const kind = error.code === "internal" ? "internal error: " : "";
  return { line: `example-conformance: ${kind}${forTerminal(error.message)}\n`, exitCode: error.exitCode, error };
}
