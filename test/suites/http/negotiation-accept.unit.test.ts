// Unit tests of http.negotiation.accept (suites/http/negotiation-accept.ts), in memory: the reference's routes pass, a hand-written
// defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { negotiationAccept } from "../../../suites/http/negotiation-accept.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.negotiation.accept", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(negotiationAccept, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails Accept not read (JSON whatever was asked), saying why", async () => {
    const outcome = await verdictOf(negotiationAccept, defects.acceptIgnored(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/with Accept: application\/xml answered 200 OK with Content-Type application\/json, neither XML nor 406/);
  });
});
