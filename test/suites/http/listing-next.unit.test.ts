// Unit tests of http.listing.next (suites/http/listing-next.ts), in memory: the reference's routes pass (they page by
// ?limit=), a hand-written defect (the cursor of the next link dropped) fails with its reason, and a server that
// does not page is not applicable; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpHandler } from "../../../harness/targets/http-inject.js";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { listingNext } from "../../../suites/http/listing-next.js";
import { verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

/** The collection's query edited before the reference serves it. */
function editQuery(h: HttpHandler, edit: (query: URLSearchParams) => void): HttpHandler {
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://in-memory");
    if (url.pathname === "/messages") {
      edit(url.searchParams);
      const query = url.searchParams.toString();
      req.url = `${url.pathname}${query === "" ? "" : `?${query}`}`;
    }
    h(req, res);
  };
}

describe("http.listing.next", () => {
  it("passes the reference's routes, walking its pages of ?limit=1", async () => {
    const outcome = await verdictOf(listingNext, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    expect(outcome.message).toMatch(/\/messages: \d+ page\(s\)? read by rel="next"/);
  });

  it("fails a listing whose next link's cursor is ignored (the reference's mutant page.ts:70), saying why", async () => {
    const outcome = await verdictOf(
      listingNext,
      editQuery(reference.handler, (q) => q.delete("cursor")),
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /links to \/messages\?limit=1&cursor=[^ ]+, a page already read \(page 2 of the walk\): the series loops/,
    );
  });

  it("is not applicable to a server that does not page (limit not understood), saying so", async () => {
    const outcome = await verdictOf(
      listingNext,
      editQuery(reference.handler, (q) => q.delete("limit")),
    );
    expect(outcome.status, outcome.message).toBe("skip");
    expect(outcome.message).toMatch(/not applicable: no listing shows a next link, by itself or with \?limit=1/);
  });
});
