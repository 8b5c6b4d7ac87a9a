// The "test" of `npm run mutation` (issue 44): the catalogue's default check, run in-process against the reference
// server as Stryker has mutated it. One test, one verdict: it fails when a gating check fails, which is the
// catalogue noticing the mutant. Not an npm test file (its name ends .mutation.ts; test/mutation/vitest.config.ts
// is the only config that includes it).
import { randomBytes } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import { runConformance } from "../../harness/api/run-conformance.js";
import { startReferenceServer, type ReferenceServer } from "../../reference-server/start.js";
import { MUTATION_SEED } from "./seed.js";

let server: ReferenceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it("the default check of the reference server passes (no gating check fails)", async () => {
  // Started within the run, so the mutant Stryker activated for this run is the one served; a fresh key, as `check`
  // gives the built-in server, so that the API-key check runs too. A short grace: a mutant that holds calls open
  // must not hold the close.
  const apiKey = randomBytes(18).toString("base64url");
  server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", apiKey, shutdownGraceMs: 500 });
  const report = await runConformance({
    grpc: { address: server.grpcAddress },
    rpcPeers: [
      { address: server.httpUrl, protocol: "connect" },
      { address: server.httpUrl, protocol: "grpc-web" },
    ],
    // The reference's ?body= filter, as its users name it (--filter body): it documents the filter
    // (reference-server/http/README.md) and offers no URI template or OpenAPI document that names it, so a check
    // judges it only when told, as it would any server's.
    http: { baseUrl: server.httpUrl, apiKey, filters: ["body"] },
    // The default check without the contract checks that read the contract file alone, never the server;
    // contract.reflection-match asks the server's reflection, which reference-server/grpc.ts serves, so it runs.
    skip: ["contract.shape", "contract.go-package", "contract.lint"],
    builtIn: true,
    claims: { replicas: "single" },
    seed: MUTATION_SEED,
  });
  // Exit 1 is the catalogue's "a gating check failed" (docs/exit-codes.md); the failures name which.
  const failing = report.checks
    .filter((c) => c.status === "fail" || c.status === "error")
    .map((c) => `${c.id}: ${c.status}`);
  expect(report.exitCode, failing.join("; ")).toBe(0);
});
