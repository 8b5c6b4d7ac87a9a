// Unit tests of http.model.stateful (property) (suites/http/model-stateful.ts), in memory: the reference's routes pass,
// a hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { modelStateful } from "../../../suites/http/model-stateful.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.model.stateful (property)", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(modelStateful, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a PUT served as a GET (200, nothing replaced), saying why", async () => {
    const outcome = await verdictOf(modelStateful, defects.putIgnored(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /the listing of \/messages does not show ".*", the body of \/messages\/[^ ]+, though it shows the sequence's other messages/,
    );
  });

  it("fails a DELETE that answers 204 and deletes nothing, saying why", async () => {
    const outcome = await verdictOf(modelStateful, defects.deleteIgnored(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /GET \/messages\/[^ ]+, deleted earlier in the sequence, answered 200 OK, not 404 or 410/,
    );
  });
});
