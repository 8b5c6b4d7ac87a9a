// Writes docs/checks.md from the compiled catalogue: npm run docs.
import { writeFileSync } from "node:fs";
import { renderChecksMarkdown } from "../dist/harness/docs.js";
import { catalogue } from "../dist/suites/index.js";

writeFileSync(new URL("../docs/checks.md", import.meta.url), renderChecksMarkdown(catalogue));
