// Finds the target's paths once per run: named collections, an OpenAPI document, and a bounded crawl of the server's
// links.
import { existsSync, readFileSync } from "node:fs";
import type { CheckContext } from "../../../harness/check.js";
import { ConformanceError } from "../../../harness/errors.js";
import type { ApiKeyPlacement, HttpConfig, HttpResponse, HttpTarget } from "../../../harness/targets/http-target.js";
import {
  idsOf,
  itemsOf,
  linksIn,
  linksOf,
  looksLikeCollection,
  parseJson,
  representationOf,
  type FoundLink,
} from "./links.js";
import { configOf } from "./config.js";
import { JSON_TYPE, messageJson, uniqueBody } from "./representation.js";
import { locate, searchListing, toTargetPath } from "./uri.js";
import type { PathShape } from "./path-rules.js";

export interface DiscoveredPath extends PathShape {
  /** Where the path was first seen, for reports. */
  source: string;
  /** The status a GET of it got, when discovery fetched it. */
  status?: number;
  /** The path whose response offered it: the request that shows it again. */
  foundOn?: string;
}

export interface Discovery {
  /** Every path seen, the root excluded, in the order found. */
  paths: DiscoveredPath[];
  /** Links seen anywhere, with the path whose response carried them: the evidence of hypermedia (level 3). */
  links: { on: string; link: FoundLink }[];
  requests: number;
  /** What discovery could not do (bound reached, a collection that does not answer...). */
  notes: string[];
  /** Query parameters the OpenAPI document gives a path's GET: the filters it offers (rule 11). */
  queryParameters: Map<string, string[]>;
  /** Where the OpenAPI document's security schemes say a key may go (apiKey in a header or query, HTTP bearer). */
  keyPlacements: ApiKeyPlacement[];
}

const MEMO_KEY = "http.discovery";
const ACCEPT = "application/json, application/xml;q=0.9, */*;q=0.1";
/** Items of one collection are alike: discovery fetches one path per template, not every item. */
const TEMPLATE_VISITS = 1;

export function discovery(ctx: CheckContext): Promise<Discovery> {
  let memo = ctx.memo.get(MEMO_KEY) as Promise<Discovery> | undefined;
  if (!memo) {
    if (!ctx.http) return Promise.reject(new Error("no HTTP target"));
    memo = discover(ctx.http, configOf(ctx));
    ctx.memo.set(MEMO_KEY, memo);
  }
  return memo;
}

interface Entry {
  path: string;
  source: string;
  kind: PathShape["kind"];
  status?: number;
  foundOn?: string;
  /** Found as a template ({id}) rather than a concrete path: never fetched. */
  template: boolean;
  served?: PathShape["served"];
}

/**
 * /package.Service/Method (methods are PascalCase): the path of an RPC procedure over Connect or gRPC-Web, not of a
 * resource.
 */
