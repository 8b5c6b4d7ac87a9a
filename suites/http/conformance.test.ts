// The HTTP catalogue as vitest tests, for vitest's own reporters:
//   EXAMPLE_HTTP_TARGET=http://host:port [EXAMPLE_API_KEY=K] [EXAMPLE_API_KEY_IN=header:NAME|bearer|query:NAME] npx
//   vitest run suites/http
// Without EXAMPLE_HTTP_TARGET it checks the built-in reference server. EXAMPLE_STRICT=1 gates SHOULD checks.
import { randomBytes } from "node:crypto";
import { openSession } from "../../harness/session.js";
import { parseApiKeyPlacement } from "../../harness/targets/http-target.js";
import { describeChecks, envSeed } from "../_internals/as-vitest.js";
import { DEFAULT_ALLOWED_WORDS, DEFAULT_VERBS } from "./_internals/path-rules.js";
import { httpChecks } from "../index.js";

const baseUrl = process.env.EXAMPLE_HTTP_TARGET;

describeChecks(`HTTP conformance of ${baseUrl ?? "the built-in reference server"}`, httpChecks, async () => {
  let url = baseUrl;
  let apiKey = process.env.EXAMPLE_API_KEY || undefined;
  let stop: (() => Promise<void>) | undefined;
  if (!url) {
    const { startReferenceServer } = await import("../../reference-server/start.js");
    apiKey = randomBytes(18).toString("base64url");
    const server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", apiKey });
    url = server.httpUrl;
    stop = server.close;
  }
  const header = process.env.EXAMPLE_API_KEY_HEADER || undefined;
  const where = process.env.EXAMPLE_API_KEY_IN || undefined;
  const apiKeyIn = where === undefined ? undefined : parseApiKeyPlacement(where);
  if (where !== undefined && apiKeyIn === undefined)
    throw new Error(`EXAMPLE_API_KEY_IN=${where}: expected header:NAME, bearer or query:NAME`);
  const http = {
    baseUrl: url,
    ...(apiKey !== undefined && { apiKey }),
    ...(header !== undefined && { apiKeyHeader: header }),
    ...(apiKeyIn !== undefined && { apiKeyIn }),
  };
  // The catalogue's verb lexicon, as the CLI hands it to a run.
  const session = await openSession({
    http,
    seed: envSeed(),
    runs: 1,
    pathWords: { verbs: DEFAULT_VERBS, allowed: DEFAULT_ALLOWED_WORDS },
  });
  return { session, ...(stop && { stop }) };
});
