// What HTTP checks share: a probe that records exchanges and problems and cleans up after itself, and httpCheck,
// which declares a check around one. The run's settings are config.ts's, representations representation.ts's,
// URIs uri.ts's.
import {
  fail,
  pass,
  skip,
  type CheckContext,
  type CheckDefinition,
  type CheckOutcome,
  type Severity,
  type Sharing,
} from "../../../harness/check.js";
import type { HttpConfig, HttpRequest, HttpResponse, HttpTarget } from "../../../harness/targets/http-target.js";
import { configOf, MAX_PROBED_COLLECTIONS } from "./config.js";
import { reach } from "./reach.js";
import { BodyPaths, JSON_TYPE, messageJson, uniqueBody } from "./representation.js";
import type { Exchange } from "./exchange.js";
import { locate, MAX_LISTING_PAGES, searchListing, type Listed, type Located } from "./uri.js";
import { creationOf, notOfferedBy, putAtNewId, type Creation } from "./creation.js";
import { createLimiter } from "../../../harness/limiter.js";

/** One per run: the run's memo is its key (the memo holds promises; this is read synchronously). */
const BODY_PATHS = new WeakMap<object, BodyPaths>();
const BODY_NOTE = "a message's body is read ";

/** Every probe is bounded: past this many requests a check stops and says so, whatever its loops intended. */
const MAX_REQUESTS_PER_CHECK = 60;

/** A collection a check exercises: its path this time, and the template it was found as. */
export interface Reached {
  path: string;
  template: string;
}

export type { Exchange };

interface Problem {
  message: string;
  exchange?: Exchange;
  /** A request that shows the problem again, when no exchange of this check did. */
  request?: HttpRequest;
}

export class SkipProbe extends Error {}

export function statusLine(res: HttpResponse): string {
  if (res.failure)
    return res.failure.kind === "timeout" ? "no answer within the timeout" : `no answer: ${res.failure.message}`;
  return `${res.status} ${res.statusText}`.trim();
}

/**
 * Problems a failed check shows in full; a target with a hundred thousand bad paths gets a count, not a screenful each.
 */
export const PROBLEMS_SHOWN = 20;

/** A collection exercised, as the note names it. */
const describeCollection = (r: { template: string; parent?: unknown }): string =>
  r.parent ? `${r.template} (under a message created for it)` : r.template;

const excerpt = (text: string) => (text.length > 200 ? `${text.slice(0, 197)}...` : text).replace(/\s+/g, " ");

/** The target with every request on a connection of its own, closed after it. */
function onFreshConnections(target: HttpTarget): HttpTarget {
  return {
    baseUrl: target.baseUrl,
    request: (req) => target.request({ ...req, connection: "fresh" }),
    curl: (req) => target.curl(req),
    get callCount() {
      return target.callCount;
    },
    close: () => target.close(),
  };
}

export class Probe {
  readonly target: HttpTarget;
  readonly config: HttpConfig;
  readonly problems: Problem[] = [];
  readonly notes: string[] = [];
  #created: string[] = [];
  #requests = 0;
  #bound = MAX_REQUESTS_PER_CHECK;
  #reached: Reached[] | undefined;

  /** connections "fresh": every request of the check on a connection of its own (httpCheck's spec says why). */
  constructor(
    readonly ctx: CheckContext,
    connections?: "fresh",
  ) {
    if (!ctx.http) throw new SkipProbe("no HTTP target (--http URL)");
    this.target = connections === "fresh" ? onFreshConnections(ctx.http) : ctx.http;
    this.config = configOf(ctx);
  }

  get collections(): readonly string[] {
    return this.config.collections.slice(0, MAX_PROBED_COLLECTIONS);
  }

