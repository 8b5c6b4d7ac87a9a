// Unit tests of http.create.location (SHOULD) (suites/http/create-location.ts), in memory: the reference's routes pass,
// a hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { createLocation } from "../../../suites/http/create-location.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.create.location (SHOULD)", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(createLocation, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a creating POST that sends no Location, saying why", async () => {
    const outcome = await verdictOf(createLocation, defects.noLocation(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/^POST \/messages created a message .* but sent no Location header/);
  });
});
