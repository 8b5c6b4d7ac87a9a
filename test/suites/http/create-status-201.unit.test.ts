// Unit tests of http.create.status-201 (suites/http/create-status-201.ts), in memory: the reference's routes pass, a
// hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { createStatus201 } from "../../../suites/http/create-status-201.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.create.status-201", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(createStatus201, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a creating POST that answers 200 OK, saying why", async () => {
    const outcome = await verdictOf(createStatus201, defects.create200(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/^POST \/messages answered 200 OK, not 201 Created/);
  });
});