  /**
   * Every collection the run found (given, linked, templated, in the OpenAPI document), a related one under a
   * message this check creates for it (and deletes); the check's request bound grows with their number.
   */
  async reach(): Promise<Reached[]> {
    if (this.#reached) return this.#reached;
    const found = await reach(this.ctx);
    const out: Reached[] = [];
    for (const r of found.collections) {
      const path = r.parent ? (await this.createOrStop(r.parent.collection)).uri.path + r.parent.rest : r.template;
      out.push({ path, template: r.template });
    }
    this.#bound = MAX_REQUESTS_PER_CHECK * Math.max(1, out.length);
    const beyond = found.collections.filter((r) => r.source !== "given");
    if (beyond.length > 0 || found.notes.length > 0) {
      this.note(
        `collections exercised: ${found.collections.map(describeCollection).join(", ")}` +
          `${found.notes.length > 0 ? `; ${found.notes.join("; ")}` : ""}`,
      );
    }
    return (this.#reached = out);
  }

  /** A check that walks sequences of operations (the model's) is bounded higher, and says so in its own code. */
  allowRequests(bound: number): void {
    this.#bound = Math.max(this.#bound, bound);
  }

  /** Requests left before the check's bound. */
  get remaining(): number {
    return this.#bound - this.#requests;
  }

  /** The template a path was reached as ("/messages/{id}/notes" for the notes of a message made for the check). */
  templateOf(path: string): string {
    for (const r of this.#reached ?? []) {
      if (r.path === path) return r.template;
      const rest = path.startsWith(`${r.path}/`) ? path.slice(r.path.length + 1) : undefined;
      if (rest !== undefined && rest !== "" && !rest.includes("/")) return `${r.template}/{id}`;
    }
    return path;
  }

  /** Counts one request against the check's bound, wherever it goes. */
  countRequest(): void {
    if (++this.#requests > this.#bound) throw new Error(`the check needed more than ${this.#bound} requests`);
    if (this.ctx.signal.aborted) throw new Error("the run's time is up");
  }

  /**
   * The body a message representation shows. Given the body this run sent, a representation that holds it
   * anywhere (JSON:API's data.attributes, HAL, an envelope, XML of any element names) teaches the run where its
   * bodies are; every later representation of that format is then read there. `rep`: the response read another way.
   */
  bodyOf(res: HttpResponse, sent?: string, rep?: { format: "json" | "xml"; value: unknown }): string | undefined {
    let paths = BODY_PATHS.get(this.ctx.memo);
    if (!paths) BODY_PATHS.set(this.ctx.memo, (paths = new BodyPaths()));
    const body = paths.bodyOf(res, sent, rep);
    const unusual = paths.unusual();
    if (unusual.length > 0) {
      const kept = this.notes.filter((n) => !n.startsWith(BODY_NOTE));
      this.notes.splice(
        0,
        this.notes.length,
        ...kept,
        `${BODY_NOTE}${unusual.join(", ")} (where the run found the body it sent)`,
      );
    }
    return body;
  }

  /**
   * Runs steps that do not depend on one another side by side (at most the run's --concurrency at once): one round
   * trip for all where one after another costs one each. Every step settles before this does, so that nothing a step
   * creates is missed by the cleanup; the results come in the order given, and the first step that threw (in that
   * order) throws here. What a step judges it judges after this returns, in order, so that problems keep their order.
   */
  async all<T>(steps: readonly (() => Promise<T>)[]): Promise<T[]> {
    const turn = createLimiter(Math.max(1, this.ctx.parallelism));
    const settled = await Promise.allSettled(steps.map((step) => turn(step)));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
  }

  async send(req: HttpRequest): Promise<Exchange> {
    this.countRequest();
    const res = await this.target.request(req);
    return { req, res };
  }

  get(
    path: string,
    headers: Record<string, string> = { accept: JSON_TYPE },
    extra: Partial<HttpRequest> = {},
  ): Promise<Exchange> {
    return this.send({ method: "GET", path, headers, ...extra });
  }

  /** Sends a representation with its type; JSON unless told. */
  sendBody(
    method: string,
    path: string,
    body: string,
    contentType = JSON_TYPE,
    extra: Partial<HttpRequest> = {},
  ): Promise<Exchange> {
    return this.send({ method, path, headers: { accept: JSON_TYPE, "content-type": contentType }, body, ...extra });
  }

  /**
   * Creates a message in a collection as the collection creates (learned once per run, creation.ts): POST on it, or,
   * where POST is not offered (405, 501) and the collection is a store, PUT at an id the client chooses. What it
   * created is deleted when the check ends. A collection that offers no creation at all ends the check "not
   * applicable", with the answers that show it.
   */
  async create(collection: string, body = uniqueBody("create"), extra: Partial<HttpRequest> = {}): Promise<Created> {
    const learned = await this.#creation(collection);
    if (learned?.via === "PUT") return this.#createByPut(collection, body, extra);
    if (learned?.via === "none") this.#noCreation(collection, learned);
    const ex = await this.sendBody("POST", collection, messageJson(body), JSON_TYPE, extra);
    if (notOfferedBy(ex) !== undefined && learned === undefined) {
      const how = await this.#creation(collection, ex);
      if (how?.via === "PUT") return this.#createByPut(collection, body, extra);
      if (how?.via === "none") this.#noCreation(collection, how);
    }
    const created = ex.res.status >= 200 && ex.res.status < 300;
    if (created && learned === undefined)
      this.ctx.capabilities?.learn(this.templateOf(collection), "create", `by POST (${ex.res.status})`);
    let uri = created ? locate(collection, ex, this.target.baseUrl) : undefined;
    // Location is optional (part 4.2 "may"): a message the answer does not locate is looked for in the listing by
    // the unique body sent, so that it can be probed and deleted at the end.
    let listedWithoutUri = false;
    if (created && !uri) {
      const listed = await this.findListed(collection, body);
      uri = listed.found;
      listedWithoutUri = listed.present && !listed.found;
    }
    if (uri) this.own(uri.path);
    return { ex, body, ...(uri && { uri }), ...(listedWithoutUri && { listedWithoutUri }) };
  }

  /**
   * Sends a request that would create a message in the collection, as the collection creates (POST on it, or PUT at
   * a new id in a store), for checks that send one with something wrong in it (a type, a malformed body, no key).
   */
  async sendCreation(
    collection: string,
    body: string,
    contentType = JSON_TYPE,
    extra: Partial<HttpRequest> = {},
  ): Promise<Exchange> {
    const how = await this.#creation(collection);
    if (how?.via === "PUT") return this.sendBody("PUT", `${collection}/${how.idForm()}`, body, contentType, extra);
    if (how?.via === "none") this.#noCreation(collection, how);
    const ex = await this.sendBody("POST", collection, body, contentType, extra);
    if (how !== undefined || notOfferedBy(ex) === undefined) return ex;
    const learned = await this.#creation(collection, ex);
    if (learned?.via === "none") this.#noCreation(collection, learned);
    return learned?.via === "PUT"
      ? this.sendBody("PUT", `${collection}/${learned.idForm()}`, body, contentType, extra)
      : ex;
  }

  /**
   * The request that creates a message here as the run has learned it does: POST on the collection, or PUT at a new id.
   */
  async creationRequest(collection: string): Promise<{ method: string; path: string }> {
    const how = await this.#creation(collection);
    return how?.via === "PUT"
      ? { method: "PUT", path: `${collection}/${how.idForm()}` }
      : { method: "POST", path: collection };
  }

  #noCreation(collection: string, how: Creation & { via: "none" }): never {
    if (!how.defect) this.skip(`not applicable: ${collection} offers no creation (${how.evidence})`);
    this.problem(`creating a message to probe failed: ${how.evidence}`);
    throw new StopProbe();
  }

  /**
   * How the collection creates, once per run for its template; `refused`, a POST it answered 405 or 501, starts the
   * learning.
   */
  #creation(collection: string, refused?: Exchange): Promise<Creation | undefined> {
    return creationOf(this, collection, refused);
  }

  async #createByPut(collection: string, body: string, extra: Partial<HttpRequest>): Promise<Created> {
    const { ex, path } = await putAtNewId(this, collection, body, extra);
    const created = ex.res.status >= 200 && ex.res.status < 300;
    const uri: Located | undefined = created
      ? (locate(collection, ex, this.target.baseUrl) ?? { path, how: "the id the client chose (PUT)" })
      : undefined;
    if (uri) this.own(uri.path);
    return { ex, body, ...(uri && { uri }) };
  }