const RPC_PROCEDURE = /^\/[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\/[A-Z]\w*$/;

/**
 * The crawl as a sequence of steps, each a method of its own: seed the paths (given, OpenAPI), create one message
 * per given collection, walk the links breadth first within the bound, delete what was created, and classify.
 */
export async function discover(target: HttpTarget, config: HttpConfig): Promise<Discovery> {
  const crawl = new Crawl(target, config);
  await crawl.seed();
  try {
    await crawl.createProbes();
    await crawl.walk();
  } finally {
    await crawl.cleanup();
  }
  return crawl.result();
}

class Crawl {
  readonly entries = new Map<string, Entry>();
  readonly ids = new Set<string>();
  readonly links: Discovery["links"] = [];
  readonly queryParameters = new Map<string, string[]>();
  keyPlacements: ApiKeyPlacement[] = [];
  readonly notes: string[] = [];
  readonly queue: string[] = [];
  readonly created: string[] = [];
  requests = 0;

  constructor(
    readonly target: HttpTarget,
    readonly config: HttpConfig,
  ) {}

  canSend(): boolean {
    return this.requests < this.config.maxDiscoveryRequests;
  }

  send(method: string, path: string, body?: string): Promise<HttpResponse> {
    this.requests++;
    return this.target.request({
      method,
      path,
      headers: body === undefined ? { accept: ACCEPT } : { accept: ACCEPT, "content-type": JSON_TYPE },
      ...(body !== undefined && { body }),
    });
  }

  /** A GET within discovery's bound; past it, the search stops (and what it did not find stays unfound). */
  readonly getWithinBound = async (path: string) => {
    if (!this.canSend()) throw new Error("the discovery bound is reached");
    return { req: { method: "GET", path }, res: await this.send("GET", path) };
  };

  add(path: string, source: string, kind: PathShape["kind"] = "unknown", foundOn?: string): void {
    // An RPC procedure (Connect, gRPC-Web) served beside the resources is no resource: the path rules are not its.
    if (RPC_PROCEDURE.test(path)) {
      if (!this.notes.some((n) => n.startsWith("RPC procedures")))
        this.notes.push(`RPC procedures (such as ${path}) were left out: the HTTP rules judge resources`);
      return;
    }
    const existing = this.entries.get(path);
    if (existing) {
      if (existing.kind === "unknown") existing.kind = kind;
      return;
    }
    const template = /\{[^}]*\}/.test(decodeSafe(path));
    this.entries.set(path, { path, source, kind, template, ...(foundOn !== undefined && { foundOn }) });
    if (!template) this.queue.push(path);
  }

  /** The given collections, the root and the OpenAPI document's paths. */
  async seed(): Promise<void> {
    this.add("/", "the root document");
    for (const c of this.config.collections) this.add(c, "a collection to probe", "collection");
    if (this.config.openapi === undefined) return;
    const document = await openApiPaths(this.config.openapi, this.target, () => this.requests++);
    for (const [path, kind, query] of document.paths) {
      this.add(path, "the OpenAPI document", kind);
      if (query.length > 0) this.queryParameters.set(path, query);
    }
    this.keyPlacements = document.keyPlacements;
  }

  /** What a response teaches: ids, the items of a listing, and every link, each added to the paths to visit. */
  learn(res: HttpResponse, on: string): void {
    const rep = representationOf(res);
    if (rep) for (const id of idsOf(rep.value)) this.ids.add(id);
    if (rep) this.learnItems(rep.value, on);
    for (const link of linksOf(res)) {
      this.links.push({ on, link });
      const path = toTargetPath(link.href, this.target.baseUrl, on);
      if (path === undefined) continue;
      const bare = path.replace(/[?#].*$/, "");
      this.add(
        bare,
        `${link.from} of ${on}${link.rel ? ` (rel ${link.rel})` : ""}`,
        /\{[^}]*\}$/.test(decodeSafe(bare)) ? "document" : "unknown",
        on,
      );
    }
  }

  /**
   * An item of a listing that links to a path one level below the listing names that level with an id, whatever
   * its spelling and whether or not the item has an id member (HAL, envelopes); an item with an id and no link
   * is at the id under the listing, the form rule 9 gives its URI.
   */
  learnItems(value: unknown, on: string): void {
    // Without its trailing slash, so that the root ("/") lists its items at /<id>, not //<id>.
    const listing = on.replace(/[?#].*$/, "").replace(/\/+$/, "");
    const listsItems = looksLikeCollection(value);
    for (const item of itemsOf(value)) {
      let linked = false;
      for (const link of linksIn(item)) {
        const path = toTargetPath(link.href, this.target.baseUrl, on)?.replace(/[?#].*$/, "");
        const last = path?.slice(listing.length + 1);
        if (path?.startsWith(`${listing}/`) && last !== undefined && last !== "" && !last.includes("/")) {
          this.ids.add(decodeSafe(last));
          linked = true;
        }
      }
      const id = (item as Record<string, unknown>)["id"];
      if (listsItems && !linked && (typeof id === "string" || typeof id === "number") && String(id) !== "") {
        this.add(`${listing}/${encodeURIComponent(String(id))}`, `an item's id in ${on}`, "document", on);
      }
    }
  }

  /** One message per named collection, so that item and related paths exist to be found; deleted at the end. */
  async createProbes(): Promise<void> {
    for (const c of this.config.collections.slice(0, 3)) {
      if (!this.canSend()) break;
      const body = uniqueBody("discovery");
      const res = await this.send("POST", c, messageJson(body));
      if (res.status < 200 || res.status >= 300) {
        this.notes.push(`POST ${c} got ${res.status}: no item of it was crawled`);
        continue;
      }
      this.learn(res, c);
      // With no Location, self link or id, the message is looked for in the listing, so that it is deleted too.
      const uri =
        locate(c, { req: { method: "POST", path: c }, res }, this.target.baseUrl) ??
        (await searchListing(this.getWithinBound, c, body, this.target.baseUrl).catch(() => undefined))?.found;
      if (!uri) continue;
      this.created.push(uri.path);
      this.add(uri.path, `the ${uri.how} of a message created in ${c}`, "document", c);
      const last = uri.path.split("/").pop();
      if (last) this.ids.add(decodeSafe(last));
    }
  }

  /** Breadth first, bounded by the request budget and by one visit per template. */
  async walk(): Promise<void> {
    const visitedTemplates = new Map<string, number>();
    // An index, not shift(): a queue of a hundred thousand paths is walked once, not copied at every step.
    let next = 0;
    while (next < this.queue.length && this.canSend()) {
      const path = this.queue[next++] as string;
      const template = templateKey(path, this.ids);
      const visits = visitedTemplates.get(template) ?? 0;
      if (visits >= TEMPLATE_VISITS) continue;
      visitedTemplates.set(template, visits + 1);
      const res = await this.send("GET", path);
      const entry = this.entries.get(path) as Entry;
      entry.status = res.status;
      if (res.status === 405 && answersOnlyPost(res)) entry.served = "action";
      if (res.status < 200 || res.status >= 300) continue;
      const rep = representationOf(res);
      if (rep && entry.kind === "unknown" && path !== "/")
        entry.kind = looksLikeCollection(rep.value) ? "collection" : "document";
      if (rep && path !== "/" && looksLikeCollection(rep.value)) entry.served = "listing";
      this.learn(res, path);
    }
    if (next < this.queue.length && !this.canSend())
      this.notes.push(
        `the bound of ${this.config.maxDiscoveryRequests} discovery requests was reached; ` +
          `${this.queue.length - next} paths were not fetched`,
      );
  }

  async cleanup(): Promise<void> {
    for (const path of this.created) {
      try {
        await this.target.request({ method: "DELETE", path, headers: { accept: ACCEPT } });
      } catch {
        // Best effort: the message was the probe's own.
      }
    }
  }

  /** Every path seen, the root excluded, with the segments that hold an id and what its template's path did. */
  result(): Discovery {
    // One path per template is fetched: what it did is what every path of its template does.
    const servedBy = new Map<string, NonNullable<Entry["served"]>>();
    for (const e of this.entries.values())
      if (e.served !== undefined) servedBy.set(templateKey(e.path, this.ids), e.served);
    const paths: DiscoveredPath[] = [];
    for (const e of this.entries.values()) {
      if (e.path === "/") continue;
      const served = e.served ?? servedBy.get(templateKey(e.path, this.ids));
      paths.push({
        path: e.path,
        idSegments: idSegmentsOf(e.path, this.ids),
        kind: e.kind,
        source: e.source,
        ...(e.foundOn !== undefined && { foundOn: e.foundOn }),
        ...(e.status !== undefined && { status: e.status }),
        ...(served !== undefined && { served }),
      });
    }
    return {
      paths,
      links: this.links,
      requests: this.requests,
      notes: this.notes,
      queryParameters: this.queryParameters,
      keyPlacements: this.keyPlacements,
    };
  }
}

/**
 * Which segments hold an id. The spec does not show the id format (part 2), so no format is assumed: a segment
 * is an id when the server used that value as an id somewhere (an id member, a created resource's last segment),
 * when it is a template variable, or when it has no letter at all, which no noun lacks.
 */
export function idSegmentsOf(path: string, ids: ReadonlySet<string>): number[] {
  const segs = path.split("/").filter((s) => s !== "");
  const out: number[] = [];
  segs.forEach((raw, i) => {
    const s = decodeSafe(raw);
    if (/^\{[^}]*\}$/.test(s) || /^:[A-Za-z_]\w*$/.test(s) || ids.has(s) || !/\p{L}/u.test(s)) out.push(i);
  });
  return out;
}

function templateKey(path: string, ids: ReadonlySet<string>): string {
  const idx = new Set(idSegmentsOf(path, ids));
  return path
    .split("/")
    .filter((s) => s !== "")
    .map((s, i) => (idx.has(i) ? "{id}" : s))
    .join("/");
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Paths an OpenAPI document may name; a document with more is refused rather than judged in part. */
export const MAX_OPENAPI_PATHS = 100_000;
/** Largest OpenAPI document read as YAML; JSON may be as large as a response (8 MiB). */
export const MAX_YAML_BYTES = 1024 * 1024;

/**
 * The paths an OpenAPI document names, with the kind its shape implies: a path with a child {param} is a collection.
 */
async function openApiPaths(
  source: string,
  target: HttpTarget,
  count: () => void,
): Promise<{ paths: [string, PathShape["kind"], string[]][]; keyPlacements: ApiKeyPlacement[] }> {
  const text = await loadDocument(source, target, count);
  let doc: unknown;
  const json = parseJson(text);
  if (json.ok) doc = json.value;
  else {
    // JSON.parse is linear and fast; a YAML parser is neither on every input, and runs on the event loop: bounded.
    if (text.length > MAX_YAML_BYTES)
      throw new ConformanceError(
        "config",
        `--openapi ${source}: not JSON, and a YAML document of more than ${MAX_YAML_BYTES} bytes is not read ` +
          `(give it as JSON)`,
      );
    // A missing dependency is the install's fault, not the document's: exit 70, never "neither JSON nor YAML".
    const yaml = await import("yaml").catch((err: unknown) => {
      throw new ConformanceError(
        "internal",
        `cannot read YAML: ${err instanceof Error ? err.message : String(err)} (the installation is incomplete: ` +
          `reinstall with npm ci)`,
        { cause: err },
      );
    });
    try {
      doc = yaml.parse(text) as unknown;
    } catch (err) {
      throw new ConformanceError(
        "config",
        `--openapi ${source}: neither JSON nor YAML (${err instanceof Error ? err.message : String(err)})`,
      );
    }
  }
  const paths = (doc as { paths?: unknown } | null)?.paths;
  if (paths === null || typeof paths !== "object")
    throw new ConformanceError("config", `--openapi ${source}: the document has no "paths" object`);
  const names = Object.keys(paths as object);
  if (names.length > MAX_OPENAPI_PATHS)
    throw new ConformanceError(
      "config",
      `--openapi ${source}: the document names ${names.length} paths; at most ${MAX_OPENAPI_PATHS} are read`,
    );
  // One pass: the paths that have a child {param} (`/a/{id}` makes `/a` a collection), so each path is looked up, not
  // compared with every other.
  const withChildParam = new Set<string>();
  for (const q of names) {
    const slash = q.lastIndexOf("/");
    if (slash >= 0 && q.startsWith("{", slash + 1)) withChildParam.add(q.slice(0, slash));
  }
  const found = names.map((p): [string, PathShape["kind"], string[]] => {
    const kind: PathShape["kind"] = withChildParam.has(p) ? "collection" : /\}$/.test(p) ? "document" : "unknown";
    return [p, kind, queryParametersOf((paths as Record<string, unknown>)[p])];
  });
  return { paths: found, keyPlacements: keyPlacementsOf(doc) };
}

/** Security schemes read, at most: a document is the target's text like any other. */
const MAX_SCHEMES = 16;

/**
 * Where the document's security schemes put a key (OpenAPI 3 components.securitySchemes, Swagger 2
 * securityDefinitions): apiKey in a header or the query, and HTTP bearer. A cookie is no placement a request here sets.
 */
function keyPlacementsOf(doc: unknown): ApiKeyPlacement[] {
  const d = doc as { components?: { securitySchemes?: unknown }; securityDefinitions?: unknown } | null;
  const schemes = d?.components?.securitySchemes ?? d?.securityDefinitions;
  if (schemes === null || typeof schemes !== "object") return [];
  const out: ApiKeyPlacement[] = [];
  for (const scheme of Object.values(schemes as Record<string, unknown>).slice(0, MAX_SCHEMES)) {
    const s = scheme as { type?: unknown; in?: unknown; name?: unknown; scheme?: unknown } | null;
    if (
      s?.type === "apiKey" &&
      typeof s.name === "string" &&
      /^[A-Za-z0-9._~-]{1,64}$/.test(s.name) &&
      (s.in === "header" || s.in === "query")
    )
      out.push({ in: s.in, name: s.name });
    else if (s?.type === "http" && typeof s.scheme === "string" && s.scheme.toLowerCase() === "bearer")
      out.push({ in: "header", name: "Authorization", scheme: "Bearer" });
  }
  return out;
}

/** The names of the query parameters of a path item's GET (and those the path item gives all its operations). */
function queryParametersOf(item: unknown): string[] {
  if (item === null || typeof item !== "object") return [];
  const get = (item as Record<string, unknown>)["get"];
  const lists = [
    (item as Record<string, unknown>)["parameters"],
    get !== null && typeof get === "object" ? (get as Record<string, unknown>)["parameters"] : undefined,
  ];
  const names = new Set<string>();
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const p of list.slice(0, 100)) {
      const param = p as { in?: unknown; name?: unknown } | null;
      if (param?.in === "query" && typeof param.name === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(param.name))
        names.add(param.name);
    }
  }
  return [...names];
}

async function loadDocument(source: string, target: HttpTarget, count: () => void): Promise<string> {
  if (/^https?:\/\//i.test(source) || (source.startsWith("/") && !existsSync(source))) {
    const path = toTargetPath(source, target.baseUrl);
    // Nothing is sent anywhere but the target: an OpenAPI URL on another origin is refused.
    if (path === undefined)
      throw new ConformanceError(
        "usage",
        `--openapi ${source}: not on the target's origin (${new URL(target.baseUrl).origin})`,
      );
    count();
    const res = await target.request({
      method: "GET",
      path,
      headers: { accept: "application/json, application/yaml;q=0.9, */*;q=0.1" },
    });
    if (res.status !== 200) {
      const file = /^https?:\/\//i.test(source) ? "" : "no such file, and ";
      throw new ConformanceError(
        "config",
        `--openapi ${source}: ${file}GET ${path} on the target got ${res.status || (res.failure?.kind ?? "no answer")}`,
      );
    }
    return res.text;
  }
  try {
    return readFileSync(source, "utf8");
  } catch (err) {
    throw new ConformanceError("config", `--openapi ${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** A 405 whose Allow names POST and nothing else but OPTIONS: a path that serves no representation, only an action. */
function answersOnlyPost(res: HttpResponse): boolean {
  const allow = (res.headers["allow"] ?? [])
    .join(",")
    .split(",")
    .map((m) => m.trim().toUpperCase())
    .filter((m) => m !== "");
  return allow.includes("POST") && allow.every((m) => m === "POST" || m === "OPTIONS");
}
