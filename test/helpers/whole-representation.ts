// The representations as the reference server wrote them before replies were streamed: whole strings, copied as they
// were at commit 79b46fc and frozen there. The oracle the streamed encoding (representation.ts) is held to, byte for
// byte; it changes only if the representations themselves are meant to change.
import type { Link } from "../../reference-server/http/links.js";
import type { Format } from "../../reference-server/http/negotiation.js";

export interface WholeMessage {
  /** Absent on the reply: it is a related document of a message, named by its path, with no id of its own. */
  id?: string;
  body: string;
  links: readonly Link[];
}

export type WholeRepresentation =
  | { kind: "root"; links: readonly Link[] }
  | ({ kind: "message" } & WholeMessage)
  | { kind: "messages"; messages: readonly WholeMessage[]; links: readonly Link[] }
  | { kind: "error"; status: number; reason: string; message: string; links: readonly Link[] };

export function serializeWhole(format: Format, representation: WholeRepresentation): string {
  if (representation.kind === "messages") {
    return serializePage(
      format,
      representation.messages.map((m) => encodeMessage(format, m)),
      representation.links,
    );
  }
  return format === "json" ? `${JSON.stringify(toJson(representation))}\n` : toXml(representation);
}

/**
 * One message of a page as it appears in the page's body, so that a page can be measured, and cut, message by
 * message as it is built (escaping included: `&` is five bytes in XML, a tab two in JSON).
 */
export function encodeMessage(format: Format, message: WholeMessage): string {
  return format === "json" ? JSON.stringify(messageJson(message)) : messageXml(message);
}

/** A page of the collection from its messages as encodeMessage gave them: the same bytes serialize gives. */
function serializePage(format: Format, encoded: readonly string[], links: readonly Link[]): string {
  return format === "json"
    ? `{"messages":[${encoded.join(",")}],"links":${JSON.stringify(links)}}\n`
    : `${XML_DECLARATION}<messages>${encoded.join("")}${linksXml(links)}</messages>\n`;
}

function toJson(r: Exclude<WholeRepresentation, { kind: "messages" }>): unknown {
  switch (r.kind) {
    case "root":
      return { links: r.links };
    case "message":
      return messageJson(r);
    case "error":
      return { status: r.status, reason: r.reason, message: r.message, links: r.links };
  }
}

function messageJson(m: WholeMessage): unknown {
  return m.id === undefined ? { body: m.body, links: m.links } : { id: m.id, body: m.body, links: m.links };
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

function toXml(r: Exclude<WholeRepresentation, { kind: "messages" }>): string {
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

function messageXml(m: WholeMessage): string {
  const id = m.id === undefined ? "" : `<id>${escapeText(m.id)}</id>`;
  return `<message>${id}<body>${escapeText(m.body)}</body>${linksXml(m.links)}</message>`;
}

function linksXml(links: readonly Link[]): string {
  const items = links.map(
    (l) => `<link rel="${escapeAttribute(l.rel)}" href="${escapeAttribute(l.href)}" method="${l.method}"/>`,
  );
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
