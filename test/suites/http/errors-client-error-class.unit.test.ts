// Unit tests of http.errors.client-error-class (suites/http/errors-client-error-class.ts), in memory: the reference's
// routes pass, a hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { errorsClientErrorClass } from "../../../suites/http/errors-client-error-class.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.errors.client-error-class", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(errorsClientErrorClass, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a GET of a message that does not exist answered 500, saying why", async () => {
    const outcome = await verdictOf(errorsClientErrorClass, defects.unknown500(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^a GET of an id that does not exist \(GET \/messages\/[^ )]+\) answered 500 Internal Server Error, not a 4xx/,
    );
  });
});
