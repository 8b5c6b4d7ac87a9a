// Unit tests of http.update.put (suites/http/update-put.ts), in memory: the reference's routes pass, a hand-written
// defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { updatePut } from "../../../suites/http/update-put.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.update.put", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(updatePut, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a PUT served as a GET (200, nothing replaced), saying why", async () => {
    const outcome = await verdictOf(updatePut, defects.putIgnored(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^after PUT \/messages\/[^ ]+ answered 200, GET shows body "conformance-create-[^"]+", not the replacement/,
    );
  });
});
