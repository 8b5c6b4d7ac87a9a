// JSON and XML representations: what every response body looks like, encoded a piece at a time as it is written,
// and the strict reading of request bodies.
//
// JSON (the default): a message is {"id", "body", "links"}; the collection {"messages": [...], "links"}; the
// root {"links"}; the reply {"body", "links"}; an error {"status", "reason", "message", "links"}.
// XML: <message><id/><body/><links/></message>, <messages>…</messages>, <root><links/></root> and
// <error><status/><reason/><message/><links/></error>, with links as <link rel= href= method=/>.
import { XMLParser } from "fast-xml-parser";
import { HttpError } from "./errors.js";
import type { Link } from "./links.js";
import type { Format } from "./negotiation.js";

/**
 * Text as one string, or as strings that make it when joined, none of them ending inside a surrogate pair: so a
 * reply's greeting and the stored body it quotes are written one after the other, and the stored body is never
 * copied to make a string of the two.
 */
export type Text = string | readonly string[];

export interface MessageRepresentation {
  /** Absent on the reply: it is a related document of a message, named by its path, with no id of its own. */
  id?: string;
  body: Text;
  links: readonly Link[];
}

export type Representation =
  | { kind: "root"; links: readonly Link[] }
  | ({ kind: "message" } & MessageRepresentation)
  | { kind: "messages"; messages: readonly MessageRepresentation[]; links: readonly Link[] }
  | { kind: "error"; status: number; reason: string; message: string; links: readonly Link[] };

/**
 * A representation encoded lazily: its length in bytes, counted without building it, and its bytes as strings of
 * at most MAX_PIECE_BYTES each, made one at a time as the reply is written. So a reply its client does not read
 * holds a piece in the process, not the whole representation (a body of `&` is five times its size in XML).
 */
export interface Encoded {
  bytes: number;
  pieces(): Generator<string, void, undefined>;
}

/** Text is escaped this many UTF-16 units at a time. */
const SLICE_UNITS = 2048;
/** A piece is handed on once it holds this many UTF-16 units. */
const PIECE_UNITS = 8192;
/**
 * The most UTF-8 bytes one piece takes: what is held when it is handed on (under PIECE_UNITS units, each at most 3
 * bytes), and one slice escaped (each unit at most 6 bytes: `\u0001` in JSON).
 */
export const MAX_PIECE_BYTES = 3 * PIECE_UNITS + 6 * SLICE_UNITS;

export function encode(format: Format, representation: Representation): Encoded {
  return {
    bytes: bytesOf(partsOf(format, representation)),
    pieces: () => piecesOf(partsOf(format, representation)),
  };
}

/** The whole representation as one string: for the small ones (an error a socket answers) and for tests. */
export function serialize(format: Format, representation: Representation): string {
  return [...encode(format, representation).pieces()].join("");
}

/**
 * The bytes one message takes in a page, as the page writes it, so that a page can be measured, and cut, message by
 * message as it is built, escaping included (`&` is five bytes in XML, a tab two in JSON), without encoding it.
 */
export function messageBytes(format: Format, message: MessageRepresentation): number {
  return bytesOf(messageParts(format, message));
}

/** Bytes a page's messages take beside their own encodings: JSON's commas between them. */
export function separatorBytes(format: Format): number {
  return format === "json" ? 1 : 0;
}

/** The length of a text in UTF-16 units, which its encoding is never shorter than. */
export function textLength(text: Text): number {
  return typeof text === "string" ? text.length : text.reduce((n, s) => n + s.length, 0);
}

/** A run of a representation: text written as it is ("none"), or escaped for a JSON string or XML character data. */
interface Part {
  escaping: "none" | Format;
  text: Text;
}

const literal = (text: string): Part => ({ escaping: "none", text });

function* partsOf(format: Format, r: Representation): Generator<Part, void, undefined> {
  switch (r.kind) {
    case "message":
      if (format === "xml") yield literal(XML_DECLARATION);
      yield* messageParts(format, r);
      return yield literal("\n");
    case "messages":
      return yield* pageParts(format, r.messages, r.links);
    case "root":
      return yield literal(
        format === "json"
          ? `${JSON.stringify({ links: r.links })}\n`
          : `${XML_DECLARATION}<root>${linksXml(r.links)}</root>\n`,
      );
    case "error":
      return yield literal(
        format === "json"
          ? `${JSON.stringify({ status: r.status, reason: r.reason, message: r.message, links: r.links })}\n`
          : errorXml(r),
      );
  }
}

