// Report files make at most their own folder: a path missing more than that is refused before the first call,
// naming the folder, and nothing is made.
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../../helpers/cli.js";

describe("report parents", () => {
  it.each([["--report-json"], ["--report-html"], ["--report-junit"]])(
    "%s under two missing folders: exit 2 naming the folder, before the target is tried, nothing made",
    async (flag) => {
      const dir = mkdtempSync(join(tmpdir(), "parents-"));
      const path = join(dir, "typo", "reports", "r.out");
      // Nothing listens on 127.0.0.1:1: a 2, not a 3, says the path was refused first.
      const run = await cli(["check", "--grpc", "127.0.0.1:1", flag, path]);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        `example-conformance: ${flag} ${path}: cannot write: neither its folder ${join(dir, "typo", "reports")} ` +
          `nor that folder's parent exists (a report makes at most its own folder: create the rest first)\n`,
      );
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  it("makes the report's own folder when its parent exists", async () => {
    const dir = mkdtempSync(join(tmpdir(), "parents-"));
    const run = await cli(["check", "--grpc", "127.0.0.1:1", "--report-json", join(dir, "reports", "r.json")]);
    expect(run.code).toBe(3);
    expect(existsSync(join(dir, "reports"))).toBe(true);
  });
});
