// A prepared empty PostgreSQL data directory that a new embedded store is copied from, instead of running initdb
// (on the 2-core machine initdb takes about 9 s of CPU and holds the main thread 5 s; the copy, under 2 s). It is
// written when the package is built (scripts/pgdata-template.js), by the PGlite the package installs, and used only
// by that same PGlite version and only whole: its SHA-256 is checked. Without it (a build that skipped the step, a
// PGlite changed since) a new store runs initdb as before. Every store copied from one template shares its
// system identifier (pg_control), which only physical replication reads; the embedded store has none.
import { createHash } from "node:crypto";
import fs from "node:fs";

const TARBALL = "pgdata-template.tar.gz";
const MANIFEST = "pgdata-template.json";
/** Where the template is: beside this module in dist/, or in dist/ when this module runs from its source. */
const PLACES = [new URL(".", import.meta.url), new URL("../../dist/reference-server/http/", import.meta.url)];

export interface PgdataTemplateManifest {
  /** The PGlite version that wrote it. */
  pglite: string;
  sha256: string;
  bytes: number;
}

/** The installed PGlite's version, read from its package.json (which it does not export). */
export function installedPgliteVersion(): string | undefined {
  try {
    const entry = import.meta.resolve("@electric-sql/pglite");
    const manifest = JSON.parse(fs.readFileSync(new URL("../package.json", entry), "utf8")) as { version?: unknown };
    return typeof manifest.version === "string" ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

/** Runs initdb once in memory and writes the data directory it made, as a gzipped tar with its manifest, into dir. */
export async function writePgdataTemplate(dir: URL): Promise<PgdataTemplateManifest> {
  const version = installedPgliteVersion();
  if (version === undefined) throw new Error("cannot read the installed PGlite's version");
  const { PGlite } = await import("@electric-sql/pglite");
  const pglite = await PGlite.create();
  let tarball: Buffer;
  try {
    tarball = Buffer.from(await (await pglite.dumpDataDir("gzip")).arrayBuffer());
  } finally {
    await pglite.close();
  }
  const manifest: PgdataTemplateManifest = { pglite: version, sha256: sha256(tarball), bytes: tarball.length };
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(new URL(TARBALL, dir), tarball);
  fs.writeFileSync(new URL(MANIFEST, dir), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * The template as PGlite's loadDataDir takes it, or undefined when there is none fit for the installed PGlite: not
 * built, written by another version, or not whole. Looked for in `places` (by default: beside the compiled module).
 */
export function readPgdataTemplate(places: readonly URL[] = PLACES): Blob | undefined {
  const version = installedPgliteVersion();
  for (const place of places) {
    let manifest: PgdataTemplateManifest;
    let tarball: Buffer;
    try {
      manifest = JSON.parse(fs.readFileSync(new URL(MANIFEST, place), "utf8")) as PgdataTemplateManifest;
      tarball = fs.readFileSync(new URL(TARBALL, place));
    } catch {
      continue;
    }
    if (manifest.pglite !== version || manifest.bytes !== tarball.length || manifest.sha256 !== sha256(tarball))
      continue;
    return new Blob([tarball]);
  }
  return undefined;
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}
