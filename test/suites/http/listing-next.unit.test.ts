// Unit tests of http.listing.next (suites/http/listing-next.ts), in memory: the reference's routes pass (they page by
// ?limit=), hand-written defects (the cursor of the next link dropped; the next link dropped; a next link past the
// last page) fail with their reason, and a server that does not page is not applicable; no socket is opened (the
// unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
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

/**
 * The collection's listings with their links edited, in the Link header and in the JSON body alike (the body is
 * written again, so its length is left to Node).
 */
function editListingLinks(h: HttpHandler, edit: (links: Link[], query: URLSearchParams) => Link[]): HttpHandler {
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://in-memory");
    if (req.method !== "GET" || url.pathname !== "/messages") return h(req, res);
    const writeHead = res.writeHead;
    const end = res.end;
    res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
      const given = rest.find((r): r is Record<string, unknown> => typeof r === "object" && r !== null);
      const headers = given ?? {};
      const links = edit(
        [...String(headers["link"] ?? res.getHeader("link") ?? "").matchAll(/<([^>]*)>; rel="([^"]*)"/g)].map((m) => ({
          href: m[1] ?? "",
          rel: m[2] ?? "",
        })),
        url.searchParams,
      );
      delete headers["content-length"];
      delete headers["link"];
      res.removeHeader("content-length");
      res.setHeader("link", links.map((l) => `<${l.href}>; rel="${l.rel}"`).join(", "));
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, [status, ...rest]);
    } as typeof res.writeHead;
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      if (res.statusCode === 200 && chunk !== undefined && typeof chunk !== "function") {
        const json = JSON.parse(String(chunk)) as { links: Link[] };
        json.links = edit(json.links, url.searchParams);
        return (end as (...a: unknown[]) => ServerResponse).apply(this, [JSON.stringify(json), ...rest]);
      }
      return (end as (...a: unknown[]) => ServerResponse).apply(this, [chunk, ...rest]);
    } as typeof res.end;
    h(req, res);
  };
}

interface Link {
  rel: string;
  href: string;
}

/** A next link to the listing asked for, at the cursor given. */
function nextAt(query: URLSearchParams, cursor: string): Link {
  const next = new URLSearchParams(query);
  next.set("cursor", cursor);
  return { rel: "next", href: `/messages?${next}` };
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

  it("fails a listing of ?limit=1 that links to no next page (the reference's mutant routes.ts:474 true)", async () => {
    const outcome = await verdictOf(
      listingNext,
      editListingLinks(reference.handler, (links) => links.filter((l) => l.rel !== "next")),
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /GET \/messages\?limit=1 shows one message of the two or more created, and links \(level 3\) but to no next/,
    );
  });

  it("fails a next link on the last page that the server refuses (the mutant routes.ts:474 false)", async () => {
    const outcome = await verdictOf(
      listingNext,
      editListingLinks(reference.handler, (links, query) =>
        links.some((l) => l.rel === "next") ? links : [...links, nextAt(query, "undefined")],
      ),
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/cursor=undefined \(the server's own link, page \d+ of the walk\) answered 400/);
  });

  it("passes a last page whose next link leads to an empty page, which links nowhere", async () => {
    // The page after the last is served as a listing no message matches: empty, with no next link.
    const lastLinksOn = editListingLinks(reference.handler, (links, query) =>
      links.some((l) => l.rel === "next") || query.has("body") ? links : [...links, nextAt(query, "end")],
    );
    const outcome = await verdictOf(
      listingNext,
      editQuery(lastLinksOn, (q) => {
        if (q.get("cursor") !== "end") return;
        q.delete("cursor");
        q.set("body", "no message has this body");
      }),
    );
    expect(outcome.status, outcome.message).toBe("pass");
  });

  it("fails a listing of ?limit=1 answered 500 (the mutant page.ts:90:57, its page made empty)", async () => {
    const limit500: HttpHandler = (req, res) => {
      if (req.method === "GET" && /^\/messages\?(.*&)?limit=/.test(req.url ?? "")) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end('{"error":"internal"}');
        return;
      }
      reference.handler(req, res);
    };
    const outcome = await verdictOf(listingNext, limit500);
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /GET \/messages\?limit=1 answered 500 Internal Server Error: a server error on a listing/,
    );
  });
});

/** The collection's listings asked with a cursor `fails` picks answered 500, the reference serving the rest. */
function cursor500(h: HttpHandler, fails: (cursor: string) => boolean): HttpHandler {
  return (req, res) => {
    const cursor = new URL(req.url ?? "/", "http://in-memory").searchParams.get("cursor");
    if (cursor !== null && fails(cursor)) return void res.writeHead(500, { "content-type": "text/plain" }).end("oops");
    h(req, res);
  };
}

describe("http.listing.next: server errors on a next link and on a forged cursor", () => {
  it("fails a next link whose page answers 500 (the mutant store.ts:205, cursors not decoded), saying why", async () => {
    const outcome = await verdictOf(
      listingNext,
      cursor500(reference.handler, () => true),
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^following rel="next" from \/messages\?limit=1, GET \/messages\?limit=1&cursor=[^ ]+ \(the server's own link, page 2 of the walk\) answered 500 Internal Server Error/,
    );
  });

  it("fails a forged cursor answered 500 (the mutant store.ts:206, ?.[1] to [1]), saying why", async () => {
    const outcome = await verdictOf(
      listingNext,
      cursor500(reference.handler, (c) => c.includes("~")),
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^GET \/messages\?limit=1&cursor=[^ ]+ \(the next link of \/messages\?limit=1 with its "cursor" forged\) answered 500/,
    );
  });

  it("passes a forged cursor read leniently, as the first page (no 4xx, no 5xx)", async () => {
    const lenient = editQuery(reference.handler, (q) => {
      if (q.get("cursor")?.includes("~")) q.delete("cursor");
    });
    const outcome = await verdictOf(listingNext, lenient);
    expect(outcome.status, outcome.message).toBe("pass");
    expect(outcome.message).toMatch(/GET \/messages\?limit=1&cursor=[^ ]+ \(the next link's "cursor" forged\) → 200/);
  });
});
