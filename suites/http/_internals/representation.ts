// Message representations as the HTTP checks send and read them: JSON or XML, with the body field wherever the
// representation's shape (open beyond that field, part 2) puts it.
import type { HttpResponse } from "../../../harness/targets/http-target.js";
import { representationOf } from "./links.js";

export const JSON_TYPE = "application/json";
export const XML_TYPE = "application/xml";

/** The default representation (§2: Message has one field, body): JSON, the usual choice (§1 principle 3). */
export const messageJson = (body: string): string => JSON.stringify({ body });
export const messageXml = (body: string): string => `<message><body>${escapeXml(body)}</body></message>`;

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

let tokens = 0;
/** A body no other request of any run will send, so that finding it in a response means this probe's message. */
export function uniqueBody(label: string): string {
  tokens++;
  return `conformance-${label}-${Date.now().toString(36)}-${tokens}-${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/** The representation's own members: a JSON object, or the root element of an XML document. */
export function topObject(value: unknown, format: "json" | "xml"): Record<string, unknown> | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const obj = value as Record<string, unknown>;
  if (format === "json") return obj;
  const roots = Object.entries(obj).filter(([k]) => !k.startsWith("?"));
  const root = roots[0]?.[1];
  return root !== null && typeof root === "object" && !Array.isArray(root) ? (root as Record<string, unknown>) : undefined;
}

/** Members an envelope commonly wraps one resource in. */
const ENVELOPES = ["data", "message", "item", "result", "resource", "value", "content"];

/**
 * The message's own members: the top object, or the object an envelope wraps it in ({"data": {...}}), since the
 * representation's shape beyond the body field is not shown (part 2).
 */
export function messageObject(value: unknown, format: "json" | "xml"): Record<string, unknown> | undefined {
  const top = topObject(value, format);
  if (!top || "body" in top) return top;
  for (const name of ENVELOPES) {
    const inner = top[name];
    if (inner !== null && typeof inner === "object" && !Array.isArray(inner) && "body" in inner) return inner as Record<string, unknown>;
  }
  return top;
}

/** The body field of a message representation, JSON or XML, or undefined when there is none. */
export function bodyFieldOf(res: HttpResponse): string | undefined {
  const rep = representationOf(res);
  if (!rep) return undefined;
  const top = messageObject(rep.value, rep.format);
  const body = top?.["body"];
  if (typeof body === "string") return body;
  // An empty XML element parses to "".
  return body === undefined || body === null ? undefined : typeof body === "object" ? undefined : String(body);
}

/** What a representation showed of the body, for a message: the value quoted, or that it had none. */
export const shownBody = (body: string | undefined): string => (body === undefined ? "no body" : `body ${JSON.stringify(body)}`);
