// The resources of the HTTP interface and their methods: root, the message collection, a message and its reply.
//
// Every request passes, in this order: the API key (401; the root is open), the path (404), the method (405 with
// Allow), Accept (406), the query (400), Content-Type (415), the body limit (413), the body itself (400), and
// only then the store. So every refusal comes before anything is stored, and an unauthenticated client can
// neither upload a body nor learn which paths exist.
import { METHODS, STATUS_CODES } from "node:http";
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import { helloReplyParts } from "../hello.js";
import type { ApiKeyCheck } from "./auth.js";
import { HttpError } from "./errors.js";
import {
  COLLECTION_PATH,
  collectionLinks,
  errorLinks,
  linkHeader,
  type Link,
  messageLinks,
  messagePath,
  replyLinks,
  ROOT_PATH,
  rootLinks,
} from "./links.js";
import { type Format, MEDIA_TYPES, negotiate, requestFormat } from "./negotiation.js";
import {
  encode,
  type Encoded,
  type MessageRepresentation,
  messageBytes,
  parseMessage,
  type Representation,
  separatorBytes,
  textLength,
} from "./representation.js";
import { type PageBounds, readPage, ReplyTooLargeError } from "./page.js";
import {
  InvalidCursorError,
  StoreFullError,
  StoreUnavailableError,
  type MessageStore,
  type StoredMessage,
  type WriteResult,
} from "./store.js";

/** A page of the collection holds this many messages unless ?limit= asks for fewer or more (up to the cap). */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

type Method = "GET" | "POST" | "PUT" | "DELETE";

interface Exchange {
  params: Readonly<Record<string, string>>;
  /** The representation the request negotiated, which a page is measured in. */
  format: Format;
  query: URLSearchParams;
  /** The raw request body, already within the limit. */
  body: Buffer | undefined;
  /** From Content-Type; the hook has refused POST and PUT without a supported one. */
  bodyFormat: Format;
  /** The If-Match header, for PUT and DELETE. */
  ifMatch: string | undefined;
}

interface Outcome {
  status: number;
  representation?: Representation;
  headers?: Readonly<Record<string, string>>;
  /** Links for a response without a body (204), sent only in the Link header. */
  links?: readonly Link[];
}

interface Resource {
  url: string;
  methods: Partial<Record<Method, (exchange: Exchange) => Promise<Outcome>>>;
  /** Query parameters it understands; any other is a 400, so a mistyped filter never silently matches everything. */
  query: readonly string[];
  /** The root holds no data, only links, so a client can discover the interface (and its 401s) without a key. */
  open: boolean;
}

export interface RoutesOptions {
  store: MessageStore;
  apiKeyCheck?: ApiKeyCheck;
  bodyLimitBytes: number;
  /** How many bytes a page of the collection, and any one reply, may take (see page.ts). */
  pageBounds: PageBounds;
  /** Routes served beside the resources that need no API key (Hello over Connect and gRPC-Web). */
  openRoutes?: ReadonlySet<string>;
  onServerError: (err: unknown, request: FastifyRequest) => void;
}

export function registerRoutes(app: FastifyInstance, options: RoutesOptions): void {
  const { store } = options;

  const resources: Resource[] = [...collectionResources(store, options), ...messageResources(store, found)];

  async function found(params: Readonly<Record<string, string>>): Promise<StoredMessage> {
    const id = params.id ?? "";
    const message = await store.get(id);
    if (message === undefined) throw notFound(id);
    return message;
  }

  const byUrl = new Map(resources.map((r) => [r.url, r]));
  const resourceOf = (request: FastifyRequest) =>
    request.routeOptions.url === undefined ? undefined : byUrl.get(request.routeOptions.url);

  app.addHook("onRequest", async (request) => refuseUnfit(request, resourceOf(request), options));

  for (const resource of resources) {
    app.route({
      method: ROUTED_METHODS as HTTPMethods[],
      url: resource.url,
      handler: async (request, reply) => handle(resource, request, reply, options),
    });
  }

  app.setNotFoundHandler(async (request, reply) =>
    sendError(request, reply, new HttpError(404, "no resource at this path; GET / for links to every resource")),
  );

  app.setErrorHandler(async (error, request, reply) => {
    // A listing that reached a message too large to send links past it, so that a client can list the rest.
    const links =
      error instanceof ReplyTooLargeError && error.next !== undefined
        ? [
            ...errorLinks(),
            {
              rel: "next",
              href: `${COLLECTION_PATH}?${nextPageQuery(queryOf(request), error.next)}`,
              method: "GET",
            } as const,
          ]
        : errorLinks();
    return sendError(request, reply, asHttpError(error, request, options), links);
  });
}

