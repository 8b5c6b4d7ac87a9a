// Builds the HttpTarget that HTTP checks use: HTTP/1.1 on node:http(s), a fresh connection per request, behind one
// budget, the API key where the run places it; or, for an in-memory target, a request handler with no socket
// (http-inject.ts). The base URL (http-base-url.ts), the exchange (http-exchange.ts)
// and the curl line (http-curl.ts) are their own modules.
import net from "node:net";
import { ConformanceError } from "../errors.js";
import { resolveHttpTarget, type HttpTargetOptions, type ResolvedHttpTarget } from "../run-config.js";
import { CallBudget } from "./budget.js";
import { loadTls, type TlsOptions } from "./connection.js";
import { SILENT_CALLS_LIMIT } from "./guards.js";
import { endpointOf } from "./http-base-url.js";
import { API_KEY_PLACEHOLDER, renderCurl } from "./http-curl.js";
import { exchange } from "./http-exchange.js";
import { injectExchange } from "./http-inject.js";
import { http1Answer } from "./http1-probe.js";
import { BackpressureLog, waitOut } from "./backpressure.js";
import { backpressureWaitMs } from "./retry-after.js";
import { describeTlsFailure, isTlsError } from "./tls-failure.js";
import type { ApiKeyPlacement, HttpRequest, HttpResponse, HttpTarget } from "./http-target.js";
import { openTls } from "../wire/tls.js";

/** A target from options as given: resolved (harness/run-config.ts), then opened. */
export function createHttpTarget(options: HttpTargetOptions): HttpTarget & { budget: CallBudget } {
  return openHttpTarget(resolveHttpTarget(options));
}

/** A target from resolved options: it defaults nothing. */
export function openHttpTarget(
  options: ResolvedHttpTarget,
  backpressure = new BackpressureLog(),
): HttpTarget & { budget: CallBudget } {
  const base = options.url;
  const prefix = base.pathname.replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs;
  const placement: ApiKeyPlacement = options.apiKeyIn;
  const { host } = endpointOf(base);
  const budget = options.budget ?? new CallBudget({ maxCalls: options.maxCalls, rate: options.rate });
  const material = base.protocol === "https:" && options.tls !== undefined ? loadTls(options.tls) : {};

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
      throw new ConformanceError(
        "internal",
        `an HTTP check asked for ${JSON.stringify(req.path)}: paths start with one "/"`,
      );
    }
    const key = keyOf(req, shown);
    if (key === undefined || placement.in !== "query") return prefix + req.path;
    const param = `${encodeURIComponent(placement.name)}=${shown ? key : encodeURIComponent(key)}`;
    return `${prefix}${req.path}${req.path.includes("?") ? "&" : "?"}${param}`;
  };

  // On the wire, or to a request handler in memory (http-inject.ts) with the same bounds.
  const { inMemory } = options;
  const send = (path: string, req: HttpRequest, headers: Record<string, string>, ms: number) =>
    inMemory !== undefined
      ? injectExchange(inMemory, base, path, req, headers, ms)
      : exchange(base, host, path, req, headers, ms, material);

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
        throw new ConformanceError(
          "unreachable",
          `${options.baseUrl} stopped answering: ${silent} requests in a row got no answer within ${timeoutMs} ms`,
        );
      }
      const path = pathOf(req);
      // A target that asks the run to slow down (429, 503 with Retry-After) is waited out within the run's bound.
      const res: HttpResponse = await waitOut({
        send: async () => (await budget.take(), send(path, req, headersOf(req), req.timeoutMs ?? timeoutMs)),
        askedWait: (r) => {
          const ms = backpressureWaitMs(req.method, r.status, r.headers["retry-after"]?.[0]);
          return ms === undefined ? undefined : { ms, answer: String(r.status) };
        },
        log: backpressure,
        target: options.baseUrl,
        ...(req.signal && { signal: req.signal }),
      });
      silent = res.failure?.kind === "timeout" ? silent + 1 : 0;
      return res;
    },
    curl(req) {
      return renderCurl({
        req,
        headers: headersOf(req, true),
        url: `${base.origin}${pathOf(req, true)}`,
        ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
      });
    },
    async close() {
      // Nothing to close: every exchange had its own connection.
    },
  };
}

/** OpenSSL's alert when the server shares no protocol offered by ALPN (RFC 7301 §3.2): here, http/1.1 refused. */
const NO_APPLICATION_PROTOCOL = "ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL";

/**
 * Opens one connection to the base URL's host and closes it: over TLS for an https:// URL, with the run's CA and
 * client certificate, so that a certificate the run does not trust is a set-up problem named once (exit 3, and the
 * flag that fixes it), never a failure of every check. Exit 3 with the cause when nothing answers.
 */
export async function probeHttpReachable(
  url: URL,
  timeoutMs: number,
  tlsOptions?: TlsOptions,
  flag = "--http",
  baseUrl = url.href,
): Promise<void> {
  const { host, port } = endpointOf(url);
  const material = url.protocol === "https:" ? loadTls(tlsOptions ?? {}) : undefined;
  await new Promise<void>((resolve, reject) => {
    const socket =
      material !== undefined
        ? openTls({ host, port }, { material, serverName: host, alpn: ["http/1.1"] })
        : net.connect({ host, port });
    const fail = (cause: string) => {
      socket.destroy();
      reject(new ConformanceError("unreachable", `cannot reach ${baseUrl}: ${cause}`));
    };
    socket.setTimeout(timeoutMs, () => fail(`no connection within ${timeoutMs} ms`));
    // Once TCP is up, whatever fails is the TLS handshake's (a reset included: a server that wants a certificate).
    let tcpUp = false;
    socket.once("connect", () => (tcpUp = true));
    socket.once("error", (err: NodeJS.ErrnoException) => {
      // The server agrees on no protocol the HTTP checks speak: a set-up verdict about the protocol, not about TLS.
      if (err.code === NO_APPLICATION_PROTOCOL) {
        socket.destroy();
        reject(
          new ConformanceError(
            "unreachable",
            `${flag} ${baseUrl} does not speak HTTP/1.1, which the HTTP checks speak: TLS refused ALPN http/1.1 ` +
              `(no application protocol): an HTTP/2-only TLS port, as a gRPC server's is`,
          ),
        );
        return;
      }
      fail(
        material !== undefined && (tcpUp || isTlsError(err))
          ? describeTlsFailure(err, tlsOptions, "use http://")
          : err.code
            ? `${err.code} (${err.message})`
            : err.message,
      );
    });
    socket.once(material !== undefined ? "secureConnect" : "connect", () => {
      socket.destroy();
      resolve();
    });
  });
}

/**
 * Refuses, before any check runs, an HTTP target that does not answer HTTP/1.1, which the HTTP checks speak (an
 * HTTP/2-only port, a gRPC server's say): exit 3 with one line naming the flag, the address and what answered.
 */
export async function assertSpeaksHttp(
  url: URL,
  flag: string,
  timeoutMs: number,
  tlsOptions?: TlsOptions,
  baseUrl = url.href,
): Promise<void> {
  const { host, port } = endpointOf(url);
  const answered = await http1Answer({
    host,
    port,
    path: url.pathname,
    timeoutMs,
    ...(url.protocol === "https:" && { tls: loadTls(tlsOptions ?? {}) }),
  });
  if (answered !== undefined)
    throw new ConformanceError(
      "unreachable",
      `${flag} ${baseUrl} does not speak HTTP/1.1, which the HTTP checks speak: expected an HTTP/1.x reply to ` +
        `GET ${url.pathname}; got ${answered}`,
    );
}
