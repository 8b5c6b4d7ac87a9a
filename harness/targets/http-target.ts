// The boundary between HTTP checks and an HTTP target: checks see only these interfaces, never node:http.

export interface HttpRequest {
  method: string;
  /** Path and query, relative to the target's base URL, e.g. "/messages?body=x". */
  path: string;
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  /** Leave out the API key the run was given (to probe 401s). */
  withoutApiKey?: boolean;
  /** Bound on this exchange; default the run's --timeout. */
  timeoutMs?: number;
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

export interface HttpConfig {
  /** Collection paths to probe, e.g. ["/messages"]; discovery adds what the server links to. */
  collections: readonly string[];
  /** An OpenAPI document (file path or URL on the target) naming more paths. */
  openapi?: string;
  /** The API key the target needs, and the header it goes in. */
  apiKey?: string;
  apiKeyHeader: string;
  /** Bound on the requests discovery may make. */
  maxDiscoveryRequests: number;
  /** Words that name an action in a path (§4.2 rule 3); default the CRUD verbs and HTTP method names. */
  verbs?: readonly string[];
  /** Words the verb rule lets through: nouns of this interface that are spelled like verbs. */
  allowWords?: readonly string[];
}

export interface HttpTarget {
  /** The base URL as the user gave it, for reports. */
  readonly baseUrl: string;
  /** Sends one request on a fresh connection, with no cookies kept between requests. */
  request(req: HttpRequest): Promise<HttpResponse>;
  /** A curl command line that reproduces the request. */
  curl(req: HttpRequest): string;
  readonly callCount: number;
  close(): Promise<void>;
}
