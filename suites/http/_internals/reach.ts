// The collections the run exercises: those the user named and those discovery found (links, URI templates, the
// OpenAPI document), a related one (/<collection>/{id}/<related>) under a message created for the purpose.
// Kept here, not in the engine, until the engine hands checks the routes it found (issue 26 reshapes harness/).
import type { CheckContext } from "../../../harness/check.js";
import type { HttpTarget } from "../../../harness/targets/http-target.js";
import { configOf, MAX_PROBED_COLLECTIONS } from "./config.js";
import { discovery } from "./discovery.js";
import { templateOf } from "./path-rules.js";
import { JSON_TYPE, messageJson, uniqueBody } from "./representation.js";
import { REFUSALS } from "./creation.js";
import { locate } from "./uri.js";

/** A collection to exercise, as a template: a related one is reached under a message of `parent`. */
export interface Reachable {
  /** "/messages" or "/messages/{id}/notes". */
  template: string;
  /** For a related collection: the collection its parent message is created in, and the path below that message. */
  parent?: { collection: string; rest: string };
  /** Where the run found it, for the report. */
  source: string;
}

export interface Reach {
  collections: Reachable[];
  /** Collections found and not exercised, and why. */
  notes: string[];
}

const MEMO_KEY = "http.reach";

export function reach(ctx: CheckContext): Promise<Reach> {
  let memo = ctx.memo.get(MEMO_KEY) as Promise<Reach> | undefined;
  if (!memo) {
    memo = findReachable(ctx);
    ctx.memo.set(MEMO_KEY, memo);
  }
  return memo;
}

async function findReachable(ctx: CheckContext): Promise<Reach> {
  if (!ctx.http) throw new Error("no HTTP target");
  const given = configOf(ctx).collections;
  const out: Reachable[] = given.slice(0, MAX_PROBED_COLLECTIONS).map((c) => ({ template: c, source: "given" }));
  const notes: string[] = [];
  if (given.length > MAX_PROBED_COLLECTIONS)
    notes.push(
      `${given.length - MAX_PROBED_COLLECTIONS} named collections past the first ${MAX_PROBED_COLLECTIONS} were ` +
        `not exercised`,
    );
  const candidates = await foundCollections(ctx, given);
  // Each found collection is tried once at most, and only as many as could be exercised: an OpenAPI document of
  // fifty thousand collections costs five POSTs, not fifty thousand.
  const tried = candidates.slice(0, Math.max(0, MAX_PROBED_COLLECTIONS - out.length));
  for (const candidate of tried) {
    const refusal = await refusesMessages(ctx.http, candidate);
    if (refusal === undefined) out.push(candidate);
    else notes.push(`${candidate.template} (${candidate.source}) was not exercised: ${refusal}`);
  }
  const left = candidates.slice(tried.length);
  if (left.length > 0)
    notes.push(
      `${left.length} more collections found (${left
        .slice(0, 3)
        .map((c) => c.template)
        .join(", ")}${left.length > 3 ? ", ..." : ""}) ` +
        `were not exercised: at most ${MAX_PROBED_COLLECTIONS} collections are tried`,
    );
  return { collections: out, notes };
}

/** Collections discovery found beside the given ones, each once by its template; a related one needs a known parent. */
async function foundCollections(ctx: CheckContext, given: readonly string[]): Promise<Reachable[]> {
  const found = await discovery(ctx);
  const templates = new Set(given);
  const out: Reachable[] = [];
  for (const path of found.paths) {
    if (path.kind !== "collection" || (path.status !== undefined && (path.status < 200 || path.status >= 300)))
      continue;
    const template = templateOf(path).replace(/\{[^}]*\}/g, "{id}");
    if (templates.has(template) || template.endsWith("/")) continue;
    templates.add(template);
    const at = template.indexOf("/{id}");
    if (at < 0) {
      out.push({ template, source: path.source });
      continue;
    }
    const collection = template.slice(0, at);
    const rest = template.slice(at + "/{id}".length);
    // One level: a related collection of a collection the run can create in; deeper nesting is not reached.
    if (rest.includes("{id}") || rest === "" || !templates.has(collection)) continue;
    out.push({ template, parent: { collection, rest }, source: path.source });
  }
  return out;
}

/**
 * Whether a found collection takes messages: one POST (under a parent created for it), deleted with its parent.
 * 405 or 501 says it is read-only; another 4xx that it holds something else than Message (the only resource the
 * spec shows). A 2xx, 200 included, and a 5xx are exercised, so that the checks judge them.
 */
async function refusesMessages(target: HttpTarget, candidate: Reachable): Promise<string | undefined> {
  const created: string[] = [];
  const post = async (collection: string) => {
    const req = {
      method: "POST",
      path: collection,
      headers: { accept: JSON_TYPE, "content-type": JSON_TYPE },
      body: messageJson(uniqueBody("reach")),
    };
    const res = await target.request(req);
    const uri = res.status >= 200 && res.status < 300 ? locate(collection, { req, res }, target.baseUrl) : undefined;
    if (uri) created.unshift(uri.path);
    return { res, uri };
  };
  try {
    let collection = candidate.template;
    if (candidate.parent) {
      const parent = await post(candidate.parent.collection);
      if (!parent.uri)
        return (
          `no message to hang it under (POST ${candidate.parent.collection} answered ${parent.res.status} with no ` +
          `URI)`
        );
      collection = parent.uri.path + candidate.parent.rest;
    }
    const { res } = await post(collection);
    // A found collection that refuses POST as not offered serves no creation: read-only by its own word.
    if (REFUSALS.has(res.status)) return `POST ${collection} answered ${res.status}: read-only`;
    if (res.status >= 400 && res.status < 500)
      return `POST ${collection} of a message answered ${res.status}: it holds something else`;
    return undefined;
  } finally {
    for (const path of created)
      await target.request({ method: "DELETE", path, headers: { accept: JSON_TYPE } }).catch(() => undefined);
  }
}
