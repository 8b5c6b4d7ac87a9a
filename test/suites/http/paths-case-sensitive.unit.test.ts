// Unit tests of http.paths.case-sensitive (SHOULD) (suites/http/paths-case-sensitive.ts), in memory: the reference's
// routes pass, a hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { pathsCaseSensitive } from "../../../suites/http/paths-case-sensitive.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.paths.case-sensitive (SHOULD)", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(pathsCaseSensitive, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails paths routed whatever their case, saying why", async () => {
    const outcome = await verdictOf(pathsCaseSensitive, defects.caseInsensitive(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/^GET \/MESSAGES answered 200 OK: an upper-cased spelling is served as \/messages/);
  });
});
