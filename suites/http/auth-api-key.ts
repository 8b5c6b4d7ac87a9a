// http.auth.api-key: with --api-key, every data route and method refuses a request without the key or with a wrong one.
import { skip, type CheckOutcome } from "../../harness/check.js";
import type { HttpRequest } from "../../harness/targets/http-target.js";
import { PLACEMENTS_TRIED } from "../../harness/targets/http-credentials.js";
import { describePlacement, placementFlag, type ApiKeyPlacement } from "../../harness/targets/http-target.js";
import { discovery } from "./_internals/discovery.js";
import { templateOf } from "./_internals/path-rules.js";
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { JSON_TYPE, messageJson, uniqueBody } from "./_internals/representation.js";

/** A key no user holds: never derived from the real one, so that no report can carry a piece of it. */
const WRONG_KEY = "conformance-wrong-key";
/** Related resources of a message probed without the key, at most. */
const MAX_RELATED = 4;

export const authApiKey = httpCheck(
  {
    id: "http.auth.api-key",
    title:
      "every data route and method (every collection found, a message of each, every route found below its " +
      "messages; GET, HEAD, POST, PUT, DELETE and any other its Allow header names) refuses a request without " +
      "the API key or with a wrong one (401 with a WWW-Authenticate challenge, or 403), a wrong key in any other " +
      "placement (the common ones, those the OpenAPI document declares) hands over no data, nor does OPTIONS " +
      "without it; with the key it succeeds",
    severity: "MUST",
    spec: "§5 (a client holding the key sends it with each data request), RFC 9110 §11.6.1 (401 and its challenge)",
    independent: true,
  },
  async (p) => {
    const key = p.config.apiKey;
    // A key wanted for reading or creating and not given, or refused where it is sent, ended the run before any
    // check (exit 5). Here the collection answers without one: what it does with a message is probed without a key.
    if (key === undefined) return withoutKey(p);
    const where = describePlacement(p.config.apiKeyIn);
    const shown: string[] = [];
    for (const { path: c, template } of await p.reach()) {
      const withKey = await p.get(c);
      if (withKey.res.status < 200 || withKey.res.status >= 300) {
        p.problem(`GET ${c} with the key in ${where} answered ${statusLine(withKey.res)}, not a 2xx`, withKey);
        continue;
      }
      const created = await p.createOrStop(c);
      const item = created.uri.path;
      const creation = await p.creationRequest(c);
      const requests: HttpRequest[] = [
        { method: "GET", path: c, headers: { accept: JSON_TYPE } },
        { method: "HEAD", path: c, headers: { accept: JSON_TYPE } },
        { ...post(creation.path, messageJson(uniqueBody("no-key"))), method: creation.method },
        { method: "GET", path: item, headers: { accept: JSON_TYPE } },
        { method: "HEAD", path: item, headers: { accept: JSON_TYPE } },
        put(item, messageJson(uniqueBody("no-key"))),
        ...(await otherAllowed(p, [c, item])),
        ...(await related(p, template, item)).flatMap((path) =>
          ["GET", "HEAD"].map((method) => ({ method, path, headers: { accept: JSON_TYPE } })),
        ),
        { method: "DELETE", path: item, headers: { accept: JSON_TYPE } },
      ];
      let refusals = 0;
      for (const req of requests) {
        for (const variant of [{ withoutApiKey: true }, { wrongApiKey: WRONG_KEY }]) {
          const ex = await p.send({ ...req, ...variant });
          if (req === requests[2]) p.track(c, ex);
          const how = "wrongApiKey" in variant ? "with a wrong key" : "without the key";
          if (ex.res.status === 401 || ex.res.status === 403) {
            refusals++;
            challengeOf(p, ex, how);
          } else
            p.problem(
              `${req.method} ${req.path} ${how} answered ${statusLine(ex.res)}, not 401 (or 403): the key is not ` +
                `enforced there`,
              ex,
            );
        }
      }
      refusals += await wrongKeyElsewhere(p, [c, item]);
      await optionsWithoutKey(p, [c, item], created.body);
      const still = await p.get(item);
      if (still.res.status !== 200)
        p.problem(
          `GET ${item} with the key answered ${statusLine(still.res)} after keyless PUT and DELETE attempts, not 200`,
          still,
        );
      shown.push(
        `${refusals} requests to ${c}, a message and its related resources without the key or with a wrong one → ` +
          `401/403; the key in ${where} → ${withKey.res.status}`,
      );
    }
    return shown.join("; ");
  },
);