/**
 * Before any handler: the API key (unless the route is open), then for a known resource the method, the Accept
 * header, the query's names and a POST or PUT's body and type; each refusal is the exact status.
 */
function refuseUnfit(request: FastifyRequest, resource: Resource | undefined, options: RoutesOptions): void {
  const open =
    resource?.open ??
    (request.routeOptions.url !== undefined && options.openRoutes?.has(request.routeOptions.url) === true);
  if (options.apiKeyCheck && !open) options.apiKeyCheck(request.headers["x-api-key"]);
  // An unknown path goes on to the not-found handler.
  if (resource === undefined) return;
  const allow = allowOf(resource);
  if (!allow.includes(request.method)) {
    throw new HttpError(405, `${request.method} is not supported here; use ${allow.join(", ")}`, {
      allow: allow.join(", "),
    });
  }
  if (request.method === "OPTIONS") return;
  if (negotiate(request.headers.accept) === undefined) {
    throw new HttpError(
      406,
      `no representation matches the Accept header; available: ${MEDIA_TYPES.json}, ${MEDIA_TYPES.xml}`,
    );
  }
  const query = queryOf(request);
  for (const name of new Set(query.keys())) {
    if (!resource.query.includes(name)) {
      throw new HttpError(
        400,
        resource.query.length === 0
          ? "this resource takes no query parameters"
          : `unknown query parameter "${name}"; filters: ${resource.query.join(", ")}`,
      );
    }
  }
  if (request.method === "POST" || request.method === "PUT") {
    const declared = request.headers["content-length"];
    if (request.headers["transfer-encoding"] === undefined && (declared === undefined || declared === "0")) {
      throw new HttpError(400, "the request body is empty: send a message representation");
    }
    const type = requestFormat(request.headers["content-type"]);
    if ("unsupported" in type) throw new HttpError(415, type.unsupported);
  }
}

/** A resource's method, given the request's parameters, negotiated format, query and body; its outcome sent. */
async function handle(resource: Resource, request: FastifyRequest, reply: FastifyReply, options: RoutesOptions) {
  if (request.method === "OPTIONS") {
    reply.code(204).header("allow", allowOf(resource).join(", "));
    return reply.send();
  }
  const method = (request.method === "HEAD" ? "GET" : request.method) as Method;
  // The hook has refused every method without a handler, so this is always found.
  const handler = resource.methods[method]!;
  const format = negotiate(request.headers.accept)!;
  const typed = requestFormat(request.headers["content-type"]);
  const outcome = await handler({
    params: request.params as Record<string, string>,
    format,
    query: queryOf(request),
    body: Buffer.isBuffer(request.body) ? request.body : undefined,
    bodyFormat: "format" in typed ? typed.format : "json",
    ifMatch: typeof request.headers["if-match"] === "string" ? request.headers["if-match"] : undefined,
  });
  return sendOutcome(reply, format, outcome, options.pageBounds.hardBytes);
}

