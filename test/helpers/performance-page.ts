// The figures table of docs/performance.md is written by `npm run bench`, between two markers, from the run it
// measured: the page's table is bench/results.json's, never typed by hand.
import { readFileSync, writeFileSync } from "node:fs";

export const TABLE_START = "<!-- bench:table:start (written by npm run bench from bench/results.json; do not edit) -->";
export const TABLE_END = "<!-- bench:table:end -->";

/** The table between the markers, or undefined when the page does not mark one. */
export function benchTableOf(page: string): string | undefined {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) return undefined;
  return page.slice(start + TABLE_START.length, end).replace(/^\n/, "").replace(/\n$/, "");
}

/** Replaces the table between the markers of the page at `path` with `table`; throws when the page marks none. */
export function writeBenchTable(path: string, table: string): void {
  const page = readFileSync(path, "utf8");
  if (benchTableOf(page) === undefined) throw new Error(`${path} has no ${TABLE_START} ... ${TABLE_END} block for the bench's table`);
  const before = page.slice(0, page.indexOf(TABLE_START) + TABLE_START.length);
  const after = page.slice(page.indexOf(TABLE_END));
  writeFileSync(path, `${before}\n${table}\n${after}`);
}
