// Generated documentation stays true to the code.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderChecksMarkdown } from "../harness/docs.js";
import { PACKAGE_ROOT } from "../contract/paths.js";
import { renderDefectsMarkdown } from "../fixtures/defects.js";
import { catalogue, grpcChecks, httpChecks } from "../suites/index.js";

describe("docs/checks.md", () => {
  it("lists exactly the catalogue (run `npm run docs` after changing a check)", () => {
    expect(readFileSync(join(PACKAGE_ROOT, "docs", "checks.md"), "utf8")).toBe(renderChecksMarkdown(catalogue));
  });

  it("docs/defects.md lists exactly the fixtures' defects (run `npm run docs` after changing a fixture)", () => {
    expect(readFileSync(join(PACKAGE_ROOT, "docs", "defects.md"), "utf8")).toBe(renderDefectsMarkdown({ grpc: grpcChecks, http: httpChecks }));
  });

  it("has unique, stable-looking check IDs", () => {
    const ids = catalogue.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^(contract|grpc|http)\.[a-z0-9-]+(\.[a-z0-9-]+)*$/);
  });
});
