// Unit tests of http.status.reason-phrase (SHOULD, HTTP/1.1) (suites/http/status-reason-phrase.ts), in memory: the
// reference's routes pass, a hand-written defect fails with its reason; no socket is opened (the unit project refuses
// one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { statusReasonPhrase } from "../../../suites/http/status-reason-phrase.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.status.reason-phrase (SHOULD, HTTP/1.1)", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(statusReasonPhrase, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails 200 sent with another reason phrase, saying why", async () => {
    const outcome = await verdictOf(statusReasonPhrase, defects.wrongReason(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/→ 200 Fine: the status line says "Fine", not "OK"/);
  });

  it(
    "judges nothing, and says so, when no answer has a status with a standard phrase: never a pass with nothing " +
      "judged",
    async () => {
      const outcome = await verdictOf(
        statusReasonPhrase,
        (_req, res) => void res.writeHead(299, "Odd", { "content-type": "application/json" }).end("[]"),
      );
      expect(outcome.status, outcome.message).not.toBe("pass");
      expect(outcome.message).toMatch(/no status line to judge/);
    },
  );
});
