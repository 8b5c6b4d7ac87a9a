// The template a new embedded store is copied from: the build writes it for the installed PGlite, and one that is
// not whole or was written by another PGlite is never used (the store runs initdb instead).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { installedPgliteVersion, readPgdataTemplate } from "../../../reference-server/http/pgdata-template.js";

const BUILT = new URL("../../../dist/reference-server/http/", import.meta.url);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A copy of the built template in a directory of its own, changed by `change`. */
function copy(change: (dir: string) => void): URL {
  const dir = mkdtempSync(join(tmpdir(), "pgdata-template-"));
  dirs.push(dir);
  for (const name of ["pgdata-template.json", "pgdata-template.tar.gz"]) cpSync(new URL(name, BUILT), join(dir, name));
  change(dir);
  return pathToFileURL(`${dir}/`);
}

describe("the embedded store's template", () => {
  it("is built for the installed PGlite and read whole", async () => {
    const manifest = JSON.parse(readFileSync(new URL("pgdata-template.json", BUILT), "utf8")) as {
      pglite: string;
      bytes: number;
    };
    expect(manifest.pglite).toBe(installedPgliteVersion());
    const template = readPgdataTemplate([BUILT]);
    expect(template?.size).toBe(manifest.bytes);
    expect(readPgdataTemplate([copy(() => undefined)])?.size).toBe(manifest.bytes);
  });

  it("is not used when another PGlite wrote it", () => {
    const place = copy((dir) => {
      const file = join(dir, "pgdata-template.json");
      writeFileSync(file, readFileSync(file, "utf8").replace(/"pglite": "[^"]*"/, '"pglite": "0.0.1"'));
    });
    expect(readPgdataTemplate([place])).toBeUndefined();
  });

  it("is not used when its tarball is cut short or changed, or when there is none", () => {
    const cut = copy((dir) => {
      const file = join(dir, "pgdata-template.tar.gz");
      writeFileSync(file, readFileSync(file).subarray(0, 1000));
    });
    const changed = copy((dir) => {
      const file = join(dir, "pgdata-template.tar.gz");
      const bytes = readFileSync(file);
      const middle = bytes.length >> 1;
      bytes.writeUInt8(bytes.readUInt8(middle) ^ 0xff, middle);
      writeFileSync(file, bytes);
    });
    const none = copy((dir) => rmSync(join(dir, "pgdata-template.tar.gz")));
    for (const place of [cut, changed, none]) expect(readPgdataTemplate([place])).toBeUndefined();
    // The next place is tried.
    expect(readPgdataTemplate([cut, BUILT])).toBeDefined();
  });
});
