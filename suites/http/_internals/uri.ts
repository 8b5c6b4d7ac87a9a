// Where things live on the target: an href the server offered as a path on the base URL, the URI of a created
// message (Location, a self link, an id), and a message found by reading a paged listing.
import { idsOf, linksIn, linksOf, objectsWithBody, representationOf } from "./links.js";
import type { Exchange } from "./exchange.js";
import { messageObject } from "./representation.js";

/** Turns an href the server offered into a path on the target, or undefined when it points elsewhere. */
export function toTargetPath(href: string, baseUrl: string, fromPath = "/", keepQuery = false): string | undefined {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  // A URI template's query part ({?q}) names optional parameters, not a path.
  const cleaned = href.replace(/\{[?&#][^}]*\}/g, "");
  let url: URL;
  try {
    url = new URL(cleaned, `${base.origin}${prefix}${fromPath}`);
  } catch {
    return undefined;
  }
  if (url.origin !== base.origin) return undefined;
  if (prefix !== "" && url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return undefined;
  const path = url.pathname.slice(prefix.length);
  return (path === "" ? "/" : path) + (keepQuery ? url.search : "");
}

export interface Located {
  path: string;
  /** How the URI was found, for reports. */
  how: string;
}

/**
 * Where a created resource lives. The spec leaves the URI form open, so each way a server may say it is tried:
 * the Location header (part 4.2), a self link in the representation, an id appended to the collection path.
 */
export function locate(collection: string, ex: Exchange, baseUrl: string): Located | undefined {
  const location = ex.res.headers["location"]?.[0];
  if (location !== undefined) {
    const path = toTargetPath(location, baseUrl, collection);
    if (path !== undefined) return { path: stripQuery(path), how: "Location header" };
  }
  const self = linksOf(ex.res).find((l) => l.from === "body" && l.rel === "self");
  if (self) {
    const path = toTargetPath(self.href, baseUrl, collection);
    if (path !== undefined && stripQuery(path) !== collection) return { path: stripQuery(path), how: "self link" };
  }
  const rep = representationOf(ex.res);
  const top = rep ? messageObject(rep.value, rep.format) : undefined;
  const id = top?.["id"] ?? top?.["_id"];
  if (typeof id === "string" || typeof id === "number")
    return { path: `${collection}/${encodeURIComponent(String(id))}`, how: "id member" };
  if (rep && idsOf(rep.value).size === 1)
    return { path: `${collection}/${encodeURIComponent([...idsOf(rep.value)][0] as string)}`, how: "id member" };
  return undefined;
}

const stripQuery = (path: string) => path.replace(/[?#].*$/, "");

/** Pages of a listing a check reads looking for one message: past them, its absence is not confirmed. */
export const MAX_LISTING_PAGES = 10;

export interface Listed {
  /** Whether a message with the body was listed. */
  present: boolean;
  /** Its URI, when the listed item says it (a self link, an href, an id). */
  found?: Located;
  pages: number;
  /** The whole listing was read: an absence is an answer. */
  complete: boolean;
  /** The last page read, for reports. */
  last?: Exchange;
}

/** What reading a listing came to: how many pages, whether it was read to its end, and its last page. */
export interface ListingRead {
  pages: number;
  /** The whole listing was read (or the visitor stopped it): an absence is an answer. */
  complete: boolean;
  last?: Exchange;
}

/**
 * Reads a collection's listing page by page (rel="next" in a Link header or the representation), within
 * MAX_LISTING_PAGES, handing each page to `visit` until it says it has what it came for.
 */
export async function readListing(
  get: (path: string) => Promise<Exchange>,
  collection: string,
  baseUrl: string,
  visit: (value: unknown, page: string, ex: Exchange) => boolean,
): Promise<ListingRead> {
  let path: string | undefined = collection;
  const seen = new Set<string>();
  let pages = 0;
  while (path !== undefined && pages < MAX_LISTING_PAGES && !seen.has(path)) {
    seen.add(path);
    const ex = await get(path);
    pages++;
    if (ex.res.status !== 200) return { pages, complete: false, last: ex };
    const rep = representationOf(ex.res);
    if (rep && visit(rep.value, path, ex)) return { pages, complete: true, last: ex };
    const next = linksOf(ex.res).find((l) => l.rel?.toLowerCase() === "next");
    path = next === undefined ? undefined : toTargetPath(next.href, baseUrl, path, true);
    if (path === undefined) return { pages, complete: next === undefined, last: ex };
  }
  return { pages, complete: false };
}

/** Looks for the message whose body is the one given in a collection's listing (readListing's bound). */
export async function searchListing(
  get: (path: string) => Promise<Exchange>,
  collection: string,
  body: string,
  baseUrl: string,
): Promise<Listed> {
  let found: Located | undefined;
  let present = false;
  const read = await readListing(get, collection, baseUrl, (value, page) => {
    const matches = holdersOf(value, body);
    if (matches.length === 0) return false;
    present = true;
    // The object holding the body may be a part of the item (JSON:API's attributes): the item around it says where it
    // is.
    for (const chain of matches)
      found ??= chain.map((item) => itemUri(collection, item, baseUrl, page)).find((l) => l !== undefined);
    return true;
  });
  return {
    present,
    pages: read.pages,
    complete: read.complete,
    ...(found && { found }),
    ...(read.last && { last: read.last }),
  };
}

/**
 * How many times each of the bodies appears in a collection's whole listing (readListing's bound); `complete`
 * false when the listing went past the bound or a page failed, so that no count is an answer.
 */
export async function countListed(
  get: (path: string) => Promise<Exchange>,
  collection: string,
  bodies: readonly string[],
  baseUrl: string,
): Promise<ListingRead & { counts: Map<string, number> }> {
  const counts = new Map(bodies.map((b) => [b, 0]));
  const read = await readListing(get, collection, baseUrl, (value) => {
    for (const body of bodies) counts.set(body, (counts.get(body) ?? 0) + objectsWithBody(value, body).length);
    return false;
  });
  return { ...read, counts };
}

/** Bounds on the walk of one listing page: it is the server's, of any size. */
const MAX_HOLDERS = 1_000;
const MAX_DEPTH = 32;

/**
 * Each object of a listing page whose body member is this body, with the objects around it up to the listed item
 * (an element of the page's array, or the page itself): innermost first.
 */
function holdersOf(value: unknown, body: string): Record<string, unknown>[][] {
  const out: Record<string, unknown>[][] = [];
  const visit = (node: unknown, around: Record<string, unknown>[], depth: number): void => {
    if (depth > MAX_DEPTH || out.length >= MAX_HOLDERS || node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, [], depth + 1);
      return;
    }
    const obj = node as Record<string, unknown>;
    const chain = [obj, ...around];
    if (obj["body"] === body) out.push(chain);
    for (const v of Object.values(obj)) visit(v, chain, depth + 1);
  };
  visit(value, [], 0);
  return out;
}

/** Where a listed item lives: its self link (or only link into the collection), or its id under the collection. */
function itemUri(
  collection: string,
  item: Record<string, unknown>,
  baseUrl: string,
  page: string,
): Located | undefined {
  const links = linksIn(item)
    .map((l) => ({ ...l, path: toTargetPath(l.href, baseUrl, page) }))
    .filter(
      (l): l is typeof l & { path: string } => l.path !== undefined && stripQuery(l.path).startsWith(`${collection}/`),
    );
  const self = links.find((l) => l.rel === "self") ?? (links.length === 1 ? links[0] : undefined);
  if (self) return { path: stripQuery(self.path), how: "listing's link" };
  const id = item["id"] ?? item["_id"] ?? item["@_id"];
  if (typeof id === "string" || typeof id === "number")
    return { path: `${collection}/${encodeURIComponent(String(id))}`, how: "listing's id" };
  return undefined;
}
