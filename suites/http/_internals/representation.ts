// Message representations as the HTTP checks send and read them: JSON or XML, with the body field wherever the
// representation's shape (open beyond that field, part 2) puts it.
import type { HttpResponse } from "../../../harness/targets/http-target.js";
import { representationOf } from "./links.js";

type Representation = ReturnType<typeof representationOf>;

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
  return root !== null && typeof root === "object" && !Array.isArray(root)
    ? (root as Record<string, unknown>)
    : undefined;
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
    if (inner !== null && typeof inner === "object" && !Array.isArray(inner) && "body" in inner)
      return inner as Record<string, unknown>;
  }
  return top;
}

/** The body field of a message representation, JSON or XML, or undefined when there is none. */
export function bodyFieldOf(res: HttpResponse, rep: Representation = representationOf(res)): string | undefined {
  if (!rep) return undefined;
  const top = messageObject(rep.value, rep.format);
  const body = top?.["body"];
  if (typeof body === "string") return body;
  // An empty XML element parses to "".
  return body === undefined || body === null ? undefined : typeof body === "object" ? undefined : String(body);
}

/** What a representation showed of the body, for a message: the value quoted, or that it had none. */
export const shownBody = (body: string | undefined): string =>
  body === undefined ? "no body" : `body ${JSON.stringify(body)}`;

/** Where in a representation a value lies: member names and array indexes from the top. */
export type ValuePath = readonly (string | number)[];
/** Nodes a search for the body visits, at most: a representation is read within bounds whatever its size. */
const MAX_SEARCHED_NODES = 20_000;
const MAX_DEPTH = 32;

/** The first place (breadth first, so the shallowest) where a representation holds this exact string. */
export function findString(value: unknown, needle: string): ValuePath | undefined {
  const queue: [unknown, ValuePath][] = [[value, []]];
  for (let i = 0; i < queue.length && i < MAX_SEARCHED_NODES; i++) {
    const [node, path] = queue[i] as [unknown, ValuePath];
    if (node === needle) return path;
    if (node === null || typeof node !== "object" || path.length >= MAX_DEPTH) continue;
    if (Array.isArray(node)) node.forEach((v, k) => queue.push([v, [...path, k]]));
    else for (const [k, v] of Object.entries(node as Record<string, unknown>)) queue.push([v, [...path, k]]);
  }
  return undefined;
}

export function valueAt(value: unknown, path: ValuePath): unknown {
  let node = value;
  for (const step of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string | number, unknown>)[step];
  }
  return node;
}

export const showPath = (path: ValuePath): string =>
  path.length === 0
    ? "the whole representation"
    : path
        .map((s) => (typeof s === "number" ? `[${s}]` : s))
        .join(".")
        .replace(/\.\[/g, "[");

/**
 * Where this run's target puts a message's body, per format (part 2 shows only the body field, not the shape
 * around it): learned from the first read that showed a body the run itself sent, then the one place every later
 * representation of that format is judged at.
 */
export class BodyPaths {
  readonly #paths = new Map<"json" | "xml", ValuePath>();

  /**
   * The body a representation shows: at the learned path; else where `sent` lies (which is then learned); else the
   * default field. `rep`: the response read otherwise than representationOf reads it (XML with references decoded).
   */
  bodyOf(res: HttpResponse, sent?: string, rep: Representation = representationOf(res)): string | undefined {
    if (!rep) return undefined;
    const learned = this.#paths.get(rep.format);
    if (learned !== undefined) return asText(valueAt(rep.value, learned));
    const byDefault = bodyFieldOf(res, rep);
    if (sent === undefined || byDefault === sent) return byDefault;
    const found = findString(rep.value, sent);
    if (found === undefined) return byDefault;
    this.#paths.set(rep.format, found);
    return sent;
  }

  /** The learned paths that are not the default body field, for reports ("JSON: data.attributes.body"). */
  unusual(): string[] {
    return [...this.#paths].map(([format, path]) => `${format.toUpperCase()} at ${showPath(path)}`);
  }
}

function asText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  return v === undefined || v === null || typeof v === "object" ? undefined : String(v);
}
