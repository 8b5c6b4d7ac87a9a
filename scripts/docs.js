// Writes docs/checks.md from the compiled catalogue and docs/defects.md from the fixtures: npm run docs.
import { writeFileSync } from "node:fs";
import { renderChecksMarkdown } from "../dist/harness/docs.js";
import { renderDefectsMarkdown } from "../dist/fixtures/defects.js";
import { catalogue, grpcChecks, httpChecks } from "../dist/suites/index.js";
import { clientChecks } from "../dist/suites/client/index.js";
import { renderClientChecksMarkdown } from "../dist/suites/client/docs.js";

writeFileSync(
  new URL("../docs/checks.md", import.meta.url),
  `${renderChecksMarkdown(catalogue)}\n${renderClientChecksMarkdown(clientChecks)}`,
);
writeFileSync(
  new URL("../docs/defects.md", import.meta.url),
  renderDefectsMarkdown({ grpc: grpcChecks, http: httpChecks }),
);
