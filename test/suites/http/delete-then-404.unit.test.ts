// Unit tests of http.delete.then-404 (suites/http/delete-then-404.ts), in memory: the reference's routes pass, a
// hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { deleteThen404 } from "../../../suites/http/delete-then-404.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.delete.then-404", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(deleteThen404, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a DELETE that answers 204 and deletes nothing, saying why", async () => {
    const outcome = await verdictOf(deleteThen404, defects.deleteIgnored(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/^after DELETE \/messages\/[^ ]+ answered 204, GET answers 200 OK, not 404 or 410/);
  });
});
