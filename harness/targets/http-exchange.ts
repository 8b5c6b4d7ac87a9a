// One HTTP/1.1 exchange of the HTTP resource target, through the wire layer's client (wire/http1.ts) on a keep-alive
// connection of the target's pool, or on one of its own (a HEAD, a request that asks for one), read as the target
// sent it: a HEAD response's stray body is kept from the raw bytes, a body past the bound is cut off, its content
// codings are undone, and a connection that fails becomes a failure, never a throw.
import type { TlsMaterial } from "./connection.js";
import type { HttpRequest, HttpResponse } from "./http-target.js";
import { decodeBody } from "./decode-body.js";
import { MAX_RESPONSE_BYTES } from "../wire/bounds.js";
import { tlsConnectOptions } from "../wire/tls.js";
import { http1Exchange, type Http1Answer, type Http1Pool } from "../wire/http1.js";
import { httpRecord } from "../trace/records.js";

const failed = (failure: NonNullable<HttpResponse["failure"]>): HttpResponse => ({
  status: 0,
  statusText: "",
  headers: {},
  body: new Uint8Array(),
  text: "",
  failure,
});

/** The response a check reads: a reply cut short after its head (too large, the connection ended) is what came. */
async function read(method: string, answer: Http1Answer): Promise<HttpResponse> {
  if (answer.status === undefined || answer.failure?.kind === "timeout") {
    return failed(
      answer.failure?.kind === "connection"
        ? { kind: "connection", message: answer.failure.message }
        : { kind: "timeout" },
    );
  }
  const head = { status: answer.status, statusText: answer.statusText ?? "", headers: answer.headers };
  if (method === "HEAD") return { ...head, body: new Uint8Array(answer.body), text: answer.body.toString("utf8") };
  // Without Accept-Encoding any content coding is acceptable (RFC 9110 §12.5.3): the body is what it decodes to.
  const body = await decodeBody(answer.body, answer.headers["content-encoding"]);
  if ("failure" in body) return { ...head, body: new Uint8Array(), text: "", failure: body.failure };
  return { ...head, body, text: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8") };
}

/** Methods a client may send again after a connection failed (RFC 9110 §9.2.2); HEAD goes fresh anyway. */
const IDEMPOTENT = new Set(["GET", "PUT", "DELETE", "OPTIONS", "TRACE"]);

/**
 * The connection a request goes on: the pool's, unless there is none (no pool given), it is a HEAD (a body a server
 * sends after a HEAD's head is seen only on a connection of its own, and would spoil the next reply on a shared one),
 * it is not idempotent (a POST on a kept-alive connection the server closed could not be sent again without maybe
 * creating twice), or the request asks for one of its own (a check whose question is about connections or sessions).
 */
function connectionFor(method: string, req: HttpRequest, pool: Http1Pool | undefined): "fresh" | Http1Pool {
  return pool === undefined || !IDEMPOTENT.has(method) || req.connection === "fresh" ? "fresh" : pool;
}

export async function exchange(
  base: URL,
  host: string,
  path: string,
  req: HttpRequest,
  headers: Record<string, string>,
  timeoutMs: number,
  tls: TlsMaterial = {},
  pool?: Http1Pool,
): Promise<HttpResponse> {
  const method = req.method.toUpperCase();
  const body =
    req.body === undefined
      ? undefined
      : typeof req.body === "string"
        ? Buffer.from(req.body, "utf8")
        : Buffer.from(req.body);
  // Explicit, because Node sends a DELETE or OPTIONS body without a length, which no server can frame.
  if (body !== undefined && headers["content-length"] === undefined) headers["content-length"] = String(body.length);
  const startedAt = Date.now();
  const send = (connection: "fresh" | Http1Pool) =>
    http1Exchange({
      origin: base,
      host,
      method,
      path,
      headers,
      ...(body !== undefined && { body }),
      timeoutMs,
      maxBytes: MAX_RESPONSE_BYTES,
      // No cookie jar, on a kept-alive connection or a fresh one: no state can ride on the client side.
      connection,
      // The run's TLS (--ca, --cert, --key) on every connection: a private CA is trusted here as in the probe.
      ...(base.protocol === "https:" && { tls: tlsConnectOptions({ material: tls, serverName: host }) }),
      headBody: true,
    });
  const connection = connectionFor(method, req, pool);
  let answer = await send(connection);
  // A kept-alive connection that failed before any reply (the server had closed it while idle, as it may): sent
  // again on a fresh connection, which is where it would have gone without the pool.
  if (connection !== "fresh" && answer.status === undefined && answer.failure?.kind === "connection")
    answer = await send("fresh");
  const res = await read(method, answer);
  req.trace?.(() =>
    httpRecord({ method, url: base.origin + path, headers, ...(body !== undefined && { body }) }, startedAt, res),
  );
  return res;
}
