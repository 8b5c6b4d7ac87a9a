// Selects checks by --only and --skip patterns: exact IDs or globs where * matches any run of characters.
import type { CheckDefinition } from "./check.js";
import { ConformanceError } from "./errors.js";

export function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${escaped}$`);
}

export function matches(pattern: string, id: string): boolean {
  return globToRegExp(pattern).test(id);
}

export interface Selection {
  only?: readonly string[];
  skip?: readonly string[];
}

/** The checks to run; a pattern that names no check is a usage error, so a typo cannot pass silently. */
export function selectChecks(all: readonly CheckDefinition[], selection: Selection): CheckDefinition[] {
  for (const [flag, patterns] of [
    ["--only", selection.only],
    ["--skip", selection.skip],
  ] as const) {
    for (const p of patterns ?? []) {
      if (!all.some((c) => matches(p, c.id)))
        throw new ConformanceError("usage", `${flag} ${p}: matches no check (see --list)`);
    }
  }
  return all.filter(
    (c) =>
      (!selection.only?.length || selection.only.some((p) => matches(p, c.id))) &&
      !(selection.skip ?? []).some((p) => matches(p, c.id)),
  );
}
