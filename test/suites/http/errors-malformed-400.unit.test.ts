// Unit tests of http.errors.malformed-400 (suites/http/errors-malformed-400.ts), in memory: the reference's routes
// pass, a hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { errorsMalformed400 } from "../../../suites/http/errors-malformed-400.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.errors.malformed-400", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(errorsMalformed400, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a malformed body answered 500, saying why", async () => {
    const outcome = await verdictOf(errorsMalformed400, defects.malformed500(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/^POST \/messages with malformed JSON answered 500 Internal Server Error, not 400/);
  });
});
