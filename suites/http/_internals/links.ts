// Reads what a response offers to follow: Link and Location headers, and links inside JSON or XML representations.
import { XMLParser } from "fast-xml-parser";
import LinkHeader from "http-link-header";
import type { HttpResponse } from "../../../harness/targets/http-target.js";

export interface FoundLink {
  href: string;
  rel?: string;
  /** The method a link object in a body names for it (a `method` member or attribute), when it names one. */
  method?: string;
  /** Where it was found, for reports: "Link header", "Location header", "body". */
  from: string;
}

/** Bounds on walking a representation: a hostile or huge body cannot make discovery loop or balloon. */
const MAX_DEPTH = 24;
const MAX_LINKS = 1000;

/** The type before any parameters. Not content-type's parse: it throws on `application/json;`, which servers send. */
export function mediaTypeOf(res: HttpResponse): string {
  return (res.headers["content-type"]?.[0] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

export const isJsonType = (type: string) => type === "application/json" || type.endsWith("+json");
export const isXmlType = (type: string) => type === "application/xml" || type === "text/xml" || type.endsWith("+xml");

/**
 * Deepest nesting a representation may have to be parsed at all. Parsers build every level (a body of 8 MiB of
 * brackets is four million nested arrays: GiBs and a minute), while a resource's representation is a few levels
 * deep and no walk here goes past MAX_DEPTH: a body nested deeper is no representation, found in one linear scan.
 */
export const MAX_PARSE_DEPTH = 64;

/** Whether JSON text nests at most maxDepth deep: one pass, brackets inside strings ignored. */
export function jsonNestsWithin(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return false;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return true;
}

/**
 * Whether XML text nests at most maxDepth elements deep: one pass over its tags (declarations, comments and self-closed
 * tags aside).
 */
export function xmlNestsWithin(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let at = text.indexOf("<"); at !== -1; at = text.indexOf("<", at + 1)) {
    const next = text[at + 1];
    if (next === "/") depth--;
    else if (next !== "?" && next !== "!") {
      const end = text.indexOf(">", at);
      if (end === -1) return true;
      if (text[end - 1] !== "/" && ++depth > maxDepth) return false;
      at = end;
    }
  }
  return true;
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (!jsonNestsWithin(text, MAX_PARSE_DEPTH)) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

const xmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  processEntities: false,
  parseTagValue: false,
});
/**
 * The same reading, with the five predefined entities and character references (&#x1F600;) decoded, as an XML reader
 * hands character data on (XML 1.0 §4.1, §4.6); the library decodes references only with htmlEntities. No entity can
 * be declared: a document type with an internal subset is no representation here (oneXmlDocument).
 */
const decodingXmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  processEntities: true,
  htmlEntities: true,
  parseTagValue: false,
});

/**
 * Largest XML body parsed: fast-xml-parser runs on the event loop at about 5 MiB/s (8 MiB of listing took 1.4 s), where
 * JSON.parse takes 8 MiB in about 0.1 s; a representation of a resource or a page of a listing is far smaller.
 */
export const MAX_XML_PARSE_BYTES = 1024 * 1024;

const XML_DECLARATION = /^<\?xml[\s?]/i;

/**
 * Whether text is shaped as one XML document (XML 1.0 §2.1, §2.8): the declaration at its very start if anywhere;
 * then comments, processing instructions and white space, at most one document type declaration among them; one
 * root element; after it comments, PIs and white space only. One linear pass over its markup, quoted attribute values
 * and CDATA aside; the parser judges the markup inside the root, but its validator lets text or a second element
 * follow a self-closed root, and refused comments before it. A document type with an internal subset is refused: it
 * may declare entities, which nothing here expands (this tool's choice, written in docs/checking-a-server.md).
 */
