// Builds the HttpTarget that HTTP checks use: HTTP/1.1 on node:http(s), a fresh connection per request, behind one budget.
import * as http from "node:http";
import * as https from "node:https";
import net from "node:net";
import { ConformanceError } from "../errors.js";
import { isLocal } from "./address.js";
import { CallBudget } from "./budget.js";
import { DEFAULT_MAX_CALLS, DEFAULT_REMOTE_RATE, DEFAULT_TIMEOUT_MS, SILENT_CALLS_LIMIT } from "./create-grpc-target.js";
import { DEFAULT_API_KEY_HEADER, type ApiKeyPlacement, type HttpRequest, type HttpResponse, type HttpTarget } from "./http-target.js";

export interface HttpTargetOptions {
  /** http://host:port[/prefix]: every request goes to this origin, under this prefix. */
  baseUrl: string;
  /** Bound on one exchange in milliseconds (default 5000). */
  timeoutMs?: number;
  /** Sent with every request unless the request asks to leave it out. */
  apiKey?: string;
  /** Default X-API-Key. */
  apiKeyHeader?: string;
  /** Where the key goes; overrides apiKeyHeader. */
  apiKeyIn?: ApiKeyPlacement;
  /** Requests allowed for the whole run (default 10,000). */
  maxCalls?: number;
  /** Requests per second (default: no limit on this machine, 50 elsewhere). */
  rate?: number;
  /** Shared with other targets of the run, so the budget covers the whole run. */
  budget?: CallBudget;
}

/** A response body past this is cut off: a conformance probe never needs more, and a hostile target cannot fill memory. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** How long a HEAD exchange waits after the headers for bytes a server should not send. */
const HEAD_TAIL_MS = 300;
/** The placeholder the specification uses where a key goes (part 5): reports never carry the real key. */
export const API_KEY_PLACEHOLDER = "<API_KEY>";

/** Validates a base URL as the user gave it: http or https, a host, no credentials, query or fragment. */
export function parseHttpBaseUrl(baseUrl: string, flag = "--http"): URL {
  const bad = (why: string) => new ConformanceError("usage", `${flag} ${baseUrl}: ${why}`);
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw bad("not a valid URL (expected http://host:port or https://host[:port][/prefix])");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw bad(`only http and https URLs are supported, not ${url.protocol}`);
  if (url.hostname === "") throw bad("the URL has no host");
  if (url.username !== "" || url.password !== "") throw bad("credentials in the URL are not supported (use --api-key)");
  if (url.search !== "" || url.hash !== "") throw bad("a base URL carries no query or fragment");
  return url;
}

