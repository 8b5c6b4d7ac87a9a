// One exit-code table for every output: docs/exit-codes.md, the README's short table, `check --help` and the Action's
// verdict output are all the table in harness/errors.ts, so none can drift from the others.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../contract/paths.js";
import { actionVerdict } from "../../../harness/ci/action-verdict.js";
import { EXIT_CODE_TABLE, EXIT_CODES } from "../../../harness/errors.js";
import { cli } from "../../helpers/cli.js";

describe("the exit-code table", () => {
  it("separates the server from the run: only 1 is the server's; internal is 70, never 1", () => {
    expect(EXIT_CODE_TABLE.map((e) => e.code)).toEqual([0, 1, 2, 3, 4, 5, 70]);
    expect(EXIT_CODES.internal).toBe(70);
  });

  it("is docs/exit-codes.md's table, row for row, with the Action's verdict for each code", () => {
    const page = readFileSync(join(PACKAGE_ROOT, "docs", "exit-codes.md"), "utf8");
    const section = page.slice(page.indexOf("## Exit codes"), page.indexOf("## Verdicts"));
    const rows = [...section.matchAll(/^\| (\d+) \| `([a-z-]+)` \|/gm)].map((m) => ({
      code: Number(m[1]),
      action: m[2],
    }));
    expect(rows).toEqual(EXIT_CODE_TABLE.map(({ code, action }) => ({ code, action })));
  });

  it("is the README's short table, code for code", () => {
    const readme = readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8");
    const start = readme.indexOf("### Reading the result");
    expect(start, 'the README has a section "Reading the result"').toBeGreaterThan(0);
    const section = readme.slice(start, readme.indexOf("docs/exit-codes.md", start));
    const codes = [...section.matchAll(/^\| (\d+) \| /gm)].map((m) => Number(m[1]));
    expect(codes).toEqual(EXIT_CODE_TABLE.map((e) => e.code));
  });

  it("is what the Action's verdict output says for each exit code", () => {
    for (const { code, action } of EXIT_CODE_TABLE) expect(actionVerdict(code, undefined), String(code)).toBe(action);
    expect(actionVerdict(99, undefined)).toBe("error");
  });

  it("is in `check --help`", async () => {
    const run = await cli(["check", "--help"]);
    expect(run.code).toBe(0);
    for (const e of EXIT_CODE_TABLE) expect(run.stdout).toContain(`${String(e.code).padStart(2)}  ${e.meaning}`);
  });
});
