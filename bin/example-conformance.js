#!/usr/bin/env node
// The example-conformance command. It runs the compiled harness that `npm ci` (prepare) or `npm run build` writes.
import { existsSync } from "node:fs";

const compiled = new URL("../dist/harness/cli/main.js", import.meta.url);
if (!existsSync(compiled)) {
  process.stderr.write("example-conformance: the harness is not built; run `npm run build` (npm ci does it)\n");
  process.exitCode = 2;
} else {
  const { main } = await import(compiled.href);
  process.exitCode = await main(process.argv.slice(2));
}
