// The Action's `verdict` output for the CLI's exit code: the one exit-code table's word, or for exit 0 the report's
// own word (waived, partial, known failures).
import { existsSync, readFileSync } from "node:fs";
import { EXIT_CODE_TABLE } from "../errors.js";

/** The report verdict words, as the verdict output says them (a closed set: never target text). */
const VERDICT_WORDS: Record<string, string> = {
  conformant: "conformant",
  "conformant with waivers": "conformant-with-waivers",
  partial: "partial",
  "not conformant": "not-conformant",
};

export function actionVerdict(code: number, json: string | undefined): string {
  let verdict = EXIT_CODE_TABLE.find((e) => e.code === code)?.action ?? "error";
  if (code === 0 && json !== undefined && existsSync(json)) {
    try {
      verdict =
        VERDICT_WORDS[(JSON.parse(readFileSync(json, "utf8")) as { verdict?: string }).verdict ?? ""] ?? verdict;
    } catch {
      // A report that cannot be read leaves the exit code's word.
    }
  }
  return verdict;
}
