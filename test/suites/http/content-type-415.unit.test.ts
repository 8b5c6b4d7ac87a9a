// Unit tests of http.content-type.415 (suites/http/content-type-415.ts), in memory: the reference's routes pass, a
// hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { contentType415 } from "../../../suites/http/content-type-415.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.content-type.415", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(contentType415, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a body of a type it does not read answered 400, not 415, saying why", async () => {
    const outcome = await verdictOf(contentType415, defects.no415(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^POST \/messages with Content-Type: text\/plain answered 400 Bad Request, not 415 Unsupported Media Type/,
    );
  });
});