/** What the client is told for an error: ours as it is, the store's and Fastify's by their meaning, else a 500. */
function asHttpError(error: unknown, request: FastifyRequest, options: RoutesOptions): HttpError {
  if (error instanceof HttpError) return error;
  const code = (error as { code?: unknown }).code;
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE")
    return new HttpError(413, `request bodies are limited to ${options.bodyLimitBytes} bytes`);
  if (error instanceof StoreFullError) return new HttpError(507, `${error.message}; ${error.remedy}`);
  if (error instanceof InvalidCursorError) return new HttpError(400, error.message);
  if (error instanceof ReplyTooLargeError) {
    options.onServerError(error, request);
    return new HttpError(500, `${error.message}: it was stored by a server that accepts larger bodies`);
  }
  if (error instanceof StoreUnavailableError) {
    options.onServerError(error, request);
    return new HttpError(503, "the message store cannot be reached now; retry later", { "retry-after": "1" });
  }
  const status = (error as { statusCode?: unknown }).statusCode;
  // Fastify's own 4xx (a bad Content-Length, a malformed URL, an aborted body) are the client's; their
  // messages name the problem and nothing of the server.
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new HttpError(status, error instanceof Error ? error.message : (STATUS_CODES[status] ?? "client error"));
  }
  options.onServerError(error, request);
  return new HttpError(500, "the server failed to answer this request");
}

/** Errors answer in the negotiated format; when Accept matches nothing (the 406 itself), in JSON, the default. */
function errorFormatOf(request: FastifyRequest): Format {
  return negotiate(request.headers.accept) ?? "json";
}

function queryOf(request: FastifyRequest): URLSearchParams {
  const at = request.url.indexOf("?");
  return new URLSearchParams(at === -1 ? "" : request.url.slice(at + 1));
}

function allowOf(resource: Resource): string[] {
  const allow: string[] = [];
  for (const method of ["GET", "HEAD", "POST", "PUT", "DELETE"] as const) {
    if (method === "HEAD" ? resource.methods.GET : resource.methods[method]) allow.push(method);
  }
  allow.push("OPTIONS");
  return allow;
}

/**
 * Every method Node parses except CONNECT (Node hands it to a separate event), so that any method on a known
 * path reaches the resource and is answered 405 with Allow, not 404 as if the path did not exist.
 */
export const ROUTED_METHODS: readonly string[] = METHODS.filter((m) => m !== "CONNECT");

/** A strong ETag (RFC 9110 §8.8.3) from the message's version: it changes whenever the body does. */
function etagOf(message: StoredMessage): string {
  return `"${message.version}"`;
}

/**
 * If-Match (RFC 9110 §13.1.1) against the message as read: "*" or a list of strong tags. The version the write
 * must still find, so that a change between the read and the write is caught; 412 when no tag matches.
 */
function requiredVersion(ifMatch: string | undefined, existing: StoredMessage): number | undefined {
  if (ifMatch === undefined) return undefined;
  if (ifMatch.trim() === "*") return undefined;
  const tags = ifMatch.split(",").map((t) => t.trim());
  if (!tags.includes(etagOf(existing))) {
    throw new HttpError(
      412,
      `If-Match ${JSON.stringify(ifMatch.slice(0, 100))} does not match the message's current ETag ${etagOf(existing)}`,
    );
  }
  return existing.version;
}

function written<T>(id: string, result: WriteResult<T>): T {
  if ("ok" in result) return result.ok;
  if ("missing" in result) throw notFound(id);
  throw new HttpError(412, `the message changed since it was read: its ETag is now ${etagOf(result.conflict)}`);
}

/** The query of the page after this one: the same filter and limit, and the cursor the store gave. */
function nextPageQuery(query: URLSearchParams, cursor: string): string {
  const next = new URLSearchParams(query);
  next.set("cursor", cursor);
  return next.toString();
}

function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new HttpError(400, `give ${name} at most once`);
  return values[0];
}