/** One message: {"id","body","links"} (id absent on the reply), or <message><id/><body/><links/></message>. */
function* messageParts(format: Format, m: MessageRepresentation): Generator<Part, void, undefined> {
  if (format === "json") {
    yield literal(m.id === undefined ? '{"body":"' : `{"id":${JSON.stringify(m.id)},"body":"`);
    yield { escaping: "json", text: m.body };
    return yield literal(`","links":${JSON.stringify(m.links)}}`);
  }
  yield literal(m.id === undefined ? "<message><body>" : `<message><id>${escapeText(m.id)}</id><body>`);
  yield { escaping: "xml", text: m.body };
  yield literal(`</body>${linksXml(m.links)}</message>`);
}

function* pageParts(
  format: Format,
  messages: readonly MessageRepresentation[],
  links: readonly Link[],
): Generator<Part, void, undefined> {
  yield literal(format === "json" ? '{"messages":[' : `${XML_DECLARATION}<messages>`);
  for (const [i, message] of messages.entries()) {
    if (i > 0 && format === "json") yield literal(",");
    yield* messageParts(format, message);
  }
  yield literal(format === "json" ? `],"links":${JSON.stringify(links)}}\n` : `${linksXml(links)}</messages>\n`);
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

function errorXml(r: Extract<Representation, { kind: "error" }>): string {
  return (
    `${XML_DECLARATION}<error><status>${r.status}</status><reason>${escapeText(r.reason)}</reason>` +
    `<message>${escapeText(r.message)}</message>${linksXml(r.links)}</error>\n`
  );
}

function linksXml(links: readonly Link[]): string {
  const items = links.map(
    (l) => `<link rel="${escapeAttribute(l.rel)}" href="${escapeAttribute(l.href)}" method="${l.method}"/>`,
  );
  return `<links>${items.join("")}</links>`;
}

function bytesOf(parts: Iterable<Part>): number {
  let bytes = 0;
  for (const part of parts) for (const s of stringsOf(part.text)) bytes += escapedBytes(s, part.escaping);
  return bytes;
}

/** The parts' escaped text in pieces of about PIECE_UNITS units: small parts joined, large ones cut. */
function* piecesOf(parts: Iterable<Part>): Generator<string, void, undefined> {
  let held = "";
  for (const part of parts) {
    for (const slice of slicesOf(part.text)) {
      held += escapePart(slice, part.escaping);
      if (held.length >= PIECE_UNITS) {
        yield held;
        held = "";
      }
    }
  }
  if (held !== "") yield held;
}

function stringsOf(text: Text): readonly string[] {
  return typeof text === "string" ? [text] : text;
}

/**
 * The text in slices of at most SLICE_UNITS units, never between the two halves of a surrogate pair: escaping works
 * unit by unit but for such a pair (JSON escapes a lone half), and a piece is turned into UTF-8 on its own.
 */
function* slicesOf(text: Text): Generator<string, void, undefined> {
  for (const s of stringsOf(text)) {
    for (let at = 0; at < s.length; ) {
      let end = Math.min(s.length, at + SLICE_UNITS);
      if (end < s.length && isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end))) end--;
      yield s.slice(at, end);
      at = end;
    }
  }
}

function escapePart(text: string, escaping: Part["escaping"]): string {
  if (escaping === "json") return JSON.stringify(text).slice(1, -1);
  return escaping === "xml" ? escapeText(text) : text;
}

/** UTF-8 bytes of one ASCII unit once escaped: in JSON `"` and `\` and the controls, in XML `&`, `<`, `>` and CR. */
const ASCII_BYTES: Readonly<Record<Part["escaping"], Uint8Array>> = {
  none: new Uint8Array(128).fill(1),
  json: new Uint8Array(128).map((_, c) =>
    c === 0x22 || c === 0x5c || [0x08, 0x09, 0x0a, 0x0c, 0x0d].includes(c) ? 2 : c < 0x20 ? 6 : 1,
  ),
  xml: new Uint8Array(128).map((_, c) => (c === 0x26 || c === 0x0d ? 5 : c === 0x3c || c === 0x3e ? 4 : 1)),
};

