// A comparison of two runs as text for a terminal or a CI log, and as JSON. Everything read from the report files is
// shown inert, ids included: anyone can write a report file, and the Action's baseline input takes one.
import { forTerminal } from "../_internals/neutralise.js";
import { newGatingFailures, type DiffEntry, type FailOn, type RunDiff } from "./compare-runs.js";

const status = (e: DiffEntry): string => `${e.before ?? "not run"} -> ${e.after ?? "not run"}`;

/** A failure is said to gate or not; a check no longer judged is neither. */
const gateWord = (e: DiffEntry): string =>
  e.after === undefined || e.after === "skip" ? "" : e.gating ? "gating " : "not gating ";

function section(title: string, entries: DiffEntry[], withMessage: boolean): string[] {
  if (entries.length === 0) return [];
  return [
    `${title} (${entries.length}):`,
    ...entries.map(
      (e) =>
        `  ${gateWord(e)}${forTerminal(e.id)}  ` +
        `${status(e)}${withMessage && e.message !== "" ? `: ${forTerminal(e.message)}` : ""}`,
    ),
  ];
}

/** The comparison, new failures first; the last line says what the gate decided and why. */
export function diffText(diff: RunDiff, failOn: FailOn, exitCode: 0 | 1): string {
  const lines = [
    ...diff.notes.map((n) => `note: ${forTerminal(n)}`),
    ...section("newly failing", diff.newlyFailing, true),
    ...section("still failing (known)", diff.stillFailing, false),
    ...section("newly passing", diff.newlyPassing, false),
    ...section("no longer judged", diff.noLongerJudged, false),
  ];
  const fresh = newGatingFailures(diff).length;
  const counts =
    `${diff.newlyFailing.length} newly failing (${fresh} gating), ${diff.stillFailing.length} still failing, ` +
    `${diff.newlyPassing.length} newly passing, ${diff.noLongerJudged.length} no longer judged`;
  const decision = failOn === "none" ? "--fail-on none: exit 0" : `--fail-on ${failOn}: exit ${exitCode}`;
  lines.push(`diff: ${counts}; ${decision}`);
  return `${lines.join("\n")}\n`;
}

/** The comparison as data: what `diff --format json` prints. */
export const diffJson = (diff: RunDiff, failOn: FailOn, exitCode: 0 | 1): string =>
  `${JSON.stringify({ ...diff, failOn, exitCode }, null, 2)}\n`;
