// One HTTP exchange with no socket: a Node request handler serves the request in memory (light-my-request's inject,
// as fastify's own inject does), and its answer is read within the wire exchange's bounds (http-exchange.ts): the
// time, the body's bytes, the header block's size and the content codings. What Node's server would never send
// (a body on HEAD, 204 or 304) is not read, so a handler is judged on what it would put on the wire.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import inject from "light-my-request";
import type { HttpRequest, HttpResponse } from "./http-target.js";
import { decodeBody } from "./decode-body.js";
import { MAX_HEADER_BYTES, MAX_RESPONSE_BYTES } from "../wire/bounds.js";
import { httpRecord } from "../trace/records.js";

/** A request handler as node:http's createServer takes it: what an in-memory HTTP target serves from. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Node's client refuses a path with these (ERR_UNESCAPED_CHARACTERS): no request is made, here either. */
const UNESCAPED = /[^\u0021-\u00ff]/;

type Failure = NonNullable<HttpResponse["failure"]>;
const failed = (failure: Failure): HttpResponse => ({
  status: 0,
  statusText: "",
  headers: {},
  body: new Uint8Array(),
  text: "",
  failure,
});

export function injectExchange(
  handler: HttpHandler,
  base: URL,
  path: string,
  req: HttpRequest,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<HttpResponse> {
  const method = req.method.toUpperCase();
  const body =
    req.body === undefined
      ? undefined
      : typeof req.body === "string"
        ? Buffer.from(req.body, "utf8")
        : Buffer.from(req.body);
  if (body !== undefined && headers["content-length"] === undefined) headers["content-length"] = String(body.length);
  const startedAt = Date.now();
  return new Promise<HttpResponse>((resolve) => {
    let settled = false;
    let stream: Readable | undefined;
    const finish = (res: HttpResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stream?.destroy();
      req.trace?.(() =>
        httpRecord({ method, url: base.origin + path, headers, ...(body !== undefined && { body }) }, startedAt, res),
      );
      resolve(res);
    };
    const timer = setTimeout(() => finish(failed({ kind: "timeout" })), timeoutMs);
    if (UNESCAPED.test(path))
      return finish(failed({ kind: "connection", message: "Request path contains unescaped characters" }));
    // The path exactly as the check wrote it: inject would resolve dot segments and re-encode it, as no wire does.
    const dispatch: HttpHandler = (request, response) => ((request.url = path), handler(request, response));
    try {
      // Host as Node's client sends it: the base URL's host, its port only when not the scheme's default.
      const options = {
        method: method as "GET",
        url: `${base.origin}/`,
        authority: base.host,
        headers,
        validate: false,
        payloadAsStream: true,
      };
      inject(dispatch, { ...options, ...(body !== undefined && { payload: body }) }, (err, res) => {
        if (err !== undefined && err !== null) return finish(failed({ kind: "connection", message: err.message }));
        if (res === undefined) return finish(failed({ kind: "connection", message: "the handler gave no response" }));
        // An answer after the timeout is not read: its body is dropped as it comes.
        if (settled) return void res.stream().destroy();
        stream = res.stream();
        read(method, res, stream, finish);
      });
    } catch (err) {
      // A handler that throws as it is called: on a socket, the server would have dropped the connection.
      finish(
        failed({
          kind: "connection",
          message: `the handler threw: ${err instanceof Error ? err.message : String(err)}`,
        }),
      );
    }
  });
}

/**
 * The status, the headers (within the wire client's header bound, MAX_HEADER_BYTES) and the body (within
 * MAX_RESPONSE_BYTES).
 */
function read(method: string, res: inject.Response, stream: Readable, finish: (res: HttpResponse) => void): void {
  const headers: Record<string, string[]> = {};
  let headerBytes = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n`.length + 2;
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      (headers[name.toLowerCase()] ??= []).push(String(v));
      headerBytes += name.length + String(v).length + 4;
    }
  }
  // Node's client parser stops at this many bytes of headers (HPE_HEADER_OVERFLOW): a failed exchange, not an answer.
  if (headerBytes > MAX_HEADER_BYTES)
    return finish(failed({ kind: "connection", message: "Parse Error: Header overflow" }));
  const answer = { status: res.statusCode, statusText: res.statusMessage, headers };
  const status = res.statusCode;
  if (method === "HEAD" || status === 204 || status === 304 || status < 200) {
    return finish({ ...answer, body: new Uint8Array(), text: "" });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let ended = false;
  const done = () => {
    if (ended) return;
    ended = true;
    void decodeBody(Buffer.concat(chunks), headers["content-encoding"]).then((body) =>
      finish({
        ...answer,
        ...("failure" in body
          ? { body: new Uint8Array(), text: "", failure: body.failure }
          : { body, text: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8") }),
      }),
    );
  };
  stream.on("data", (c: Buffer) => {
    size += c.length;
    if (size <= MAX_RESPONSE_BYTES) chunks.push(c);
    else stream.destroy(), done();
  });
  stream.on("end", done);
  // A handler that destroys its response mid-body: the answer is what arrived, as on a connection that closed.
  stream.on("error", done);
  stream.on("close", done);
}