  /**
   * Sends a request that changes a resource (PUT, DELETE) as the server asks: when it answers 428 Precondition
   * Required (RFC 6585), the resource's validator (ETag, else Last-Modified) is read with a GET and the request sent
   * again with If-Match (If-Unmodified-Since), as RFC 9110 13.1 has a client do. The server's own validators honoured.
   */
  async change(req: HttpRequest, on?: HttpTarget): Promise<Exchange> {
    const send = (r: HttpRequest) => (on ? this.sendOn(on, r) : this.send(r));
    const first = await send(req);
    if (first.res.status !== 428) return first;
    const read = await send({ method: "GET", path: req.path, headers: { accept: JSON_TYPE } });
    const etag = read.res.headers["etag"]?.[0];
    const modified = read.res.headers["last-modified"]?.[0];
    if (read.res.status !== 200 || (etag === undefined && modified === undefined)) return first;
    this.ctx.capabilities?.learn(
      this.templateOf(req.path),
      `conditional ${req.method}`,
      `asked for: ${req.method} without a validator answered 428, sent again with ` +
        `${etag !== undefined ? "If-Match" : "If-Unmodified-Since"}`,
    );
    const condition = etag !== undefined ? { "if-match": etag } : { "if-unmodified-since": modified as string };
    return send({ ...req, headers: { ...req.headers, ...condition } });
  }

