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
  headers: OutgoingHttpHeaders;
}

/** The handler with its answers edited as they are sent: status and headers, before any byte of the body. */
export function editAnswer(handler: HttpHandler, edit: (req: IncomingMessage, answer: Answer) => void): HttpHandler {
  return (req, res) => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
      const given = rest.find((r): r is OutgoingHttpHeaders => typeof r === "object" && r !== null && !Array.isArray(r));
      const answer: Answer = { status, headers: { ...res.getHeaders(), ...given } };
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      edit(req, answer);
      return writeHead.call(this, answer.status, answer.headers);
    } as typeof res.writeHead;
    handler(req, res);
  };
}

/** A message's own path (not the collection, not its reply). */
export const isItem = (req: IncomingMessage) => /^\/messages\/[^/?]+(\?|$)/.test(req.url ?? "");

/** The defects, each wrapped around a handler that has none. */
export const defects = {
  /** A creating POST answers 200 OK, not 201 Created. */
  create200: (h: HttpHandler) => editAnswer(h, (req, a) => void (req.method === "POST" && a.status === 201 && (a.status = 200))),
  /** A creating POST answers 201 without Location. */
  noLocation: (h: HttpHandler) => editAnswer(h, (_req, a) => void delete a.headers["location"]),
  /** A message's GET answers 404: what was created cannot be read back. */
  readLoses: (h: HttpHandler) => editAnswer(h, (req, a) => void (req.method === "GET" && isItem(req) && a.status === 200 && (a.status = 404))),
  /** PUT is served as GET: 200 with the old message, nothing replaced. */
  putIgnored: (h: HttpHandler): HttpHandler => (req, res) => {
    if (req.method === "PUT") req.method = "GET";
    h(req, res);
  },
  /** DELETE answers 204 and deletes nothing. */
  deleteIgnored: (h: HttpHandler): HttpHandler => (req, res) => (req.method === "DELETE" ? void res.writeHead(204).end() : h(req, res)),
  /** A method the resource does not serve gets 404 without Allow, not 405. */
  no405: (h: HttpHandler) => editAnswer(h, (_req, a) => void (a.status === 405 && ((a.status = 404), delete a.headers["allow"]))),
  /** Accept is not read: JSON whatever the client asked for. */
  acceptIgnored: (h: HttpHandler): HttpHandler => (req, res) => {
    delete req.headers["accept"];
    h(req, res);
  },
};

/** The verdict of one check against a handler, in memory, as a run gives it. */
export async function verdictOf(check: CheckDefinition, handler: HttpHandler, options: HttpRunOptions = {}): Promise<CheckOutcome> {
  const [verdict] = await runHttpChecks([check], "http://reference.test", { ...options, inMemory: handler });
  return verdict!.outcome;
}
