// The HTTP suite run from code against a request handler, with no socket (runConformance's http.inMemory): the
// reference's routes pass every HTTP check, a defect fails the check that names it, and no replay line is offered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runConformance } from "../../../harness/api/run-conformance.js";
import type { HttpHandler } from "../../../harness/targets/http-inject.js";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { defects } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler({ apiKey: "K" })));
afterAll(() => reference.close());

const run = (inMemory: HttpHandler) =>
  runConformance({
    http: { baseUrl: "http://reference.test", apiKey: "K", inMemory },
    only: ["http.*"],
    seed: 4,
    runs: 2,
  });

describe("an in-memory HTTP target run from code", () => {
  it("passes the reference's routes on every HTTP check but the one that needs replicas, with no replay line", async () => {
    const report = await run(reference.handler);
    const notPassing = report.checks.filter((c) => c.status !== "pass").map((c) => `${c.id}: ${c.status}`);
    expect(notPassing).toEqual(["http.stateless.replicas: skip"]);
    expect(report.checks.find((c) => c.id === "http.auth.api-key")?.status).toBe("pass");
    expect(report.checks.every((c) => c.replay === undefined)).toBe(true);
  });

  it("fails a handler whose creating POST answers 200 on the check that names it", async () => {
    const report = await run(defects.create200(reference.handler));
    expect(report.checks.find((c) => c.id === "http.create.status-201")).toMatchObject({
      status: "fail",
      message: expect.stringMatching(/answered 200 OK, not 201 Created/),
    });
  });
});
