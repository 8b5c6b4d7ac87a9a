// Expected failures: check-ID patterns, each with a reason, whose failures do not fail the run. From an
// --expect-failures file (`pattern # reason` lines), or from the configuration file's `expected-failures`, whose
// entries may also expire. Either way an entry must still fail: one whose check passes fails the run, so the list
// stays true (a stale entry would silently waive the check's next regression).
import { readFileSync } from "node:fs";
import type { CheckDefinition } from "./check.js";
import { ConformanceError } from "./errors.js";
import { matches } from "./selection.js";

export interface Expectation {
  pattern: string;
  reason: string;
  line: number;
  /** YYYY-MM-DD: from that day on the entry waives nothing, and the run fails. */
  expires?: string;
  /** Where it is listed, for messages: a file name. */
  source?: string;
}

/** The configuration's entries as expectations; a pattern that matches no check is a config error naming its line. */
export function configExpectations(
  entries: readonly { check: string; reason: string; expires?: string; line: number }[],
  file: string,
  checks: readonly CheckDefinition[],
): Expectation[] {
  return entries.map((e) => {
    if (!checks.some((c) => matches(e.check, c.id)))
      throw new ConformanceError(
        "config",
        `${file}:${e.line}: expected-failures: ${e.check} matches no check (see --list)`,
      );
    return {
      pattern: e.check,
      reason: e.reason,
      line: e.line,
      source: file,
      ...(e.expires !== undefined && { expires: e.expires }),
    };
  });
}

/** Whether the entry has expired on this day (UTC): an entry expiring today no longer waives. */
export function expired(e: Expectation, now: Date): boolean {
  return e.expires !== undefined && now.toISOString().slice(0, 10) >= e.expires;
}

/** Parses `pattern # reason` lines; blank lines and lines starting with # are ignored. */
export function parseExpectations(text: string, source: string): Expectation[] {
  const out: Expectation[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const hash = line.indexOf("#");
    const pattern = (hash < 0 ? line : line.slice(0, hash)).trim();
    const reason = hash < 0 ? "" : line.slice(hash + 1).trim();
    if (reason === "") throw new ConformanceError("usage", `${source}:${i + 1}: ${pattern} needs a reason after #`);
    if (/\s/.test(pattern))
      throw new ConformanceError("usage", `${source}:${i + 1}: one pattern per line, got ${JSON.stringify(pattern)}`);
    out.push({ pattern, reason, line: i + 1 });
  });
  return out;
}

export function loadExpectations(file: string, checks: readonly CheckDefinition[]): Expectation[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    throw new ConformanceError("usage", `--expect-failures ${file}: cannot read the file`);
  }
  const list = parseExpectations(text, file);
  for (const e of list) {
    if (!checks.some((c) => matches(e.pattern, c.id))) {
      throw new ConformanceError("usage", `${file}:${e.line}: ${e.pattern} matches no check (see --list)`);
    }
  }
  return list;
}

export function expectationFor(id: string, list: readonly Expectation[]): Expectation | undefined {
  return list.find((e) => matches(e.pattern, id));
}
