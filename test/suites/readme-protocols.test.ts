// The list in docs/checking-a-server.md of which RPC checks run over which protocol is the catalogue's: a check
// moved, added or limited to one protocol without the page following fails here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../common/paths.js";
import { catalogue } from "../../suites/index.js";

const START = "<!-- protocols:start -->";
const END = "<!-- protocols:end -->";

/** The page's rows: "| over | `id`, `id` |" between the markers, keyed by the first cell. */
function pageRows(): Map<string, string[]> {
  const text = readFileSync(join(PACKAGE_ROOT, "docs", "checking-a-server.md"), "utf8");
  const block = text.slice(text.indexOf(START) + START.length, text.indexOf(END));
  expect(text.includes(START) && text.includes(END), "docs/checking-a-server.md marks its protocol list").toBe(true);
  const rows = new Map<string, string[]>();
  for (const line of block.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 4 || cells[1] === "Runs over" || /^-+$/.test(cells[1] ?? "")) continue;
    rows.set(cells[1] as string, [...(cells[2] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).sort());
  }
  return rows;
}

/** The catalogue's RPC checks grouped by the protocols they declare ("every RPC protocol" when they declare none). */
function catalogueRows(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const c of catalogue) {
    if (c.area !== "grpc") continue;
    const key = c.protocols === undefined ? "every RPC protocol" : c.protocols.join(", ");
    rows.set(key, [...(rows.get(key) ?? []), c.id]);
  }
  for (const ids of rows.values()) ids.sort();
  return rows;
}

describe("docs/checking-a-server.md's list of what runs over each protocol", () => {
  it("names every RPC check under the protocols it declares, and nothing else", () => {
    expect(Object.fromEntries(pageRows())).toEqual(Object.fromEntries(catalogueRows()));
  });
});
