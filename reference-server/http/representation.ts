// JSON and XML representations: what every response body looks like, and the strict reading of request bodies.
//
// JSON (the default): a message is {"id", "body", "links"}; the collection {"messages": [...], "links"}; the
// root {"links"}; the reply {"body", "links"}; an error {"status", "reason", "message", "links"}.
// XML: <message><id/><body/><links/></message>, <messages>…</messages>, <root><links/></root> and
// <error><status/><reason/><message/><links/></error>, with links as <link rel= href= method=/>.
import { XMLParser } from "fast-xml-parser";
import { HttpError } from "./errors.js";
import type { Link } from "./links.js";
import type { Format } from "./negotiation.js";

export interface MessageRepresentation {
  /** Absent on the reply: it is a related document of a message, named by its path, with no id of its own. */
  id?: string;
  body: string;
  links: readonly Link[];
}

export type Representation =
  | { kind: "root"; links: readonly Link[] }
  | ({ kind: "message" } & MessageRepresentation)
  | { kind: "messages"; messages: readonly MessageRepresentation[]; links: readonly Link[] }
  | { kind: "error"; status: number; reason: string; message: string; links: readonly Link[] };

export function serialize(format: Format, representation: Representation): string {
  if (representation.kind === "messages") {
    return serializePage(format, representation.messages.map((m) => encodeMessage(format, m)), representation.links);
  }
  return format === "json" ? `${JSON.stringify(toJson(representation))}\n` : toXml(representation);
}

/**
 * One message of a page as it appears in the page's body, so that a page can be measured, and cut, message by
 * message as it is built (escaping included: `&` is five bytes in XML, a tab two in JSON).
 */
export function encodeMessage(format: Format, message: MessageRepresentation): string {
  return format === "json" ? JSON.stringify(messageJson(message)) : messageXml(message);
}

/** A page of the collection from its messages as encodeMessage gave them: the same bytes serialize gives. */
export function serializePage(format: Format, encoded: readonly string[], links: readonly Link[]): string {
  return format === "json"
    ? `{"messages":[${encoded.join(",")}],"links":${JSON.stringify(links)}}\n`
    : `${XML_DECLARATION}<messages>${encoded.join("")}${linksXml(links)}</messages>\n`;
}

/** Bytes a page's messages take beside their own encodings: JSON's commas between them. */
export function separatorBytes(format: Format): number {
  return format === "json" ? 1 : 0;
}

function toJson(r: Exclude<Representation, { kind: "messages" }>): unknown {
  switch (r.kind) {
    case "root":
      return { links: r.links };
    case "message":
      return messageJson(r);
    case "error":
      return { status: r.status, reason: r.reason, message: r.message, links: r.links };
  }
}

