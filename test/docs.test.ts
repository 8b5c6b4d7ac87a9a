// Generated documentation stays true to the code.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderChecksMarkdown } from "../harness/docs.js";
import { PACKAGE_ROOT } from "../contract/paths.js";
import { renderDefectsMarkdown } from "../fixtures/defects.js";
import { REPORTER_NAMES } from "../harness/reporters/index.js";
import { catalogue, grpcChecks, httpChecks } from "../suites/index.js";
import { GOLDEN_DIR, loadGoldenCases } from "../suites/grpc/golden.js";
import { clientChecks } from "../suites/client/index.js";
import { renderClientChecksMarkdown } from "../suites/client/docs.js";

describe("docs/checks.md", () => {
  it("lists exactly the catalogue (run `npm run docs` after changing a check)", () => {
    expect(readFileSync(join(PACKAGE_ROOT, "docs", "checks.md"), "utf8")).toBe(`${renderChecksMarkdown(catalogue)}\n${renderClientChecksMarkdown(clientChecks)}`);
  });

  it("docs/defects.md lists exactly the fixtures' defects (run `npm run docs` after changing a fixture)", () => {
    expect(readFileSync(join(PACKAGE_ROOT, "docs", "defects.md"), "utf8")).toBe(renderDefectsMarkdown({ grpc: grpcChecks, http: httpChecks }));
  });

  it("has unique, stable-looking check IDs", () => {
    const ids = catalogue.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^(contract|grpc|connect|grpc-web|http|rpc)\.[a-z0-9-]+(\.[a-z0-9-]+)*$/);
    // check-client's checks, spelled the same way.
    for (const { id } of clientChecks) expect(id).toMatch(/^client\.[a-z0-9-]+(\.[a-z0-9-]+)*$/);
  });
});

describe("docs/architecture.md", () => {
  const text = readFileSync(join(PACKAGE_ROOT, "docs", "architecture.md"), "utf8");

  it("names only files that exist, except on lines that say the file is planned", () => {
    const named = text.split("\n").flatMap((line) => [...line.matchAll(/`((?:contract|harness|suites|fixtures|docs|test|reference-server)\/[\w./-]*\w)`/g)].map((m) => ({ line, path: m[1] as string })));
    expect(named.length).toBeGreaterThan(15);
    const missing = named.filter(({ line, path }) => !path.includes("<") && !/\bplanned\b/.test(line) && !existsSync(join(PACKAGE_ROOT, path)));
    expect(missing.map((m) => m.path)).toEqual([]);
    const planned = named.filter(({ line }) => /\bplanned\b/.test(line) && !line.startsWith("#")).map((m) => m.path);
    for (const path of planned.filter((p) => !p.includes("<") && p.startsWith("harness/targets/"))) expect(existsSync(join(PACKAGE_ROOT, path)), `${path} exists: the page should no longer call it planned`).toBe(false);
  });

  it("names, as bare file names, only files of the engine, the checks or the contract module", () => {
    const files = new Set(["harness", "suites", "contract"].flatMap((dir) => readdirSync(join(PACKAGE_ROOT, dir), { recursive: true, encoding: "utf8" }).map((f) => f.split("/").pop())));
    const bare = [...text.matchAll(/`([\w-]+\.ts)`/g)].map((m) => m[1] as string);
    expect(bare.length).toBeGreaterThan(10);
    expect(bare.filter((f) => !files.has(f))).toEqual([]);
  });

  it("counts a single-request case as one file: every case file in fixtures/golden/grpc is a check of the catalogue, with no code", () => {
    expect(text).toMatch(/\| a single-request case \| 1 \| `fixtures\/golden\/grpc\/<name>\.json`/);
    const files = readdirSync(GOLDEN_DIR).filter((f) => f.endsWith(".json"));
    const ids = loadGoldenCases().map((c) => c.id ?? `grpc.golden.${c.name}`);
    expect(ids).toHaveLength(files.length);
    const inCatalogue = new Set(grpcChecks.map((c) => c.id));
    expect(ids.filter((id) => !inCatalogue.has(id))).toEqual([]);
  });

  it("lists every reporter in the map", () => {
    for (const name of REPORTER_NAMES) expect(text).toContain(name);
  });
});
