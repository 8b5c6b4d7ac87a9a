// Unit tests of http.methods.405-allow (suites/http/methods-405-allow.ts), in memory: the reference's routes pass, a
// hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { methods405Allow } from "../../../suites/http/methods-405-allow.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.methods.405-allow", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(methods405Allow, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a method the collection does not serve answered 404 without Allow, saying why", async () => {
    const outcome = await verdictOf(methods405Allow, defects.no405(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^PATCH \/messages, a method the collection does not serve .* answered 404 Not Found, not 405 Method Not Allowed/,
    );
  });
});
