// Request handlers for the in-memory HTTP target (harness/targets/http-inject.ts): the reference's routes, and small
// hand-written defects wrapped around them, each the one thing a check must catch. Unit tests of the HTTP checks
// run each check against both, with no socket.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { CheckDefinition, CheckOutcome } from "../../harness/check.js";
import type { HttpHandler } from "../../harness/targets/http-inject.js";
import { runHttpChecks, type HttpRunOptions } from "./http-context.js";

/** The status and headers a response is about to be sent with, which a defect may change. */
interface Answer {
  status: number;
  /** The reason phrase, when the defect sets one (else Node's standard one). */
  message?: string;
  headers: OutgoingHttpHeaders;
}

/** The handler with its answers edited as they are sent: status and headers, before any byte of the body. */
export function editAnswer(handler: HttpHandler, edit: (req: IncomingMessage, answer: Answer) => void): HttpHandler {
  return (req, res) => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
      const given = rest.find(
        (r): r is OutgoingHttpHeaders => typeof r === "object" && r !== null && !Array.isArray(r),
      );
      const answer: Answer = { status, headers: { ...res.getHeaders(), ...given } };
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      edit(req, answer);
      // Node sends the status message set before writeHead when writeHead is given none.
      if (answer.message !== undefined) res.statusMessage = answer.message;
      return writeHead.call(this, answer.status, answer.headers);
    } as typeof res.writeHead;
    handler(req, res);
  };
}

/** A message's own path (not the collection, not its reply). */
export const isItem = (req: IncomingMessage) => /^\/messages\/[^/?]+(\?|$)/.test(req.url ?? "");

/** The handler with each request's path (not its query) rewritten before it is served. */
export function editPath(handler: HttpHandler, edit: (path: string) => string): HttpHandler {
  return (req, res) => {
    const url = req.url ?? "/";
    const at = url.indexOf("?");
    req.url = at === -1 ? edit(url) : edit(url.slice(0, at)) + url.slice(at);
    handler(req, res);
  };
}

/**
 * The handler with each reply's body written again: the bytes it sent, taken whole as UTF-8, handed to `rewrite` with
 * the reply's Content-Type, and the strings it gives written one after another (each encoded on its own), with no
 * Content-Length (the rewritten body may be of another length).
 */
export function rewriteBody(
  handler: HttpHandler,
  rewrite: (text: string, contentType: string) => readonly string[],
): HttpHandler {
  const unsized = editAnswer(handler, (_req, a) => void delete a.headers["content-length"]);
  return (req, res) => {
    const chunks: Buffer[] = [];
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    const keep = (chunk: unknown) => {
      if (typeof chunk === "string" || chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk);
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof res.write;
    res.end = ((...args: unknown[]) => {
      if (typeof args[0] !== "function") keep(args[0]);
      const type = String(res.getHeader("content-type") ?? "");
      for (const piece of rewrite(Buffer.concat(chunks).toString("utf8"), type)) write(piece);
      return end(...(args.filter((a) => typeof a === "function") as []));
    }) as typeof res.end;
    unsized(req, res);
  };
}

/** The defects, each wrapped around a handler that has none. */
export const defects = {
  /** A creating POST answers 200 OK, not 201 Created. */
  create200: (h: HttpHandler) =>
    editAnswer(h, (req, a) => void (req.method === "POST" && a.status === 201 && (a.status = 200))),
  /** A creating POST answers 201 without Location. */
  noLocation: (h: HttpHandler) => editAnswer(h, (_req, a) => void delete a.headers["location"]),
  /** A message's GET answers 404: what was created cannot be read back. */
  readLoses: (h: HttpHandler) =>
    editAnswer(h, (req, a) => void (req.method === "GET" && isItem(req) && a.status === 200 && (a.status = 404))),
  /** PUT is served as GET: 200 with the old message, nothing replaced. */
  putIgnored:
    (h: HttpHandler): HttpHandler =>
    (req, res) => {
      if (req.method === "PUT") req.method = "GET";
      h(req, res);
    },
  /** DELETE answers 204 and deletes nothing. */
  deleteIgnored:
    (h: HttpHandler): HttpHandler =>
    (req, res) =>
      req.method === "DELETE" ? void res.writeHead(204).end() : h(req, res),
  /** A method the resource does not serve gets 404 without Allow, not 405. */
  no405: (h: HttpHandler) =>
    editAnswer(h, (_req, a) => void (a.status === 405 && ((a.status = 404), delete a.headers["allow"]))),
  /** HEAD answers another Content-Type than GET. */
  headDiffers: (h: HttpHandler) =>
    editAnswer(h, (req, a) => void (req.method === "HEAD" && (a.headers["content-type"] = "text/plain"))),
  /** A body of a type the server does not read gets 400, not 415. */
  no415: (h: HttpHandler) => editAnswer(h, (_req, a) => void (a.status === 415 && (a.status = 400))),
  /** A malformed body makes the server fail: 500, not 400. */
  malformed500: (h: HttpHandler) =>
    editAnswer(h, (req, a) => void (req.method === "POST" && a.status === 400 && (a.status = 500))),
  /** 200 is sent with another reason phrase than RFC 9110's "OK". */
  wrongReason: (h: HttpHandler) => editAnswer(h, (_req, a) => void (a.status === 200 && (a.message = "Fine"))),
  /** A path with a trailing slash is served as the path without it. */
  trailingSlashAlias: (h: HttpHandler) => editPath(h, (path) => (path.length > 1 ? path.replace(/\/+$/, "") : path)),
  /** Paths are routed whatever their case. */
  caseInsensitive: (h: HttpHandler) => editPath(h, (path) => path.toLowerCase()),
  /** A path with .json or .xml is served as the path without it. */
  extensionAlias: (h: HttpHandler) => editPath(h, (path) => path.replace(/\.(json|xml)$/, "")),
  /** Every request is let through as if it carried the key. */
  keyIgnored:
    (key: string) =>
    (h: HttpHandler): HttpHandler =>
    (req, res) => {
      req.headers["x-api-key"] = key;
      h(req, res);
    },
  /** A message that does not exist is the server's failure: 500, not 404. */
  unknown500: (h: HttpHandler) =>
    editAnswer(h, (req, a) => void (req.method === "GET" && isItem(req) && a.status === 404 && (a.status = 500))),
  /**
   * Each reply written in slices of 2,048 UTF-16 units, each encoded on its own: a character beyond U+FFFF across a
   * slice's end is sent as two U+FFFD.
   */
  surrogatesSplit: (h: HttpHandler) =>
    rewriteBody(h, (text) =>
      Array.from({ length: Math.ceil(text.length / 2048) }, (_, i) => text.slice(i * 2048, (i + 1) * 2048)),
    ),
  /** Accept is not read: JSON whatever the client asked for. */
  acceptIgnored:
    (h: HttpHandler): HttpHandler =>
    (req, res) => {
      delete req.headers["accept"];
      h(req, res);
    },
};

/** The verdict of one check against a handler, in memory, as a run gives it. */
export async function verdictOf(
  check: CheckDefinition,
  handler: HttpHandler,
  options: HttpRunOptions = {},
): Promise<CheckOutcome> {
  const [verdict] = await runHttpChecks([check], "http://reference.test", { ...options, inMemory: handler });
  return verdict!.outcome;
}