/** An auth-scheme (RFC 9110 §11.1: a token) opening a challenge. */
const CHALLENGE = /^\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

/**
 * A 401 carries WWW-Authenticate with at least one challenge (RFC 9110 §11.6.1, a MUST for every 401 a server sends,
 * whatever the spec leaves open about the key): the scheme tells a client how to send credentials. A 403 needs none
 * (§15.5.4: the credentials are understood and not enough), and the spec does not choose between the two. Found by
 * mutation testing (docs/mutation.md): the reference's 401 sent without its headers (auth.ts:25).
 */
function challengeOf(p: Probe, ex: Exchange, how: string): void {
  if (ex.res.status !== 401) return;
  const challenges = (ex.res.headers["www-authenticate"] ?? []).filter((v) => CHALLENGE.test(v));
  if (challenges.length > 0) return;
  p.problem(
    `${ex.req.method} ${ex.req.path} ${how} answered 401 without a WWW-Authenticate challenge: a 401 must name how ` +
      "to authenticate (RFC 9110 §11.6.1); a server that does not say so answers 403",
    ex,
  );
}

/**
 * No key given and the collection served without one: a message is created and read, replaced and deleted without
 * a key. A refusal there is key control the run could not judge for want of the key (the verdict is partial, naming
 * --api-key); none is a target with no key control, which §5 allows ("where access to data is controlled"), so the
 * check does not apply.
 */
async function withoutKey(p: Probe): Promise<CheckOutcome | string> {
  const served: string[] = [];
  const refused = (ex: Exchange) =>
    // The spec shows neither the key's placement nor its format: only the user knows them.
    skip(
      `the target wants a key for some data requests (${p.describe(ex)}), and no API key was given: pass ` +
        `--api-key K [--api-key-in header:NAME|bearer|query:NAME] to judge its key control`,
      "--api-key",
    );
  for (const c of p.collections) {
    const created = await p.create(c);
    if (isRefusal(created.ex)) return refused(created.ex);
    if (created.ex.res.status < 200 || created.ex.res.status >= 300) {
      p.problem(
        `creating a message to probe failed: ${created.ex.req.method} ${created.ex.req.path} got ` +
          `${statusLine(created.ex.res)}`,
        created.ex,
      );
      return "";
    }
    if (!created.uri)
      return skip(
        `${created.ex.req.method} ${created.ex.req.path} answered ${statusLine(created.ex.res)}, but neither the ` +
          `answer nor the listing says where the message is: nothing to probe without a key`,
      );
    const item = created.uri.path;
    for (const req of [
      { method: "GET", path: item, headers: { accept: JSON_TYPE } },
      put(item, messageJson(uniqueBody("no-key"))),
      { method: "DELETE", path: item, headers: { accept: JSON_TYPE } },
    ] satisfies HttpRequest[]) {
      const ex = await p.send(req);
      if (isRefusal(ex)) return refused(ex);
      if (req.method === "DELETE" && ex.res.status >= 200 && ex.res.status < 300) p.deleted(item);
    }
    served.push(`${c} and a message in it`);
  }
  return skip(
    `no key control to judge: ${served.join(", ")} were read, created, replaced and deleted with no key (§5 ` +
      `applies only where access to data is controlled by a key)`,
  );
}

/**
 * Methods probed above already, and those a client sends before it holds any credential (a CORS preflight) or that read
 * no data.
 */
const NOT_DATA = new Set(["OPTIONS", "TRACE", "CONNECT", "GET", "HEAD", "POST", "PUT", "DELETE"]);

/**
 * The other methods a data route serves, as its Allow header (OPTIONS with the key) names them: each with a message as
 * its body.
 */
async function otherAllowed(p: Probe, paths: readonly string[]): Promise<HttpRequest[]> {
  const out: HttpRequest[] = [];
  for (const path of paths) {
    const options = await p.send({ method: "OPTIONS", path, headers: { accept: JSON_TYPE } });
    if (options.res.status < 200 || options.res.status >= 300) continue;
    const allow = (options.res.headers["allow"] ?? [])
      .join(",")
      .split(",")
      .map((m) => m.trim().toUpperCase());
    for (const method of allow.filter((m) => /^[A-Z]{1,20}$/.test(m) && !NOT_DATA.has(m)).slice(0, 3)) {
      out.push({
        method,
        path,
        headers: { accept: JSON_TYPE, "content-type": JSON_TYPE },
        body: messageJson(uniqueBody("no-key")),
      });
    }
  }
  return out;
}

