// --expect-failures: a file of check-ID patterns, each with a # reason, whose failures do not fail the run.
import { readFileSync } from "node:fs";
import type { CheckDefinition } from "./check.js";
import { ConformanceError } from "./errors.js";
import { matches } from "./selection.js";

export interface Expectation {
  pattern: string;
  reason: string;
  line: number;
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
    if (/\s/.test(pattern)) throw new ConformanceError("usage", `${source}:${i + 1}: one pattern per line, got ${JSON.stringify(pattern)}`);
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
