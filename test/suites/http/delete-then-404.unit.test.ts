// Unit tests of http.delete.then-404 (suites/http/delete-then-404.ts), in memory: the reference's routes pass, a
// hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { deleteThen404 } from "../../../suites/http/delete-then-404.js";
import { defects, editAnswer, verdictOf } from "../../helpers/http-handlers.js";

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

  it("judges the DELETE and the GET when the listing cannot be read to its end, and says so", async () => {
    // A listing that cannot be read to its end (here its next link leads back to its first page; one longer than the
    // page bound alike) leaves only the listing unconfirmed after the DELETE: the DELETE and the 404 were judged.
    const handler = editAnswer(reference.handler, (req, answer) => {
      if (req.method === "GET" && /^\/messages(\?|$)/.test(req.url ?? ""))
        answer.headers.link = '</messages>; rel="next"';
    });
    const outcome = await verdictOf(deleteThen404, handler);
    expect(outcome.status, outcome.message).toBe("pass");
    expect(outcome.message).toMatch(/DELETE \/messages\/\S+ → 204, then GET → 404, the listing not read to its end/);
  });

  it("fails a DELETE that answers 204 and deletes nothing, saying why", async () => {
    const outcome = await verdictOf(deleteThen404, defects.deleteIgnored(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/^after DELETE \/messages\/[^ ]+ answered 204, GET answers 200 OK, not 404 or 410/);
  });
});
