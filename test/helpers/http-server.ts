// One HTTP/1.1 exchange over node:http on a fresh connection, keeping what fetch hides: the reason phrase and HEAD.
import * as http from "node:http";

export interface RawResponse {
  status: number;
  /** The reason phrase exactly as the status line carried it. */
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface RawRequest {
  method?: string;
  /** Path and query, sent exactly as given. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body chunked, with no Content-Length. */
  chunked?: boolean;
  timeoutMs?: number;
}

export function rawRequest(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method ?? "GET",
        path: request.path,
        headers: request.headers ?? {},
        // A fresh connection each time: no state can ride on a kept-alive socket.
        agent: false,
        timeout: request.timeoutMs ?? 10_000,
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? "",
            headers: res.headers,
            body,
            text: body.toString("utf8"),
          });
        });
      },
    );
    req.on("timeout", () =>
      req.destroy(new Error(`no answer to ${request.method ?? "GET"} ${request.path} within the bound`)),
    );
    // A server may answer (413) and close before it has read the whole body; the answer is what counts.
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    if (request.body !== undefined && request.chunked) {
      req.setHeader("transfer-encoding", "chunked");
      req.write(request.body);
      req.end();
    } else {
      // Explicit, because Node sends a DELETE or OPTIONS body without one, which no server can frame.
      if (request.body !== undefined && req.getHeader("content-length") === undefined)
        req.setHeader("content-length", Buffer.byteLength(request.body));
      req.end(request.body);
    }
  });
}