function pageSize(limit: string | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_SIZE;
  const n = Number(limit);
  if (!/^\d{1,7}$/.test(limit) || n < 1 || n > MAX_PAGE_SIZE)
    throw new HttpError(400, `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  return n;
}

function requireBody(body: Buffer | undefined): Buffer {
  if (body === undefined || body.length === 0)
    throw new HttpError(400, "the request body is empty: send a message representation");
  return body;
}

function notFound(id: string): HttpError {
  return new HttpError(404, `no message with id ${id}`);
}

function messageRepresentation(message: StoredMessage): MessageRepresentation {
  return { id: message.id, body: message.body, links: messageLinks(message.id) };
}

/** An error representation in the format the request negotiated (JSON when it negotiated none). */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: HttpError,
  links: readonly Link[] = errorLinks(),
) {
  const format = errorFormatOf(request);
  reply.headers(error.headers);
  return sendOutcome(reply, format, {
    status: error.status,
    representation: {
      kind: "error",
      status: error.status,
      reason: STATUS_CODES[error.status] ?? "",
      message: error.message,
      links,
    },
  });
}

function subjectOf(message: MessageRepresentation): string {
  return message.id === undefined ? "this reply" : `message ${message.id}`;
}

/**
 * Writes the outcome. A message whose representation is past `maxBytes` (possible only when another server with a
 * larger body limit stored it) is thrown as ReplyTooLargeError before any of it is sent: the error handler answers it.
 */
function sendOutcome(reply: FastifyReply, format: Format, outcome: Outcome, maxBytes = Infinity) {
  const representation = outcome.representation;
  // Encoding never shrinks a body, and a string has at least as many UTF-8 bytes as UTF-16 units: a body whose
  // length alone is past the bound is not measured at all.
  if (representation?.kind === "message" && textLength(representation.body) > maxBytes) {
    throw new ReplyTooLargeError(subjectOf(representation), textLength(representation.body), maxBytes);
  }
  const body = representation && encode(format, representation);
  if (body !== undefined && representation?.kind === "message" && body.bytes > maxBytes) {
    throw new ReplyTooLargeError(subjectOf(representation), body.bytes, maxBytes);
  }
  reply.code(outcome.status);
  if (outcome.headers) reply.headers(outcome.headers);
  const links = representation?.links ?? outcome.links ?? [];
  const link = linkHeader(links);
  if (link !== undefined) reply.header("link", link);
  if (body === undefined) return reply.send();
  reply.header("content-type", `${MEDIA_TYPES[format]}; charset=utf-8`);
  reply.header("vary", "Accept");
  reply.header("x-content-type-options", "nosniff");
  return sendBody(reply, body);
}

/**
 * The body with its length, made a piece at a time as the client takes it: a reply of one piece is sent as it is,
 * a longer one is streamed, each piece made only once the socket has taken the ones before (see representation.ts).
 * HEAD gets the same Content-Length, and nothing is encoded.
 */
function sendBody(reply: FastifyReply, body: Encoded) {
  reply.header("content-length", String(body.bytes));
  if (reply.request.method === "HEAD") return reply.send();
  const pieces = body.pieces();
  const first = pieces.next();
  if (first.done === true) return reply.send("");
  const second = pieces.next();
  if (second.done === true) return reply.send(first.value);
  return reply.send(pieceByPiece(resumed([first.value, second.value], pieces)));
}

/**
 * UTF-16 units (4 to 12 MiB) every reply together may make in one turn of the event loop before the next piece waits
 * for the next turn.
 */
const TURN_UNITS = 4 * 1024 * 1024;
/** UTF-16 units of pieces made in this turn, by every reply; set to 0 at the turn's end. */
const turn = { units: 0, ending: false };

/**
 * The pieces as a stream that holds the next piece only (a high-water mark of one byte), made when the socket has
 * taken the last. Made as soon as asked, a reply went on piece after piece for as long as the kernel took them,
 * within one turn of the event loop: with the kernel's send buffers grown to megabytes on loopback, 256 connections
 * that each GET a 5 MiB XML reply had the server encode a gigabyte before it read anyone else's request, and a
 * bystander waited more than 15 s. So the replies together make at most TURN_UNITS in a turn (some 25 ms of
 * encoding); past it, each next piece waits for the next turn, with every other client's request. One reply alone,
 * the common case, is written as it was.
 */
function pieceByPiece(pieces: Iterator<string, void, undefined>): Readable {
  return new Readable({
    highWaterMark: 1,
    read() {
      if (turn.units < TURN_UNITS) return void pushNext(this, pieces);
      setImmediate(() => {
        if (!this.destroyed) pushNext(this, pieces);
      });
    },
  });
}

function pushNext(stream: Readable, pieces: Iterator<string, void, undefined>): void {
  if (!turn.ending) {
    turn.ending = true;
    setImmediate(() => {
      turn.units = 0;
      turn.ending = false;
    });
  }
  const next = pieces.next();
  if (next.done === true) {
    stream.push(null);
    return;
  }
  turn.units += next.value.length;
  stream.push(next.value);
}

/** The pieces taken to learn whether there was more than one, then the rest, made as they are asked for. */
function* resumed(
  taken: readonly string[],
  rest: Generator<string, void, undefined>,
): Generator<string, void, undefined> {
  yield* taken;
  yield* rest;
}

/** The root and the collection: the listing (filtered, paged) and creation. */
function collectionResources(store: MessageStore, options: RoutesOptions): Resource[] {
  return [
    {
      url: ROOT_PATH,
      query: [],
      open: true,
      methods: {
        GET: async () => ({ status: 200, representation: { kind: "root", links: rootLinks() } }),
      },
    },
    {
      url: COLLECTION_PATH,
      query: ["body", "limit", "cursor"],
      open: false,
      methods: {
        GET: async ({ query, format }) => {
          const body = single(query, "body");
          const cursor = single(query, "cursor");
          const page = await readPage(
            store,
            {
              filter: body === undefined ? {} : { body },
              limit: pageSize(single(query, "limit")),
              ...(cursor !== undefined && { cursor }),
            },
            (m) => messageBytes(format, messageRepresentation(m)),
            separatorBytes(format),
            options.pageBounds,
          );
          const next = page.next === undefined ? undefined : nextPageQuery(query, page.next);
          return {
            status: 200,
            representation: {
              kind: "messages",
              messages: page.messages.map(messageRepresentation),
              links: collectionLinks(query.toString(), next),
            },
          };
        },
        POST: async ({ body, bodyFormat }) => {
          const input = parseMessage(bodyFormat, requireBody(body));
          const created = await store.create(input.body);
          const location = messagePath(created.id);
          return {
            status: 201,
            representation: { kind: "message", ...messageRepresentation(created) },
            headers: { location, "content-location": location, etag: etagOf(created) },
          };
        },
      },
    },
  ];
}

/** A message (read, replaced, deleted) and its related reply. */
function messageResources(
  store: MessageStore,
  found: (params: Readonly<Record<string, string>>) => Promise<StoredMessage>,
): Resource[] {
  return [
    {
      url: `${COLLECTION_PATH}/:id`,
      query: [],
      open: false,
      methods: {
        GET: async ({ params }) => {
          const message = await found(params);
          return {
            status: 200,
            representation: { kind: "message", ...messageRepresentation(message) },
            headers: { etag: etagOf(message) },
          };
        },
        PUT: async ({ params, body, bodyFormat, ifMatch }) => {
          const existing = await found(params);
          const input = parseMessage(bodyFormat, requireBody(body));
          if (input.id !== undefined && input.id !== existing.id) {
            throw new HttpError(400, `"id" ${input.id} does not match the path; a message's id cannot change`);
          }
          const replaced = written(
            existing.id,
            await store.replace(existing.id, input.body, requiredVersion(ifMatch, existing)),
          );
          return {
            status: 200,
            representation: { kind: "message", ...messageRepresentation(replaced) },
            headers: { etag: etagOf(replaced) },
          };
        },
        DELETE: async ({ params, ifMatch }) => {
          const existing = await found(params);
          written(existing.id, await store.delete(existing.id, requiredVersion(ifMatch, existing)));
          return { status: 204, links: [{ rel: "collection", href: COLLECTION_PATH, method: "GET" }] };
        },
      },
    },
    {
      url: `${COLLECTION_PATH}/:id/reply`,
      query: [],
      open: false,
      methods: {
        GET: async ({ params }) => {
          const message = await found(params);
          // The greeting and the stored body apart: joined, they would be a copy of the body for every reply in flight.
          return {
            status: 200,
            representation: { kind: "message", body: helloReplyParts(message.body), links: replyLinks(message.id) },
          };
        },
      },
    },
  ];
}