export function oneXmlDocument(text: string): boolean {
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (XML_DECLARATION.test(text.slice(at, at + 6))) {
    const end = text.indexOf("?>", at);
    if (end === -1) return false;
    at = end + 2;
  }
  let depth = 0;
  let roots = 0;
  let doctype = false;
  while (at < text.length) {
    const lt = text.indexOf("<", at);
    if (depth === 0 && /[^ \t\r\n]/.test(lt === -1 ? text.slice(at) : text.slice(at, lt))) return false;
    if (lt === -1) break;
    const closer = text.startsWith("<!--", lt)
      ? "-->"
      : text.startsWith("<![CDATA[", lt)
        ? "]]>"
        : text.startsWith("<?", lt)
          ? "?>"
          : undefined;
    if (closer !== undefined) {
      if ((closer === "]]>" && depth === 0) || (closer === "?>" && XML_DECLARATION.test(text.slice(lt, lt + 6))))
        return false;
      const end = text.indexOf(closer, lt + 2);
      if (end === -1) return false;
      at = end + closer.length;
      continue;
    }
    if (text[lt + 1] === "!") {
      // A document type declaration, once, before the root, without an internal subset ("[").
      const end = text.indexOf(">", lt);
      if (depth > 0 || roots > 0 || doctype || !text.startsWith("<!DOCTYPE", lt) || end === -1) return false;
      if (text.slice(lt, end).includes("[")) return false;
      doctype = true;
      at = end + 1;
      continue;
    }
    if (text[lt + 1] === "/") {
      const end = text.indexOf(">", lt);
      if (end === -1 || --depth < 0) return false;
      at = end + 1;
      continue;
    }
    if (depth === 0 && roots++ > 0) return false;
    let i = lt + 1;
    for (let quote = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (quote !== 0) {
        if (c === quote) quote = 0;
      } else if (c === 0x22 || c === 0x27) quote = c;
      else if (c === 0x3e) break;
    }
    if (i >= text.length) return false;
    if (text[i - 1] !== "/") depth++;
    at = i + 1;
  }
  return roots === 1 && depth === 0;
}

/** The document as data; `decode`: its character data as an XML reader gives it (references decoded). */
export function parseXml(text: string, decode = false): { ok: true; value: unknown } | { ok: false } {
  if (text.length > MAX_XML_PARSE_BYTES) return { ok: false };
  if (!oneXmlDocument(text)) return { ok: false };
  if (!xmlNestsWithin(text, MAX_PARSE_DEPTH)) return { ok: false };
  try {
    const value = (decode ? decodingXmlParser : xmlParser).parse(text, true) as unknown;
    return { ok: true, value };
  } catch {
    return { ok: false };
  }
}

type Representation = { format: "json" | "xml"; value: unknown } | undefined;

/** Each response parsed once, however many readers ask: discovery, links and checks read the same exchange. */
const parsed = new WeakMap<HttpResponse, Representation>();

/** The representation as data: JSON or XML by its Content-Type, or by what parses when the type says neither. */
export function representationOf(res: HttpResponse): Representation {
  if (parsed.has(res)) return parsed.get(res);
  const rep = parseRepresentation(res);
  parsed.set(res, rep);
  return rep;
}

function parseRepresentation(res: HttpResponse): Representation {
  const type = mediaTypeOf(res);
  if (isJsonType(type)) {
    const j = parseJson(res.text);
    return j.ok ? { format: "json", value: j.value } : undefined;
  }
  if (isXmlType(type)) {
    const x = parseXml(res.text);
    return x.ok ? { format: "xml", value: x.value } : undefined;
  }
  // A page for people (HTML) or a file is no representation of a resource; only an untyped body is sniffed.
  if (type !== "" && type !== "text/plain" && type !== "application/octet-stream") return undefined;
  const j = parseJson(res.text);
  if (j.ok && typeof j.value === "object" && j.value !== null) return { format: "json", value: j.value };
  const x = parseXml(res.text);
  return x.ok ? { format: "xml", value: x.value } : undefined;
}

/**
 * RFC 8288 (`<href>; rel="x", <href2>; rel="y z"`), one link per relation type; a header that does not parse offers
 * nothing.
 */
export function parseLinkHeader(value: string): FoundLink[] {
  let refs: LinkHeader.Reference[];
  try {
    refs = LinkHeader.parse(value).refs;
  } catch {
    return [];
  }
  return refs.map((r) => ({ href: r.uri, ...(r.rel !== undefined && { rel: r.rel }), from: "Link header" }));
}

export function linksOf(res: HttpResponse): FoundLink[] {
  const out: FoundLink[] = [];
  for (const v of res.headers["link"] ?? []) out.push(...parseLinkHeader(v));
  for (const v of res.headers["location"] ?? []) out.push({ href: v, from: "Location header" });
  const rep = representationOf(res);
  if (rep) walk(rep.value, undefined, out, 0);
  return out.slice(0, MAX_LINKS);
}

/** The links inside one parsed value (an item of a listing, say), in the forms linksOf knows. */
export function linksIn(value: unknown): FoundLink[] {
  const out: FoundLink[] = [];
  walk(value, undefined, out, 0);
  return out.slice(0, MAX_LINKS);
}

/**
 * The objects in a representation that carry a `body` member equal to the one given: a message, wherever the
 * server put it (the top, an envelope's data, a HAL _embedded list, an XML root's children).
 */
