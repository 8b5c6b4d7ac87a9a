// http.listing.next: a listing's rel="next" (RFC 8288) leads on through the collection: following it never comes
// back to a page already read. Judged only where the server pages, by its own next link on the listing or on the
// listing asked for one message a page (?limit=1, the commonest name, a guess that judges nothing where it is not
// understood). Found by mutation testing (docs/mutation.md): the reference's pages with their cursor dropped
// (page.ts:70, store.ts:137 and :141), each page the first again, its next link the page itself; and the next link
// dropped or made past the end (routes.ts:474): a hypermedia listing that shows one message of ?limit=1 and links
// nowhere further strands the rest, and a next link the server then refuses (4xx) is a transition it does not offer;
// a listing of ?limit=1 answered 500 is a server error (page.ts:90, its page made empty), and so is a page of the
// server's own next link answered 500 (store.ts:205, its cursors no longer decoded) or that link with its cursor forged
// answered 500 (store.ts:206, a cursor that does not decode read as one that does): a cursor the server never gave is
// the client's mistake, a 4xx (part 7), or a page where the server reads it leniently, never a server error.
// An empty last page is legal; a refusal a client may meet at any time (408, 410, 425, 429) or another 5xx than 500
// (502, 503, 504: a gateway or an outage) is not judged.
import { itemsOf, linksOf, representationOf } from "./_internals/links.js";
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { uniqueBody } from "./_internals/representation.js";
import { toTargetPath } from "./_internals/uri.js";

/** Pages one walk reads at most: a loop shows by the second or third, a long listing is not read to its end. */
const MAX_PAGES = 8;
/** Messages created to make a listing page, two at a time. */
const MAX_CREATED = 4;
/** The page size asked for when the listing shows no next link by itself. */
const GUESS = "limit=1";

export const listingNext = httpCheck(
  {
    id: "http.listing.next",
    title:
      'a paged listing\'s next link leads on: following rel="next" never returns to a page already read nor meets a ' +
      "refusal nor a 500, nor does that link with its cursor forged, and a page of a listing with links that " +
      "shows fewer than all links on (judged where the server " +
      "pages, by itself or with ?limit=1)",
    severity: "MUST",
    spec:
      "§4.2 (level 3: links to the next state transitions) and RFC 8288 §3.3 (the registered relation next: the " +
      "next in a series)",
  },
  async (p) => {
    const shown: string[] = [];
    const unpaged: string[] = [];
    for (const { path: c } of await p.reach()) {
      // Two messages, so that a listing of one a page has a second page whatever else the collection holds; two
      // more when no page links on yet, so that a server paging by two or three of its own shows its next link.
      let first: Exchange | "judged" | undefined;
      for (let made = 0; first === undefined && made < MAX_CREATED; made += 2) {
        await p.all([() => p.createOrStop(c, uniqueBody("page-a")), () => p.createOrStop(c, uniqueBody("page-b"))]);
        first = await pagedListing(p, c);
      }
      if (first === "judged") continue;
      if (first === undefined) {
        unpaged.push(c);
        continue;
      }
      const walked = await walk(p, first);
      if (walked !== undefined) shown.push(`${c}: ${walked}`);
      const forged = await forgedCursor(p, first);
      if (forged !== undefined) shown.push(forged);
    }
    if (shown.length === 0 && unpaged.length > 0 && p.problems.length === 0) {
      p.skip(
        `not applicable: no listing shows a next link, by itself or with ?${GUESS} (${unpaged.join(", ")}): the ` +
          `server does not page, or names its page size otherwise`,
      );
    }
    return shown.join("; ");
  },
);

/** Statuses a client may meet on any request, its own link or not: they end a walk unjudged. */
const TRANSIENT = new Set([408, 410, 425, 429]);

/**
 * The first page of a listing that has a next one: the listing as it is, else asked for one message a page. A page
 * of ?limit=1 showing one message (of the two or more made) that carries links, none of them next, strands the rest.
 */