/**
 * A wrong key in each other placement a key may take (the common ones, and those the OpenAPI document's security
 * schemes name), none in the configured one, on reads of the collection and of a message: a server that also takes
 * a key there must check its value. Only a 2xx fails (the data handed over); any refusal or other answer is no data.
 */
async function wrongKeyElsewhere(p: Probe, paths: readonly string[]): Promise<number> {
  const configured = placementFlag(p.config.apiKeyIn).toLowerCase();
  const declared = (await discovery(p.ctx)).keyPlacements;
  const elsewhere = new Map<string, ApiKeyPlacement>();
  for (const placement of [...declared, ...PLACEMENTS_TRIED]) {
    const flag = placementFlag(placement).toLowerCase();
    if (flag !== configured) elsewhere.set(flag, placement);
  }
  let refusals = 0;
  for (const path of paths) {
    for (const placement of elsewhere.values()) {
      const ex = await p.send(
        withKeyIn(placement, { method: "GET", path, headers: { accept: JSON_TYPE }, withoutApiKey: true }),
      );
      if (isRefusal(ex)) refusals++;
      else if (ex.res.status >= 200 && ex.res.status < 300) {
        p.problem(
          `GET ${path} with a wrong key in ${describePlacement(placement)} (and none in ` +
            `${describePlacement(p.config.apiKeyIn)}) answered ${statusLine(ex.res)}: a key sent there is taken ` +
            `whatever its value`,
          ex,
        );
      }
    }
  }
  return refusals;
}

/** The request with WRONG_KEY in the placement given. */
function withKeyIn(placement: ApiKeyPlacement, req: HttpRequest): HttpRequest {
  if (placement.in === "query")
    return {
      ...req,
      path: `${req.path}${req.path.includes("?") ? "&" : "?"}${encodeURIComponent(placement.name)}=${WRONG_KEY}`,
    };
  return {
    ...req,
    headers: {
      ...req.headers,
      [placement.name]: placement.scheme !== undefined ? `${placement.scheme} ${WRONG_KEY}` : WRONG_KEY,
    },
  };
}

/** OPTIONS without the key may answer a preflight (no data); one that carries a message's body hands data over. */
async function optionsWithoutKey(p: Probe, paths: readonly string[], body: string): Promise<void> {
  for (const path of paths) {
    const ex = await p.send({ method: "OPTIONS", path, headers: { accept: JSON_TYPE }, withoutApiKey: true });
    if (ex.res.status >= 200 && ex.res.status < 300 && ex.res.text.includes(body)) {
      p.problem(
        `OPTIONS ${path} without the key answered ${statusLine(ex.res)} with a message's data in its body: data ` +
          `without the key`,
        ex,
      );
    }
  }
}

const isRefusal = (ex: Exchange) => ex.res.status === 401 || ex.res.status === 403;

const post = (path: string, body: string): HttpRequest => ({
  method: "POST",
  path,
  headers: { accept: JSON_TYPE, "content-type": JSON_TYPE },
  body,
});
const put = (path: string, body: string): HttpRequest => ({
  method: "PUT",
  path,
  headers: { accept: JSON_TYPE, "content-type": JSON_TYPE },
  body,
});

/**
 * Every route the run found below a message of this collection (by template, so a related collection's own
 * related routes too), moved onto this message, that answers with the key. A route beside the messages
 * (/messages/latest) is not probed: http.paths.hierarchy fails it already.
 */
async function related(p: Probe, collection: string, item: string): Promise<string[]> {
  const found = await discovery(p.ctx);
  const below = `${collection}/{id}/`;
  const out = new Set<string>();
  for (const path of found.paths) {
    const template = templateOf(path).replace(/\{[^}]*\}/g, "{id}");
    if (!template.startsWith(below)) continue;
    const rest = template.slice(below.length - 1);
    if (rest.includes("{id}")) continue;
    out.add(item + rest);
    if (out.size >= MAX_RELATED) break;
  }
  const serving: string[] = [];
  for (const path of out) {
    const ex = await p.get(path);
    if (ex.res.status >= 200 && ex.res.status < 300) serving.push(path);
  }
  return serving;
}