export function objectsWithBody(
  value: unknown,
  body: string,
  out: Record<string, unknown>[] = [],
  depth = 0,
): Record<string, unknown>[] {
  if (depth > MAX_DEPTH || out.length >= MAX_LINKS || value === null || typeof value !== "object") return out;
  if (Array.isArray(value)) {
    for (const item of value) objectsWithBody(item, body, out, depth + 1);
    return out;
  }
  const obj = value as Record<string, unknown>;
  const own = obj["body"];
  if (own === body || (body === "" && own === "")) out.push(obj);
  for (const v of Object.values(obj)) if (typeof v === "object") objectsWithBody(v, body, out, depth + 1);
  return out;
}

const LINK_ITEM = "#link-item";

/**
 * The link forms seen in the wild, none assumed by the spec: any `href` member or attribute (with a sibling `rel`),
 * HAL's `_links: { rel: { href } }`, and `links` as a list or map of strings.
 */
function walk(node: unknown, key: string | undefined, out: FoundLink[], depth: number): void {
  if (depth > MAX_DEPTH || out.length >= MAX_LINKS || node === null || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const item of node) {
      if (typeof item === "string" && (key === "links" || key === "_links" || key === "link"))
        out.push({ href: item, from: "body" });
      // An item of a list of links is a link object, not a map from rel to href.
      else walk(item, key === "links" || key === "_links" || key === "link" ? LINK_ITEM : key, out, depth + 1);
    }
    return;
  }
  const obj = node as Record<string, unknown>;
  const href = obj["href"] ?? obj["@_href"];
  if (typeof href === "string") {
    const rel =
      obj["rel"] ??
      obj["@_rel"] ??
      (key !== LINK_ITEM && key !== "links" && key !== "_links" && key !== "link" ? key : undefined);
    const method = obj["method"] ?? obj["@_method"];
    out.push({
      href,
      ...(typeof rel === "string" && { rel }),
      ...(typeof method === "string" && { method }),
      from: "body",
    });
  }
  for (const [k, v] of Object.entries(obj)) {
    if ((key === "links" || key === "_links") && typeof v === "string") out.push({ href: v, rel: k, from: "body" });
    else if (typeof v === "object") walk(v, k, out, depth + 1);
  }
}

/** Values of id members anywhere in a representation: what a path segment holding an id looks like on this server. */
export function idsOf(value: unknown, out = new Set<string>(), depth = 0): Set<string> {
  if (depth > MAX_DEPTH || out.size >= MAX_LINKS || value === null || typeof value !== "object") return out;
  if (Array.isArray(value)) {
    for (const item of value) idsOf(item, out, depth + 1);
    return out;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (/^(@_)?(_?id|uuid)$/i.test(k) && (typeof v === "string" || typeof v === "number")) out.add(String(v));
    else if (typeof v === "object") idsOf(v, out, depth + 1);
  }
  return out;
}

/** The items of a listing: the objects of every list in the representation other than its links, bounded. */
export function itemsOf(value: unknown, out: unknown[] = [], depth = 0, key?: string): unknown[] {
  if (depth > MAX_DEPTH || out.length >= MAX_LINKS || value === null || typeof value !== "object") return out;
  if (Array.isArray(value)) {
    if (key === "links" || key === "_links" || key === "link") return out;
    for (const item of value)
      if (item !== null && typeof item === "object" && !Array.isArray(item) && out.length < MAX_LINKS) out.push(item);
    return out;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k !== "links" && k !== "_links" && k !== "link" && typeof v === "object") itemsOf(v, out, depth + 1, k);
  }
  return out;
}

/**
 * Whether a representation lists items: a JSON array, or an object (or XML root) holding a list of objects
 * other than its links. A single item still counts when the member is named as a plural.
 */
export function looksLikeCollection(value: unknown): boolean {
  if (Array.isArray(value)) return true;
  if (value === null || typeof value !== "object") return false;
  let obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => !k.startsWith("?"));
  // An XML document parses to { rootName: {...} }.
  if (
    keys.length === 1 &&
    typeof obj[keys[0] as string] === "object" &&
    obj[keys[0] as string] !== null &&
    !Array.isArray(obj[keys[0] as string])
  ) {
    const inner = obj[keys[0] as string] as Record<string, unknown>;
    if (Object.values(inner).some((v) => Array.isArray(v) && v.some((x) => typeof x === "object"))) obj = inner;
  }
  // HAL puts the items under _embedded: { rel: [...] }.
  const embedded = obj["_embedded"];
  if (embedded !== null && typeof embedded === "object" && Object.values(embedded).some((v) => Array.isArray(v)))
    return true;
  return Object.entries(obj).some(
    ([k, v]) =>
      k !== "links" &&
      k !== "_links" &&
      k !== "link" &&
      Array.isArray(v) &&
      v.every((x) => typeof x === "object" && x !== null),
  );
}
