// Writes the embedded store's template data directory beside the compiled store (npm run build does this after tsc):
// a new store is copied from it instead of running initdb; see reference-server/http/pgdata-template.ts.
// A template already there for the installed PGlite, whole, is kept: it depends on PGlite's version alone.
import { readPgdataTemplate, writePgdataTemplate } from "../dist/reference-server/http/pgdata-template.js";

const place = new URL("../dist/reference-server/http/", import.meta.url);
if (readPgdataTemplate([place]) === undefined) {
  const manifest = await writePgdataTemplate(place);
  process.stdout.write(`pgdata template for PGlite ${manifest.pglite}: ${manifest.bytes} bytes\n`);
}
