// The hypermedia of the HTTP interface: which links each representation carries, and the Link header that repeats them.
//
// Format: every representation has `links`, a list of { rel, href, method }: href is an absolute path on this
// server, method the HTTP method that follows the link. JSON: "links": [{"rel": "self", "href": "/messages/ID",
// "method": "GET"}]; XML: <links><link rel="self" href="/messages/ID" method="GET"/></links>. The rels are IANA
// link relations where one fits (self, collection, item, up, index) and these otherwise:
//   messages: the message collection (from the root)   create: POST a new message
//   update: PUT a replacement                            delete: DELETE this message
//   reply: the Hello reply to this message (/messages/{id}/reply)
// A page of the collection links to the following page with the IANA rel "next".

export interface Link {
  readonly rel: string;
  readonly href: string;
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
}

export const ROOT_PATH = "/";
export const COLLECTION_PATH = "/messages";

export function messagePath(id: string): string {
  return `${COLLECTION_PATH}/${encodeURIComponent(id)}`;
}

export function replyPath(id: string): string {
  return `${messagePath(id)}/reply`;
}

export function rootLinks(): Link[] {
  return [
    { rel: "self", href: ROOT_PATH, method: "GET" },
    { rel: "messages", href: COLLECTION_PATH, method: "GET" },
    { rel: "create", href: COLLECTION_PATH, method: "POST" },
  ];
}

/**
 * self keeps the query, so that a filtered list links to itself and not to the whole collection; next (RFC 8288)
 * is the following page, with the same filter and limit, when there is one.
 */
export function collectionLinks(query: string, nextQuery?: string): Link[] {
  return [
    { rel: "self", href: query === "" ? COLLECTION_PATH : `${COLLECTION_PATH}?${query}`, method: "GET" },
    ...(nextQuery === undefined
      ? []
      : [{ rel: "next", href: `${COLLECTION_PATH}?${nextQuery}`, method: "GET" } as const]),
    { rel: "create", href: COLLECTION_PATH, method: "POST" },
    { rel: "index", href: ROOT_PATH, method: "GET" },
  ];
}

export function messageLinks(id: string): Link[] {
  const self = messagePath(id);
  return [
    { rel: "self", href: self, method: "GET" },
    { rel: "update", href: self, method: "PUT" },
    { rel: "delete", href: self, method: "DELETE" },
    { rel: "reply", href: replyPath(id), method: "GET" },
    { rel: "collection", href: COLLECTION_PATH, method: "GET" },
  ];
}

export function replyLinks(id: string): Link[] {
  return [
    { rel: "self", href: replyPath(id), method: "GET" },
    { rel: "up", href: messagePath(id), method: "GET" },
    { rel: "collection", href: COLLECTION_PATH, method: "GET" },
  ];
}

/** Errors still offer a way on: back to the root, which links to everything else. */
export function errorLinks(): Link[] {
  return [{ rel: "index", href: ROOT_PATH, method: "GET" }];
}

/**
 * RFC 8288 Link header with the links a client can follow with GET, so that a client that reads only headers
 * (or a HEAD response) can still discover the interface. Items of a collection stay in the body: the header
 * would grow with the collection.
 */
export function linkHeader(links: readonly Link[]): string | undefined {
  const values = links.filter((l) => l.method === "GET").map((l) => `<${l.href}>; rel="${l.rel}"`);
  return values.length === 0 ? undefined : values.join(", ");
}
