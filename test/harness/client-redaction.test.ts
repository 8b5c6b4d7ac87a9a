// The runner's redactor knows the key check-client hands its client, as it knows check's --api-key: whatever a
// client check says, the key is not in the report (the client checks redact their own words too; this is the
// backstop for any that forgets).
import { describe, expect, it } from "vitest";
import { fail, type CheckDefinition } from "../../harness/check.js";
import { runConformance } from "../../harness/runner.js";

const KEY = "client-run-key-42";

const careless: CheckDefinition = {
  id: "client.careless",
  title: "says the key aloud",
  severity: "MUST",
  area: "client",
  profile: "contract",
  spec: "part 5",
  run: () => Promise.resolve(fail(`the request carried ${KEY}`, { details: [`authorization: Bearer ${KEY}`], counterexample: KEY })),
};

describe("runConformance with a client run's key", () => {
  it("replaces the key in a client check's message, details and counterexample", async () => {
    const report = await runConformance({ checks: [careless], client: "./client", clientApiKey: KEY, seed: 1 });
    const [result] = report.checks;
    expect(result?.status).toBe("fail");
    expect([result?.message, ...(result?.details ?? []), result?.counterexample]).toEqual(["the request carried <API_KEY>", "authorization: Bearer <API_KEY>", "<API_KEY>"]);
    expect(JSON.stringify(report)).not.toContain(KEY);
  });
});
