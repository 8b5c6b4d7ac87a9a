// Unit tests of http.read.after-create (suites/http/read-after-create.ts), in memory: the reference's routes pass, a
// hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { readAfterCreate } from "../../../suites/http/read-after-create.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.read.after-create", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(readAfterCreate, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a message's GET that answers 404, saying why", async () => {
    const outcome = await verdictOf(readAfterCreate, defects.readLoses(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^GET \/messages\/[^ ]+ \(from the Location header\) answered 404 Not Found, not 200/,
    );
  });
});
