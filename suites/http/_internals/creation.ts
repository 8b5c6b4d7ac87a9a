// How a collection creates, learned once per run: POST on the collection (a collection, server-managed), or PUT at
// an id the client chooses (a store, client-managed: part 2 names both), or not at all (a read-only collection).
// Learned only when POST is refused with 405 or 501, so a collection that creates by POST costs nothing more.
import { randomUUID } from "node:crypto";
import type { CheckContext } from "../../../harness/check.js";
import type { HttpRequest, HttpResponse } from "../../../harness/targets/http-target.js";
import type { Exchange } from "./exchange.js";
import { JSON_TYPE, messageJson, uniqueBody } from "./representation.js";

/** What learning needs of the check's probe (probe.ts), which counts, records and cleans up each request. */
interface Prober {
  readonly ctx: CheckContext;
  templateOf(path: string): string;
  send(req: HttpRequest): Promise<Exchange>;
  sendBody(method: string, path: string, body: string): Promise<Exchange>;
  get(path: string): Promise<Exchange>;
  bodyOf(res: HttpResponse, sent?: string): string | undefined;
  own(path: string): void;
}

export type Creation =
  | { via: "POST" }
  | { via: "PUT"; evidence: string; idForm: () => string }
  | { via: "none"; evidence: string; defect?: boolean };

/** Answers by which a resource says it does not offer a method: 405 (with Allow, RFC 9110 15.5.6) and 501. */
export const REFUSALS = new Set([405, 501]);

/** The refusal in words, with the methods Allow names; undefined for any other answer. */
export function notOfferedBy(ex: Exchange): string | undefined {
  if (!REFUSALS.has(ex.res.status)) return undefined;
  const allow = ex.res.headers["allow"]?.join(", ");
  return `${ex.req.method} ${ex.req.path} answered ${ex.res.status}${allow !== undefined ? ` (Allow: ${allow})` : ""}`;
}

/** Id forms a store may take from its client, tried in order until one is taken: a UUID, then a number. */
const ID_FORMS: readonly (() => string)[] = [
  () => randomUUID(),
  () => String(100_000_000 + Math.floor(Math.random() * 899_999_999)),
];

const memoKey = (template: string) => `http.creation:${template}`;

/**
 * How the collection creates. Undefined until learned: `refused`, a POST it answered 405 or 501, starts the learning
 * (once per template and run), which PUTs a message at a new id of each form and reads it back.
 */
export function creationOf(p: Prober, collection: string, refused?: Exchange): Promise<Creation | undefined> {
  const template = p.templateOf(collection);
  const key = memoKey(template);
  const known = p.ctx.memo.get(key) as Promise<Creation> | undefined;
  if (known || !refused) return known ?? Promise.resolve(undefined);
  const learning = learn(p, collection, refused);
  p.ctx.memo.set(key, learning);
  return learning.then((how) => {
    p.ctx.capabilities?.learn(
      template,
      "create",
      how.via === "PUT"
        ? `by PUT at an id the client chooses (a store): ${how.evidence}`
        : how.via === "none"
          ? `not offered: ${how.evidence}`
          : "by POST",
    );
    return how;
  });
}

async function learn(p: Prober, collection: string, refused: Exchange): Promise<Creation> {
  const post = notOfferedBy(refused) ?? `POST ${collection} answered ${refused.res.status}`;
  const tried: string[] = [];
  for (const idForm of ID_FORMS) {
    const path = `${collection}/${idForm()}`;
    const body = uniqueBody("store");
    const put = await p.sendBody("PUT", path, messageJson(body));
    if (put.res.status >= 200 && put.res.status < 300) {
      p.own(path);
      const read = await p.get(path);
      if (read.res.status === 200 && p.bodyOf(read.res, body) === body) {
        return { via: "PUT", evidence: `${post}; PUT ${path} answered ${put.res.status} and GET shows it`, idForm };
      }
      // A 2xx to PUT says the representation was stored (RFC 9110 9.3.4): one that was not is a defect, not a choice.
      return {
        via: "none",
        evidence:
          `${post}; PUT ${path} answered ${put.res.status}, but GET then ` +
          `${read.res.status === 200 ? "showed another body" : `answered ${read.res.status}`}: nothing was stored`,
        defect: true,
      };
    }
    tried.push(`PUT ${path} answered ${put.res.status}`);
    // A refusal of the method says it of every id: no other form is tried.
    if (REFUSALS.has(put.res.status)) break;
  }
  return { via: "none", evidence: `${post}; ${tried.join("; ")}` };
}

/** PUTs a message at a new id of the form the store took. */
export async function putAtNewId(
  p: Prober,
  collection: string,
  body: string,
  extra: Partial<HttpRequest>,
): Promise<{ ex: Exchange; path: string }> {
  const how = (await creationOf(p, collection)) as Creation & { via: "PUT" };
  const path = `${collection}/${how.idForm()}`;
  const ex = await p.send({
    method: "PUT",
    path,
    headers: { accept: JSON_TYPE, "content-type": JSON_TYPE },
    body: messageJson(body),
    ...extra,
  });
  return { ex, path };
}
