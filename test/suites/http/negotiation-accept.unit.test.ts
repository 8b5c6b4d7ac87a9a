// Unit tests of http.negotiation.accept (suites/http/negotiation-accept.ts), in memory: the reference's routes pass, a
// hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { negotiationAccept } from "../../../suites/http/negotiation-accept.js";
import type { HttpHandler } from "../../../harness/targets/http-inject.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

/** RFC 9110 §12.4.2's weights, as the reference reads them. */
const WEIGHT = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/;

/**
 * The reference's mutant negotiation.ts:36 (docs/mutation.md), wrapped around its routes: Accept split only at the
 * commas the quote-aware split would keep (its lookahead negated), so a list whose first range has q= becomes one
 * range whose weight is no number, dropped; an Accept left with no range is answered 406, as negotiator does.
 */
function acceptListMisread(h: HttpHandler): HttpHandler {
  return (req, res) => {
    const accept = req.headers.accept;
    if (accept !== undefined && accept.trim() !== "") {
      const kept = accept.split(/,(?!(?:[^"]*"[^"]*")*[^"]*$)/).filter((range) => {
        const q = /;\s*q\s*=\s*([^;]*)/i.exec(range)?.[1];
        return q === undefined || WEIGHT.test(q.trim());
      });
      req.headers.accept = kept.length === 0 ? "image/png" : kept.join(",");
    }
    h(req, res);
  };
}

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.negotiation.accept", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(negotiationAccept, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails Accept not read (JSON whatever was asked), saying why", async () => {
    const outcome = await verdictOf(negotiationAccept, defects.acceptIgnored(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /with Accept: application\/xml answered 200 OK with Content-Type application\/json, neither XML nor 406/,
    );
  });

  it("fails a weighted Accept list misread as one range (406 where it rates JSON 0.9), saying why", async () => {
    const outcome = await verdictOf(negotiationAccept, acceptListMisread(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /with Accept: application\/xml;q=0\.5, application\/json answered 406 Not Acceptable .*not 200 with the message as JSON or XML: the list rates JSON/,
    );
  });
});
