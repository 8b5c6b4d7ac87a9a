// Tests mirror the product (STYLE.md): each folder of tests is the product's folder of the same path, and a test
// named after a product file sits in the folder mirroring that file's (a folder's _internals read as the folder).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../contract/paths.js";

/** The rooms a test may mirror: the product's folders, and the fixtures and bench that have tests of their own. */
const ROOMS = ["harness", "suites", "reference-server", "contract", "proto", "fixtures", "bench", "scripts"];
/** The tests of the test helpers themselves live beside them. */
const OWN_FOLDERS = new Set(["helpers"]);

const walk = (dir: string): string[] =>
  readdirSync(join(PACKAGE_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    if (["node_modules", "gen", "dist"].includes(e.name)) return [];
    return e.isDirectory() ? walk(`${dir}/${e.name}`) : [`${dir}/${e.name}`];
  });

const tests = walk("test").filter((f) => f.endsWith(".test.ts"));
const productByName = new Map<string, string[]>();
for (const file of ROOMS.filter((r) => existsSync(join(PACKAGE_ROOT, r))).flatMap(walk)) {
  if (!file.endsWith(".ts") || file.endsWith(".d.ts") || file.endsWith(".test.ts")) continue;
  const name = basename(file, ".ts");
  productByName.set(name, [...(productByName.get(name) ?? []), file]);
}
const folderOf = (file: string) =>
  dirname(file)
    .replace(/\/_internals(\/|$)/, "$1")
    .replace(/\/$/, "");

describe("the tests' folders", () => {
  it("finds the tests and the product (the walk is not empty)", () => {
    expect(tests.length).toBeGreaterThan(150);
    expect(productByName.size).toBeGreaterThan(200);
  });

  it("each mirror a product folder of the same path", () => {
    const folders = [...new Set(tests.map((t) => dirname(t)).filter((d) => d !== "test"))];
    const astray = folders.filter((d) => {
      const mirrored = d.slice("test/".length);
      if (OWN_FOLDERS.has(mirrored.split("/")[0] as string)) return false;
      const at = join(PACKAGE_ROOT, mirrored);
      return !(existsSync(at) && statSync(at).isDirectory());
    });
    expect(astray).toEqual([]);
  });

  it("hold a test named after a product file in the folder mirroring that file's", () => {
    const misplaced = tests.flatMap((t) => {
      const room = t.split("/")[1] as string;
      const name = basename(t).replace(/(\.unit)?\.test\.ts$/, "");
      const same = (productByName.get(name) ?? []).filter((p) => p.startsWith(`${room}/`));
      if (same.length !== 1) return [];
      const want = `test/${folderOf(same[0] as string)}`;
      return dirname(t) === want ? [] : [`${t} (tests ${same[0]}: belongs in ${want}/)`];
    });
    expect(misplaced).toEqual([]);
  });
});

describe("test paths named in the configuration", () => {
  it("exist: a file the projects or npm scripts name and no longer find would run in another project, or not at all", () => {
    const named = ["vitest.config.ts", "package.json"].flatMap((f) =>
      [...readFileSync(join(PACKAGE_ROOT, f), "utf8").matchAll(/test\/[\w./-]+\.test\.ts/g)].map((m) => m[0]),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((p) => !existsSync(join(PACKAGE_ROOT, p)))).toEqual([]);
  });
});
