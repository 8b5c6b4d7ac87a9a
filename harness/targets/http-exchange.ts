// One HTTP/1.1 exchange on a fresh connection, bounded in time and in bytes, read as the target sent it: a HEAD
// response's stray body is kept from the raw bytes, and a connection that fails becomes a failure, never a throw.
import * as http from "node:http";
import * as https from "node:https";
import net from "node:net";
import type { TlsMaterial } from "./connection.js";
import type { HttpRequest, HttpResponse } from "./http-target.js";
import { decodeBody, MAX_RESPONSE_BYTES } from "./decode-body.js";
import { httpRecord } from "../trace/records.js";

/** How long a HEAD exchange waits after the headers for bytes a server should not send. */
const HEAD_TAIL_MS = 300;

export function exchange(
  base: URL,
  host: string,
  path: string,
  req: HttpRequest,
  headers: Record<string, string>,
  timeoutMs: number,
  tls: TlsMaterial = {},
): Promise<HttpResponse> {
  const method = req.method.toUpperCase();
  const body = req.body === undefined ? undefined : typeof req.body === "string" ? Buffer.from(req.body, "utf8") : Buffer.from(req.body);
  // Explicit, because Node sends a DELETE or OPTIONS body without a length, which no server can frame.
  if (body !== undefined && headers["content-length"] === undefined) headers["content-length"] = String(body.length);
  const transport = base.protocol === "https:" ? https : http;
  const startedAt = Date.now();
  return new Promise<HttpResponse>((resolve) => {
    let settled = false;
    const raw: Buffer[] = [];
    let rawBytes = 0;
    const finish = (res: HttpResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      req.trace?.(() => httpRecord({ method, url: base.origin + path, headers, ...(body !== undefined && { body }) }, startedAt, res));
      resolve(res);
    };
    const failed = (failure: NonNullable<HttpResponse["failure"]>): HttpResponse => ({
      status: 0,
      statusText: "",
      headers: {},
      body: new Uint8Array(),
      text: "",
      failure,
    });
    const timer = setTimeout(() => finish(failed({ kind: "timeout" })), timeoutMs);
    let request: http.ClientRequest;
    try {
      request = transport.request({
        host,
        port: base.port === "" ? undefined : Number(base.port),
        method,
        path,
        headers,
        // A fresh connection each time, and no cookie jar: no state can ride on the client side.
        agent: false,
        // The run's TLS (--ca, --cert, --key) on every connection: a private CA is trusted here as in the probe.
        ...(base.protocol === "https:" && { ...tls, ...(net.isIP(host) === 0 && { servername: host }) }),
      });
    } catch (err) {
      clearTimeout(timer);
      resolve(failed({ kind: "connection", message: err instanceof Error ? err.message : String(err) }));
      return;
    }
    if (method === "HEAD") {
      // Node's parser drops what follows a HEAD response's headers; the raw bytes show a body that should not be there.
      request.on("socket", (socket) => {
        socket.on("data", (chunk: Buffer) => {
          if (rawBytes < MAX_RESPONSE_BYTES) raw.push(chunk);
          rawBytes += chunk.length;
        });
        // At the response's end Node closes a connection it will not reuse (destroySoon: our FIN, then destroy), and
        // what the server writes after its headers in a write of its own would arrive at a closed socket, seen or not
        // by a race. Only our side is ended here: the socket reads on until the server closes it or the tail below
        // ends, and finish() destroys it.
        socket.destroySoon = () => void socket.end();
      });
    }
    let responded = false;
    // After the response, an error is the parser choking on bytes past it (a body on HEAD): the answer stands.
    request.on("error", (err) => {
      if (!responded) finish(failed({ kind: "connection", message: err.message }));
    });
    request.on("response", (res) => {
      responded = true;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= MAX_RESPONSE_BYTES) chunks.push(c);
        else res.destroy();
      });
      const done = () => {
        const headersOut: Record<string, string[]> = {};
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
          const k = (res.rawHeaders[i] as string).toLowerCase();
          (headersOut[k] ??= []).push(res.rawHeaders[i + 1] as string);
        }
        let bodyBytes = Buffer.concat(chunks);
        const complete = () => {
          if (method === "HEAD") {
            const all = Buffer.concat(raw);
            const end = all.indexOf("\r\n\r\n");
            bodyBytes = end === -1 ? Buffer.alloc(0) : all.subarray(end + 4);
          }
          const answer = { status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", headers: headersOut };
          if (method === "HEAD") {
            finish({ ...answer, body: new Uint8Array(bodyBytes), text: bodyBytes.toString("utf8") });
            return;
          }
          // Without Accept-Encoding any content coding is acceptable (RFC 9110 §12.5.3): the body is what it decodes to.
          void decodeBody(bodyBytes, headersOut["content-encoding"]).then((body) =>
            finish({ ...answer, ...("failure" in body ? { body: new Uint8Array(), text: "", failure: body.failure } : { body, text: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8") }) }),
          );
        };
        if (method === "HEAD") {
          const socket = res.socket;
          const tail = setTimeout(complete, Math.min(HEAD_TAIL_MS, timeoutMs));
          socket?.once("close", () => (clearTimeout(tail), complete()));
          if (!socket || socket.destroyed) (clearTimeout(tail), complete());
        } else {
          complete();
        }
      };
      res.on("end", done);
      res.on("close", () => {
        if (!res.complete && !settled) done();
      });
      res.on("error", () => undefined);
    });
    if (body !== undefined) request.end(body);
    else request.end();
  });
}