  /** One exchange with another instance of the target (a replica), counted in the check's bound like the rest. */
  async sendOn(target: HttpTarget, req: HttpRequest): Promise<Exchange> {
    this.countRequest();
    return { req, res: await target.request(req), on: target };
  }

  /** PUTs a representation of a message with this body at the path (change(): conditional when the server asks). */
  replace(path: string, body: string): Promise<Exchange> {
    return this.change({
      method: "PUT",
      path,
      headers: { accept: JSON_TYPE, "content-type": JSON_TYPE },
      body: messageJson(body),
    });
  }

  /** DELETEs the resource at the path (change(): conditional when the server asks). */
  remove(path: string): Promise<Exchange> {
    return this.change({ method: "DELETE", path, headers: { accept: JSON_TYPE } });
  }

  /**
   * An operation the resource does not offer, by its own answer (405, 501): recorded with that evidence in the
   * run's capabilities and returned in words; undefined when the answer is no refusal.
   */
  notOffered(operation: string, ex: Exchange): string | undefined {
    const evidence = notOfferedBy(ex);
    if (evidence === undefined) return undefined;
    this.ctx.capabilities?.learn(
      this.templateOf(ex.req.path.replace(/[?#].*$/, "")),
      operation,
      `not offered: ${evidence}`,
    );
    return evidence;
  }

  /** Creates a message and insists on a URI for it: the checks that need a document stop here when there is none. */
  async createOrStop(collection: string, body?: string): Promise<Created & { uri: Located }> {
    const created = await this.create(collection, body);
    const { ex, uri } = created;
    if (ex.res.status < 200 || ex.res.status >= 300) {
      this.problem(`creating a message to probe failed: ${ex.req.method} ${ex.req.path} got ${statusLine(ex.res)}`, ex);
      throw new StopProbe();
    }
    if (!uri) {
      const listing = created.listedWithoutUri
        ? "the listing shows the message it created by its body, with no id or link to reach it by"
        : `the message it created was not found in the listing within ${MAX_LISTING_PAGES} pages`;
      this.skip(
        `${ex.req.method} ${ex.req.path} answered ${statusLine(ex.res)} with no Location, self link or id, and ` +
          `${listing}: nothing to probe it by`,
      );
    }
    return { ...created, uri };
  }

  /**
   * Looks for a message in a collection's listing by its body, following rel="next" links (a Link header or the
   * representation's own) within a bound: a listing may be paged in any scheme. `found` is where the message
   * lives; `complete` says the whole listing was read, so that an absence is known rather than unconfirmed.
   */
  findListed(collection: string, body: string): Promise<Listed> {
    return searchListing((path) => this.get(path), collection, body, this.target.baseUrl);
  }

  /** Deletes, when the check ends, whatever a request that should have been refused created anyway. */
  track(collection: string, ex: Exchange): void {
    if (ex.res.status < 200 || ex.res.status >= 300) return;
    const uri = locate(collection, ex, this.target.baseUrl);
    if (uri) this.own(uri.path);
    // A PUT that created at an id the client chose (a store) lives where it was sent.
    else if (ex.req.method === "PUT") this.own(ex.req.path);
  }

  /** Deletes, when the check ends, a resource the check created and found by other means (the listing). */
  own(path: string): void {
    if (!this.#created.includes(path)) this.#created.push(path);
  }

  /** Forgets a created resource the check deleted itself. */
  deleted(path: string): void {
    this.#created = this.#created.filter((p) => p !== path);
  }

  problem(message: string, exchange?: Exchange): void {
    this.problems.push({ message, ...(exchange && { exchange }) });
  }

  /** A problem seen without an exchange of this check (a path discovery found): the request that shows it. */
  problemAt(message: string, request: HttpRequest): void {
    this.problems.push({ message, request });
  }

  note(message: string): void {
    if (!this.notes.includes(message)) this.notes.push(message);
  }

  skip(reason: string): never {
    throw new SkipProbe(reason);
  }

  describe(ex: Exchange): string {
    return `${ex.req.method} ${ex.req.path} → ${statusLine(ex.res)}`;
  }

  async cleanup(): Promise<void> {
    // Bounded by the number of resources created, each once. Side by side when none lies under another; else the
    // newest first, so a parent goes after what is under it.
    const paths = this.#created.splice(0).reverse();
    const remove = async (path: string) => {
      try {
        await this.target.request({ method: "DELETE", path, headers: { accept: JSON_TYPE } });
      } catch {
        // Cleanup is best effort: the verdict is already made.
      }
    };
    const nested = paths.some((a) => paths.some((b) => b.startsWith(`${a}/`)));
    if (!nested) await this.all(paths.map((path) => () => remove(path)));
    else for (const path of paths) await remove(path);
  }

  /** Each problem with what reproduces it: the first PROBLEMS_SHOWN, then one line counting the rest. */
  details(): string[] {
    const out: string[] = [];
    for (const p of this.problems.slice(0, PROBLEMS_SHOWN)) {
      out.push(p.message);
      if (p.exchange) {
        out.push(`  reproduce: ${(p.exchange.on ?? this.target).curl(p.exchange.req)}`);
        const res = p.exchange.res;
        out.push(`  got: HTTP/1.1 ${statusLine(res)}${res.text ? ` ${excerpt(res.text)}` : ""}`);
      } else if (p.request) {
        out.push(`  reproduce: ${this.target.curl(p.request)}`);
      }
    }
    if (this.problems.length > PROBLEMS_SHOWN)
      out.push(`... and ${this.problems.length - PROBLEMS_SHOWN} more problems of the same check, not shown`);
    return out;
  }
}

/** Thrown after a problem that leaves nothing more to probe. */
export class StopProbe extends Error {}

export interface Created {
  ex: Exchange;
  body: string;
  uri?: Located;
  /** Not located, though the listing holds an item with its body: the item names no id or link. */
  listedWithoutUri?: true;
}

export interface HttpCheckSpec {
  id: string;
  title: string;
  severity: Severity;
  spec: string;
  /** Default "serial": HTTP checks create, change and read resources of one space, one check at a time. */
  sharing?: Sharing;
  /**
   * A serial check that judges only what it creates itself, read by its URIs, and the status of what it reads beside
   * (no listing's contents, no order of requests, no connection or session): it runs side by side with the
   * independent checks next to it (harness/check.ts), each with its own probe, bound and report.
   */
  independent?: boolean;
  /**
   * "fresh": every request on a connection of its own, for a check whose question is whether answers depend on the
   * connection or a session. Default: the target's keep-alive connections, where no question is about connections.
   */
  connections?: "fresh";
}

/**
 * Declares an HTTP check: skipped with no HTTP target, fails with every problem its probe recorded (each with the
 * curl that reproduces it), and deletes what it created however it ends.
 */
export function httpCheck(spec: HttpCheckSpec, run: (p: Probe) => Promise<string | CheckOutcome>): CheckDefinition {
  const { connections, ...definition } = spec;
  return {
    sharing: "serial",
    ...definition,
    area: "http",
    profile: "contract",
    async run(ctx) {
      let p: Probe;
      try {
        p = new Probe(ctx, connections);
      } catch (err) {
        if (err instanceof SkipProbe) return skip(err.message);
        throw err;
      }
      let result: string | CheckOutcome;
      let skipped: string | undefined;
      try {
        result = await run(p);
      } catch (err) {
        if (err instanceof SkipProbe) skipped = err.message;
        else if (!(err instanceof StopProbe)) throw err;
        result = "";
      } finally {
        await p.cleanup();
      }
      // A probe that could not go on never hides what it had already found: the check fails with that.
      if (p.problems.length > 0) {
        const first = (p.problems[0] as Problem).message;
        const more = p.problems.length > 1 ? ` (and ${p.problems.length - 1} more)` : "";
        const details = p.details();
        return fail(`${first}${more}`, {
          details: skipped === undefined ? details : [...details, `then could not go on: ${skipped}`],
        });
      }
      if (skipped !== undefined) return skip(skipped);
      if (typeof result !== "string") return result;
      return pass([result, ...p.notes].filter((s) => s !== "").join("; "));
    },
  };
}
