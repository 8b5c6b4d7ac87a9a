// Writes the embedded store's template data directory beside the compiled store (npm run build does this after tsc):
// a new store is copied from it instead of running initdb; see reference-server/http/pgdata-template.ts.
import { writePgdataTemplate } from "../dist/reference-server/http/pgdata-template.js";

const manifest = await writePgdataTemplate(new URL("../dist/reference-server/http/", import.meta.url));
process.stdout.write(`pgdata template for PGlite ${manifest.pglite}: ${manifest.bytes} bytes\n`);