/**
 * The UTF-8 bytes of `text` once escaped, counted without escaping it. A lone surrogate is `\udxxx` in JSON (as
 * JSON.stringify writes it) and U+FFFD, three bytes, anywhere else (as Buffer writes it).
 */
function escapedBytes(text: string, escaping: Part["escaping"]): number {
  const ascii = ASCII_BYTES[escaping];
  const lone = escaping === "json" ? 6 : 3;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += ascii[c]!;
    else if (c < 0x800) bytes += 2;
    else if (!isSurrogate(c)) bytes += 3;
    else if (isHighSurrogate(c) && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += lone;
  }
  return bytes;
}

const isSurrogate = (c: number) => c >= 0xd800 && c <= 0xdfff;
const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

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
const TEXT_ENTITIES: ReadonlyArray<readonly [string, string]> = [
  ["&", "&amp;"],
  ["<", "&lt;"],
  [">", "&gt;"],
  ["\r", "&#13;"],
];
const ATTRIBUTE_ENTITIES: ReadonlyArray<readonly [string, string]> = [
  ...TEXT_ENTITIES,
  ['"', "&quot;"],
  ["\t", "&#9;"],
  ["\n", "&#10;"],
];
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
  if (/<!DOCTYPE|<!ENTITY/i.test(text))
    throw new HttpError(400, "XML with a document type declaration is not accepted");
  checkXmlText(text);
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
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
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
      throw new HttpError(
        400,
        `"${field}" contains U+${code.toString(16).toUpperCase().padStart(4, "0")}, which a message cannot carry`,
      );
    }
  }
}

/** The checks of an XML request's text the parser leaves undone: its references, and what lies beside its root. */
function checkXmlText(text: string): void {
  checkXmlReferences(text);
  checkBesideRoot(text);
}

/**
 * Beside the root element a document holds only comments, processing instructions (the XML declaration is one in
 * form) and white space: XML 1.0 §2.1 (document ::= prolog element Misc*) and §2.8. Text, a reference or a CDATA
 * section there makes it ill formed, and the parser lets all of them through: it keeps a CDATA section as a node
 * beside the root and drops a reference after it. So the top level is walked here, one markup construct at a time
 * (linear: each is skipped with one indexOf); whatever else is malformed is left to the parser's validation.
 * Exported for the broken HTTP servers' base (fixtures/broken-servers/http/_base), which reads XML as this does.
 */
export function checkBesideRoot(text: string): void {
  let depth = 0;
  let at = 0;
  while (at < text.length) {
    const lt = text.indexOf("<", at);
    const end = lt === -1 ? text.length : lt;
    if (depth === 0 && !/^[ \t\r\n]*$/.test(text.slice(at, end))) {
      throw new HttpError(400, "malformed XML: text or a reference outside the root element");
    }
    if (lt === -1) return;
    if (text.startsWith("<!--", lt)) at = after(text, "-->", lt + 4);
    else if (text.startsWith("<?", lt)) at = after(text, "?>", lt + 2);
    else if (text.startsWith("<![CDATA[", lt)) {
      if (depth === 0) throw new HttpError(400, "malformed XML: a CDATA section outside the root element");
      at = after(text, "]]>", lt + 9);
    } else {
      at = tagEnd(text, lt + 1);
      if (text[lt + 1] === "/") depth--;
      else if (text[at - 2] !== "/") depth++;
    }
  }
}

/** Where the text goes on after the first `close` from `from` (its end if none: the parser refuses that). */
function after(text: string, close: string, from: number): number {
  const found = text.indexOf(close, from);
  return found === -1 ? text.length : found + close.length;
}

/** Where the text goes on after a tag's `>`, skipping quoted attribute values, which may hold `>`. */
function tagEnd(text: string, from: number): number {
  let at = from;
  while (at < text.length) {
    const char = text[at];
    if (char === ">") return at + 1;
    at = char === '"' || char === "'" ? after(text, char, at + 1) : at + 1;
  }
  return at;
}