export function createHttpTarget(options: HttpTargetOptions): HttpTarget & { budget: CallBudget } {
  const base = parseHttpBaseUrl(options.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const placement: ApiKeyPlacement = options.apiKeyIn ?? { in: "header", name: options.apiKeyHeader ?? DEFAULT_API_KEY_HEADER };
  const host = base.hostname.replace(/^\[(.*)\]$/, "$1");
  const budget =
    options.budget ??
    new CallBudget({
      maxCalls: options.maxCalls ?? DEFAULT_MAX_CALLS,
      rate: options.rate ?? (isLocalHost(host) ? Infinity : DEFAULT_REMOTE_RATE),
    });

  /** The key a request carries, if any: the run's, or the wrong one a probe asked for. */
  const keyOf = (req: HttpRequest, shown: boolean): string | undefined => {
    if (req.wrongApiKey !== undefined) return req.wrongApiKey;
    if (options.apiKey === undefined || req.withoutApiKey) return undefined;
    // The key itself never reaches a report: the reader puts theirs in its place.
    return shown ? API_KEY_PLACEHOLDER : options.apiKey;
  };
  const headersOf = (req: HttpRequest, shown = false): Record<string, string> => {
    const headers: Record<string, string> = { "user-agent": "example-conformance" };
    for (const [k, v] of Object.entries(req.headers ?? {})) headers[k.toLowerCase()] = v;
    const key = keyOf(req, shown);
    if (key !== undefined && placement.in === "header" && headers[placement.name.toLowerCase()] === undefined) {
      headers[placement.name.toLowerCase()] = placement.scheme !== undefined ? `${placement.scheme} ${key}` : key;
    }
    return headers;
  };
  const pathOf = (req: HttpRequest, shown = false): string => {
    // Only a path on the base URL: a check can never send a request to another origin.
    if (!req.path.startsWith("/") || req.path.startsWith("//")) {
      throw new ConformanceError("internal", `an HTTP check asked for ${JSON.stringify(req.path)}: paths start with one "/"`);
    }
    const key = keyOf(req, shown);
    if (key === undefined || placement.in !== "query") return prefix + req.path;
    const param = `${encodeURIComponent(placement.name)}=${shown ? key : encodeURIComponent(key)}`;
    return `${prefix}${req.path}${req.path.includes("?") ? "&" : "?"}${param}`;
  };

  // A target that stopped answering would make every later check wait out its timeout.
  let silent = 0;
  return {
    baseUrl: options.baseUrl,
    budget,
    get callCount() {
      return budget.used;
    },
    async request(req) {
      if (silent >= SILENT_CALLS_LIMIT) {
        throw new ConformanceError("unreachable", `${options.baseUrl} stopped answering: ${silent} requests in a row got no answer within ${timeoutMs} ms`);
      }
      const path = pathOf(req);
      await budget.take();
      const res = await exchange(base, host, path, req, headersOf(req), req.timeoutMs ?? timeoutMs);
      silent = res.failure?.kind === "timeout" ? silent + 1 : 0;
      return res;
    },
    curl(req) {
      const headers = headersOf(req, true);
      const parts = ["curl", "-sS", "-i"];
      const method = req.method.toUpperCase();
      if (method === "HEAD") parts.push("--head");
      else if (method !== "GET" || req.body !== undefined) parts.push("-X", shellQuote(method));
      for (const [k, v] of Object.entries(headers)) {
        if (k === "user-agent") continue;
        const shown = options.apiKey !== undefined ? v.split(options.apiKey).join(API_KEY_PLACEHOLDER) : v;
        parts.push("-H", shellQuote(`${k}: ${shown}`));
      }
      let pipe = "";
      if (req.body !== undefined) {
        const bytes = typeof req.body === "string" ? Buffer.from(req.body, "utf8") : Buffer.from(req.body);
        if (isPrintable(bytes)) {
          parts.push("--data-binary", shellQuote(bytes.toString("utf8")));
        } else {
          // Bytes a shell string cannot hold go through printf's octal escapes, which every POSIX shell knows.
          pipe = `printf '${[...bytes].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("")}' | `;
          parts.push("--data-binary", "@-");
        }
      }
      parts.push(shellQuote(`${base.origin}${pathOf(req, true)}`));
      return pipe + parts.join(" ");
    },
    async close() {
      // Nothing to close: every exchange had its own connection.
    },
  };
}

/** Opens one TCP connection to the base URL's host and closes it: exit 3 with the cause when nothing answers. */
export async function probeHttpReachable(baseUrl: string, timeoutMs: number = DEFAULT_TIMEOUT_MS): Promise<void> {
  const url = parseHttpBaseUrl(baseUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  await new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host, port });
    const fail = (cause: string) => {
      socket.destroy();
      reject(new ConformanceError("unreachable", `cannot reach ${baseUrl}: ${cause}`));
    };
    socket.setTimeout(timeoutMs, () => fail(`no connection within ${timeoutMs} ms`));
    socket.once("error", (err: NodeJS.ErrnoException) => fail(err.code ? `${err.code} (${err.message})` : err.message));
    socket.once("connect", () => {
      socket.destroy();
      resolve();
    });
  });
}

function isLocalHost(host: string): boolean {
  return isLocal({ kind: "tcp", host, port: 1, grpcTarget: "" });
}

function exchange(
  base: URL,
  host: string,
  path: string,
  req: HttpRequest,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<HttpResponse> {
  const method = req.method.toUpperCase();
  const body = req.body === undefined ? undefined : typeof req.body === "string" ? Buffer.from(req.body, "utf8") : Buffer.from(req.body);
  // Explicit, because Node sends a DELETE or OPTIONS body without a length, which no server can frame.
  if (body !== undefined && headers["content-length"] === undefined) headers["content-length"] = String(body.length);
  const transport = base.protocol === "https:" ? https : http;
  return new Promise<HttpResponse>((resolve) => {
    let settled = false;
    const raw: Buffer[] = [];
    let rawBytes = 0;
    const finish = (res: HttpResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
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
        ...(base.protocol === "https:" && net.isIP(host) === 0 && { servername: host }),
      });
    } catch (err) {
      clearTimeout(timer);
      resolve(failed({ kind: "connection", message: err instanceof Error ? err.message : String(err) }));
      return;
    }
    if (method === "HEAD") {
      // Node's parser drops what follows a HEAD response's headers; the raw bytes show a body that should not be there.
      request.on("socket", (socket) =>
        socket.on("data", (chunk: Buffer) => {
          if (rawBytes < MAX_RESPONSE_BYTES) raw.push(chunk);
          rawBytes += chunk.length;
        }),
      );
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
          finish({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? "",
            headers: headersOut,
            body: new Uint8Array(bodyBytes),
            text: bodyBytes.toString("utf8"),
          });
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

function isPrintable(bytes: Buffer): boolean {
  const text = bytes.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(bytes)) return false;
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text);
}

/** Single-quotes a word for POSIX shells: nothing inside is expanded. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