function messageJson(m: MessageRepresentation): unknown {
  return m.id === undefined ? { body: m.body, links: m.links } : { id: m.id, body: m.body, links: m.links };
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

function toXml(r: Exclude<Representation, { kind: "messages" }>): string {
  switch (r.kind) {
    case "root":
      return `${XML_DECLARATION}<root>${linksXml(r.links)}</root>\n`;
    case "message":
      return `${XML_DECLARATION}${messageXml(r)}\n`;
    case "error":
      return (
        `${XML_DECLARATION}<error><status>${r.status}</status><reason>${escapeText(r.reason)}</reason>` +
        `<message>${escapeText(r.message)}</message>${linksXml(r.links)}</error>\n`
      );
  }
}

function messageXml(m: MessageRepresentation): string {
  const id = m.id === undefined ? "" : `<id>${escapeText(m.id)}</id>`;
  return `<message>${id}<body>${escapeText(m.body)}</body>${linksXml(m.links)}</message>`;
}

function linksXml(links: readonly Link[]): string {
  const items = links.map((l) => `<link rel="${escapeAttribute(l.rel)}" href="${escapeAttribute(l.href)}" method="${l.method}"/>`);
  return `<links>${items.join("")}</links>`;
}

/**
 * Written here rather than with the library's builder so that every character survives a round trip: a reader
 * turns a literal CR into LF, and in attributes folds tabs and newlines too, but keeps character references.
 */
function escapeText(text: string): string {
  return escapeWith(text, TEXT_ENTITIES);
}

function escapeAttribute(text: string): string {
  return escapeWith(text, ATTRIBUTE_ENTITIES);
}

// `&` first, so that no entity written by a later step is escaped again.
const TEXT_ENTITIES: ReadonlyArray<readonly [string, string]> = [["&", "&amp;"], ["<", "&lt;"], [">", "&gt;"], ["\r", "&#13;"]];
const ATTRIBUTE_ENTITIES: ReadonlyArray<readonly [string, string]> = [...TEXT_ENTITIES, ['"', "&quot;"], ["\t", "&#9;"], ["\n", "&#10;"]];
const NEEDS_ESCAPE = /[&<>"\t\n\r]/;

/**
 * One split and join per character escaped: on a 1 MiB body of `&` it takes about 22 ms where a replace with a
 * callback per match took 68 ms (node 20, the 2-core machine), and a body with nothing to escape is returned as is.
 */
function escapeWith(text: string, entities: ReadonlyArray<readonly [string, string]>): string {
  if (!NEEDS_ESCAPE.test(text)) return text;
  let out = text;
  for (const [char, entity] of entities) if (out.includes(char)) out = out.split(char).join(entity);
  return out;
}

/** What a client may send: a message's body. id and links are read-only; a client may send them back. */
export interface MessageInput {
  body: string;
  id?: string;
}

const FORBIDDEN_NAMES = new Set(["__proto__", "constructor", "prototype"]);

/** Strictly: anything but a message is a 400 that says what was wrong, so a typo never becomes an empty message. */
export function parseMessage(format: Format, raw: Buffer): MessageInput {
  let text: string;
  try {
    // Without ignoreBOM: a U+FEFF before the document is its encoding signature (XML 1.0 §4.3.3; RFC 8259 lets a
    // JSON parser ignore it), dropped here, not text. One inside the body's string is never first, so it is kept.
    text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    throw new HttpError(400, "the request body is not valid UTF-8");
  }
  if (text.trim() === "") throw new HttpError(400, "the request body is empty: send a message representation");
  const input = format === "json" ? parseJsonMessage(text) : parseXmlMessage(text);
  checkText(input.body, "body");
  if (input.id !== undefined) checkText(input.id, "id");
  return input;
}

function parseJsonMessage(text: string): MessageInput {
  let value: unknown;
  try {
    // JSON.parse makes "__proto__" an own property, never the prototype; the member check below rejects it.
    value = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `malformed JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'a message is a JSON object such as {"body": "..."}');
  }
  const input: MessageInput = { body: "" };
  for (const [name, member] of Object.entries(value)) {
    if (FORBIDDEN_NAMES.has(name)) throw new HttpError(400, `member "${name}" is not allowed`);
    switch (name) {
      case "body":
        if (typeof member !== "string") throw new HttpError(400, '"body" must be a string');
        input.body = member;
        break;
      case "id":
        if (typeof member !== "string") throw new HttpError(400, '"id" must be a string');
        input.id = member;
        break;
      case "links":
        if (!Array.isArray(member)) throw new HttpError(400, '"links" must be an array');
        break;
      default:
        throw new HttpError(400, `unknown member "${name}": a message has body (and read-only id and links)`);
    }
  }
  return input;
}

/**
 * A document type declaration is refused before parsing, so no entity can be declared, let alone expanded: no
 * XXE, no billion laughs. processEntities stays on for the five predefined entities, and htmlEntities for
 * character references (&#13;), which the parser decodes only with it; the HTML named entities it would also
 * decode never get here, because checkXmlReferences refuses every named entity XML does not predefine.
 */
const xmlParser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  cdataPropName: "#cdata",
  htmlEntities: true,
  processEntities: true,
});

type XmlNode = Record<string, unknown>;

function parseXmlMessage(text: string): MessageInput {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new HttpError(400, "XML with a document type declaration is not accepted");
  checkXmlReferences(text);
  let nodes: unknown;
  try {
    nodes = xmlParser.parse(text, true);
  } catch (err) {
    throw new HttpError(400, `malformed XML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const elements = (nodes as XmlNode[]).filter((n) => !isText(n));
  const root = elements[0];
  if (elements.length !== 1 || root === undefined || elementName(root) !== "message") {
    throw new HttpError(400, "an XML message is one <message> element such as <message><body>...</body></message>");
  }
  const input: MessageInput = { body: "" };
  const seen = new Set<string>();
  for (const child of children(root, "message")) {
    if (isText(child)) {
      if (textOf(child).trim() !== "") throw new HttpError(400, "<message> holds elements, not text");
      continue;
    }
    const name = elementName(child);
    if (seen.has(name)) throw new HttpError(400, `<${name}> may appear only once`);
    seen.add(name);
    switch (name) {
      case "body":
        input.body = textContent(child, "body");
        break;
      case "id":
        input.id = textContent(child, "id");
        break;
      case "links":
        break;
      default:
        throw new HttpError(400, `unknown element <${name}>: a message has <body> (and read-only <id> and <links>)`);
    }
  }
  return input;
}

function isText(node: XmlNode): boolean {
  return Object.hasOwn(node, "#text") || Object.hasOwn(node, "#cdata");
}

function textOf(node: XmlNode): string {
  if (Object.hasOwn(node, "#text")) return String(node["#text"]);
  const cdata = node["#cdata"];
  return Array.isArray(cdata) ? cdata.map((n: XmlNode) => textOf(n)).join("") : "";
}

function elementName(node: XmlNode): string {
  // Each element node has exactly one key, its name (attributes are ignored, so ":@" never appears).
  return Object.keys(node)[0] ?? "";
}

function children(node: XmlNode, name: string): XmlNode[] {
  const value = node[name];
  return Array.isArray(value) ? (value as XmlNode[]) : [];
}

function textContent(node: XmlNode, name: string): string {
  let text = "";
  for (const child of children(node, name)) {
    if (!isText(child)) throw new HttpError(400, `<${name}> holds text only, not <${elementName(child)}>`);
    text += textOf(child);
  }
  return text;
}

/**
 * The parser leaves an undeclared entity such as &nbsp; in the text as it was and silently drops a character
 * reference to a character XML forbids; both are errors in XML, so they are refused here. CDATA is exempt.
 */
function checkXmlReferences(text: string): void {
  const outsideCdata = text.replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, "");
  for (const match of outsideCdata.matchAll(/&([^;&<\s]*);?/g)) {
    const [whole, name = ""] = match;
    if (!whole.endsWith(";")) throw new HttpError(400, "malformed XML: a bare & must be written &amp;");
    if (["amp", "lt", "gt", "quot", "apos"].includes(name)) continue;
    const numeric = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(name);
    if (numeric) {
      const code = numeric[1] !== undefined ? parseInt(numeric[1], 16) : Number(numeric[2]);
      if (isXmlChar(code)) continue;
    }
    throw new HttpError(400, `malformed XML: &${name}; is not a predefined entity or a valid character reference`);
  }
}

function isXmlChar(code: number): boolean {
  return (
    code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff)
  );
}

/**
 * A stored body must be representable in both formats, so the characters XML 1.0 cannot carry (most C0 controls,
 * lone surrogates, U+FFFE and U+FFFF) are refused in JSON too, not stored and then unrepresentable.
 */
function checkText(text: string, field: string): void {
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (!isXmlChar(code)) {
      throw new HttpError(400, `"${field}" contains U+${code.toString(16).toUpperCase().padStart(4, "0")}, which a message cannot carry`);
    }
  }
}
