// Writes docs/reliability.md from test/reference-server/reliability-results.json, which the attack and soak tests
// fill when RELIABILITY_RESULTS=1: `npm run soak` runs it last (after tsc, from dist/).
import { readFileSync, writeFileSync } from "node:fs";
import { reliabilityPage } from "../dist/test/helpers/reliability-page.js";
import { RELIABILITY_RESULTS } from "../dist/test/helpers/reliability-results.js";

writeFileSync(
  new URL("../docs/reliability.md", import.meta.url),
  reliabilityPage(JSON.parse(readFileSync(RELIABILITY_RESULTS, "utf8"))),
);
