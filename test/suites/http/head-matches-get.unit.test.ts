// Unit tests of http.head.matches-get (suites/http/head-matches-get.ts), in memory: the reference's routes pass, a
// hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { headMatchesGet } from "../../../suites/http/head-matches-get.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.head.matches-get", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(headMatchesGet, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a HEAD whose Content-Type is not GET's, saying why", async () => {
    const outcome = await verdictOf(headMatchesGet, defects.headDiffers(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^HEAD \/messages headers differ from GET's: content-type: GET application\/json; charset=utf-8, HEAD text\/plain/,
    );
  });
});