async function pagedListing(p: Probe, c: string): Promise<Exchange | "judged" | undefined> {
  for (const path of [c, `${c}?${GUESS}`]) {
    const ex = await p.get(path);
    if (ex.res.status === 500) {
      p.problem(
        `GET ${path} answered ${statusLine(ex.res)}: a server error on a listing, where a server that does not ` +
          "page by ?limit= shows its listing or refuses the query with a 4xx",
        ex,
      );
      return "judged";
    }
    if (ex.res.status !== 200) continue;
    if (nextOf(p, ex) !== undefined) return ex;
    if (path !== c && strands(ex)) {
      p.problem(
        `GET ${path} shows one message of the two or more created, and links (level 3) but to no next page: the ` +
          `rest of the collection is not reachable from the listing by its links (rel="next", RFC 8288 §3.3)`,
        ex,
      );
      return "judged";
    }
  }
  return undefined;
}

/** A hypermedia page (it carries a link other than Location) holding exactly one item. */
function strands(ex: Exchange): boolean {
  const rep = representationOf(ex.res);
  const linked = linksOf(ex.res).some((l) => l.from !== "Location header");
  return rep !== undefined && linked && itemsOf(rep.value).length === 1;
}

function nextOf(p: Probe, ex: Exchange): string | undefined {
  const next = linksOf(ex.res).find((l) => l.rel?.toLowerCase() === "next");
  return next === undefined ? undefined : toTargetPath(next.href, p.target.baseUrl, ex.req.path, true);
}

/** Follows next from the first page within MAX_PAGES; a next link to a page already read is the problem. */
async function walk(p: Probe, first: Exchange): Promise<string | undefined> {
  const read = [first.req.path];
  let page = first;
  for (let next = nextOf(p, page); next !== undefined; next = nextOf(p, page)) {
    if (read.includes(next)) {
      p.problem(
        `following rel="next" from ${first.req.path}, ${page.req.path} links to ${next}, a page already read ` +
          `(page ${read.indexOf(next) + 1} of the walk): the series loops, so a client following next never ` +
          `reaches the end, nor the messages past the first page`,
        page,
      );
      return undefined;
    }
    if (read.length >= MAX_PAGES) return `${read.length} pages read by rel="next", none repeated (not read to the end)`;
    page = await p.get(next);
    read.push(next);
    if (page.res.status >= 400 && page.res.status < 500 && !TRANSIENT.has(page.res.status)) {
      p.problem(
        `following rel="next" from ${first.req.path}, GET ${next} (the server's own link, page ${read.length} of ` +
          `the walk) answered ${statusLine(page.res)}: a next link leads to the next page, an empty one at the ` +
          `end, never to a refusal`,
        page,
      );
      return undefined;
    }
    if (page.res.status === 500) {
      p.problem(
        `following rel="next" from ${first.req.path}, GET ${next} (the server's own link, page ${read.length} of ` +
          `the walk) answered ${statusLine(page.res)}: a server error on the page a link it gave leads to`,
        page,
      );
      return undefined;
    }
    // A page that does not answer 200 (a rate limit, a cursor that expired) ends the walk unjudged past it.
    if (page.res.status !== 200)
      return (
        `${read.length - 1} page(s) read by rel="next", none repeated; GET ${next} then answered ` +
        `${statusLine(page.res)}`
      );
  }
  return `${read.length} page(s) read by rel="next" to the end, none repeated`;
}

/**
 * The first page's next link with its cursor forged: the query parameter the link adds or changes (the cursor, its
 * name the server's) given another value, one the server never gave. Any answer but 500 is legal (a 4xx refusal, or
 * a page where the server reads it leniently); a 500 is a server error on the client's mistake (part 7). A next link
 * whose query holds nothing new (a cursor in the path) is not judged.
 */
async function forgedCursor(p: Probe, first: Exchange): Promise<string | undefined> {
  const next = nextOf(p, first);
  if (next === undefined) return undefined;
  const given = new URL(first.req.path, "http://target.invalid").searchParams;
  const url = new URL(next, "http://target.invalid");
  const name = [...url.searchParams.keys()].find((k) => url.searchParams.get(k) !== given.get(k));
  if (name === undefined) return undefined;
  url.searchParams.set(name, `${url.searchParams.get(name) ?? ""}~forged`);
  const path = `${url.pathname}${url.search}`;
  const ex = await p.get(path);
  if (ex.res.status === 500) {
    p.problem(
      `GET ${path} (the next link of ${first.req.path} with its ${JSON.stringify(name)} forged) answered ` +
        `${statusLine(ex.res)}: a value the server never gave is the client's mistake (a 4xx, part 7), or read ` +
        "leniently, not a server error",
      ex,
    );
    return undefined;
  }
  return `GET ${path} (the next link's ${JSON.stringify(name)} forged) → ${ex.res.status}`;
}
