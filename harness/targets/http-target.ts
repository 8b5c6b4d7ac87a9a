// The boundary between HTTP checks and an HTTP target: checks see only these interfaces, never node:http.
import type { TraceSink } from "../trace/exchange-record.js";

export interface HttpRequest {
  method: string;
  /** Path and query, relative to the target's base URL, e.g. "/messages?body=x". */
  path: string;
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  /** Leave out the API key the run was given (to probe 401s). */
  withoutApiKey?: boolean;
  /** Send this in the key's place instead of the run's key (to probe a wrong key); never the real key. */
  wrongApiKey?: string;
  /** Bound on this exchange; default the run's --timeout. */
  timeoutMs?: number;
  /** With --trace: where the exchange is reported (the session gives it). */
  trace?: TraceSink;
  /** Ends the waits a 429 or a 503 asked for when aborted: the check's time is up (the session gives it). */
  signal?: AbortSignal;
  /**
   * "fresh": on a connection of its own, closed after it, for a check whose question is about connections or
   * sessions. Default: a keep-alive connection of the target's (a HEAD always goes on one of its own).
   */
  connection?: "fresh";
}

export interface HttpResponse {
  status: number;
  /** The reason phrase exactly as the status line carried it (HTTP/1.1). */
  statusText: string;
  /** Response headers, lowercased keys, every occurrence kept. */
  headers: Record<string, string[]>;
  body: Uint8Array;
  /** The body decoded as UTF-8 (not strict). */
  text: string;
  /** How the exchange ended when no complete response arrived. */
  failure?: { kind: "timeout" } | { kind: "connection"; message: string };
}

/**
 * Where the API key goes: the specification shows neither placement nor format (part 5). A header of any name,
 * with or without a scheme before the key (Authorization: Bearer K), or a query parameter.
 */
export type ApiKeyPlacement = { in: "header"; name: string; scheme?: string } | { in: "query"; name: string };

/** An HTTP field name: an RFC 9110 token (§5.1, §5.6.2). */
export const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Parses `header:NAME`, `bearer` (Authorization: Bearer K) or `query:NAME`; undefined when it is none of them. */
export function parseApiKeyPlacement(text: string): ApiKeyPlacement | undefined {
  if (text.toLowerCase() === "bearer") return { in: "header", name: "Authorization", scheme: "Bearer" };
  const m = /^(header|query):(.+)$/i.exec(text);
  if (!m) return undefined;
  const where = (m[1] as string).toLowerCase();
  const name = m[2] as string;
  if (where === "header") return HTTP_TOKEN.test(name) ? { in: "header", name } : undefined;
  return /^[A-Za-z0-9._~-]+$/.test(name) ? { in: "query", name } : undefined;
}

/** The placement as --api-key-in spells it. */
export function placementFlag(p: ApiKeyPlacement): string {
  if (p.in === "query") return `query:${p.name}`;
  return p.scheme === "Bearer" && p.name.toLowerCase() === "authorization" ? "bearer" : `header:${p.name}`;
}

/** The placement in words, for reports. */
export function describePlacement(p: ApiKeyPlacement): string {
  if (p.in === "query") return `the ${p.name} query parameter`;
  return p.scheme !== undefined ? `${p.name}: ${p.scheme}` : `the ${p.name} header`;
}

export interface HttpConfig {
  /** Collection paths to probe, e.g. ["/messages"]; discovery adds what the server links to. */
  collections: readonly string[];
  /** An OpenAPI document (file path or URL on the target) naming more paths. */
  openapi?: string;
  /** The API key the target needs, and where it goes. */
  apiKey?: string;
  apiKeyHeader: string;
  apiKeyIn: ApiKeyPlacement;
  /** Query parameters the user says filter a collection (--filter), beside those discovery finds. */
  filters?: readonly string[];
  /** Other instances of the same service (--http-replica): what one stores, every other must serve. */
  replicas?: readonly HttpTarget[];
  /** Bound on the requests discovery may make. */
  maxDiscoveryRequests: number;
  /** The path rules' verb lexicon as the run resolved it (--verbs, --allow-word over the words it was given). */
  words?: PathWords;
}

/**
 * The verb lexicon of the path rules (§4.2 rule 3): the words that name an action and the nouns spelled like verbs
 * that the rule lets through. Given to the engine beside its checks, by whoever gives the checks.
 */
export interface PathWords {
  readonly verbs: readonly string[];
  readonly allowed: readonly string[];
}

export interface HttpTarget {
  /** The base URL as the user gave it, for reports. */
  readonly baseUrl: string;
  /**
   * Sends one request (on a kept-alive connection unless it asks for a fresh one), with no cookies kept between
   * requests.
   */
  request(req: HttpRequest): Promise<HttpResponse>;
  /** A curl command line that reproduces the request. */
  curl(req: HttpRequest): string;
  readonly callCount: number;
  close(): Promise<void>;
}
