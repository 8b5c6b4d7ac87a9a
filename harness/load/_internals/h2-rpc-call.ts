// Connect and gRPC-Web under load over HTTP/2: the calls in flight multiplexed over a few node:http2 sessions
// (harness/wire/http2.ts, h2 by ALPN over TLS or h2c by prior knowledge), slot w's calls on session w mod sessions,
// as `load --grpc` spreads its calls. Each reply is read bounded, as the HTTP/1.1 caller reads it, and judged by the
// same codec (callResultOf): one reply, one verdict, whichever HTTP version carried it.
import http2 from "node:http2";
import type { ParsedAddress } from "../../targets/address.js";
import { MAX_LOAD_REPLY_BYTES } from "../../wire/bounds.js";
import { keptHttp2Session, type KeptHttp2Session } from "../../wire/http2.js";
import type { CallResult } from "./call-result.js";
import {
  callResultOf,
  type BoundedReply,
  type HttpRpcLoadProtocol,
  type HttpRpcRequest,
  type HttpWire,
} from "./http-rpc-call.js";

/** Headers HTTP/2 carries otherwise (Host is :authority) or forbids (RFC 9113 §8.2.2). */
const NOT_IN_HTTP2 = new Set(["host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

/** One request's HTTP/2 header block: the pseudo-headers, then the wire's headers and the request's own. */
function h2Headers(req: HttpRpcRequest, wire: HttpWire): http2.OutgoingHttpHeaders {
  const path = wire.query === undefined ? req.path : `${req.path}${req.path.includes("?") ? "&" : "?"}${wire.query}`;
  const out: http2.OutgoingHttpHeaders = {
    ":method": "POST",
    ":path": path,
    ...(wire.authority !== undefined && { ":authority": wire.authority }),
  };
  for (const [name, value] of Object.entries({ ...wire.headers, ...req.headers })) {
    if (!NOT_IN_HTTP2.has(name.toLowerCase())) out[name.toLowerCase()] = value;
  }
  return out;
}

/** A response head's fields as the codecs read them: names lowercased, values in lists, pseudo-headers left out. */
function headerLists(h: http2.IncomingHttpHeaders): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(h)) {
    if (name.startsWith(":") || value === undefined) continue;
    out[name] = Array.isArray(value) ? value : [String(value)];
  }
  return out;
}

/**
 * Why a stream failed, as the HTTP/1.1 caller says it: a system error by its code (a stream cancelled because its
 * session could not connect, by its cause's), anything else by its message.
 */
function failureOf(err: NodeJS.ErrnoException): string {
  for (const e of [err, err.cause as NodeJS.ErrnoException | undefined]) {
    if (e?.code !== undefined && /^E[A-Z]+$/.test(e.code)) return e.code;
  }
  return err.message;
}

/** What one exchange came to, and whether the server refused its stream unprocessed (it may be sent again). */
interface H2Outcome {
  reply: BoundedReply | string;
  refused: boolean;
}

/** One exchange on a session: the reply read up to MAX_LOAD_REPLY_BYTES, ended by the timeout; it always resolves. */
function h2Exchange(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  body: Buffer,
  timeoutMs: number,
): Promise<H2Outcome> {
  return new Promise((resolve) => {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(headers);
    } catch (err) {
      resolve({ reply: failureOf(err as NodeJS.ErrnoException), refused: false });
      return;
    }
    let status: number | undefined;
    let head: Record<string, string[]> = {};
    let failure: string | undefined;
    let ended = false;
    let size = 0;
    const chunks: Buffer[] = [];
    const stop = (why: string) => {
      failure ??= why;
      stream.close(http2.constants.NGHTTP2_CANCEL);
    };
    const timer = setTimeout(() => stop(`no reply within ${timeoutMs} ms`), timeoutMs);
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      head = headerLists(h);
    });
    stream.on("data", (c: Buffer) => {
      if (failure !== undefined) return;
      if (size + c.length > MAX_LOAD_REPLY_BYTES) return stop(`a reply past ${MAX_LOAD_REPLY_BYTES} bytes`);
      size += c.length;
      chunks.push(c);
    });
    stream.on("end", () => {
      ended = true;
    });
    stream.on("error", (err: NodeJS.ErrnoException) => {
      failure ??= failureOf(err);
    });
    stream.on("close", () => {
      clearTimeout(timer);
      const refused =
        status === undefined && failure === undefined && stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM;
      if (failure === undefined && status !== undefined && ended) {
        resolve({
          reply: { status, headers: head, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) },
          refused,
        });
        return;
      }
      const why =
        failure ??
        (status === undefined
          ? `stream closed without a reply (HTTP/2 code ${stream.rstCode ?? 0})`
          : "the stream closed before the reply's end");
      resolve({ reply: why, refused });
    });
    stream.end(body);
  });
}

/** Where the sessions go: the target's address, TLS (h2 by ALPN) or none (h2c), and the authority named. */
export interface H2RpcTarget {
  address: ParsedAddress;
  tls: boolean;
  wire: HttpWire;
}

/**
 * Calls over `sessions` HTTP/2 sessions to the target, each kept (replaced once the server sent GOAWAY or it closed,
 * counted in `reconnections`). A call the server refused unprocessed (REFUSED_STREAM, no reply) is sent once more,
 * within what is left of its bound.
 */
export function h2RpcCaller(
  target: H2RpcTarget,
  sessions: number,
  protocol: HttpRpcLoadProtocol,
  requests: readonly HttpRpcRequest[],
  timeoutMs: number,
) {
  const h2 = {
    address: target.address,
    ...(target.tls && { tls: target.wire.tls ?? {} }),
    authority: target.wire.authority,
  };
  const kept: KeptHttp2Session[] = Array.from({ length: sessions }, () =>
    keptHttp2Session({ ...h2, session: { peerMaxConcurrentStreams: 1000 } }),
  );
  const blocks = requests.map((r) => h2Headers(r, target.wire));
  return {
    async call(w: number, i: number): Promise<CallResult> {
      const session = kept[w % kept.length] as KeptHttp2Session;
      const deadline = performance.now() + timeoutMs;
      const body = (requests[i] as HttpRpcRequest).body;
      let outcome = await h2Exchange(session.session, blocks[i] as http2.OutgoingHttpHeaders, body, timeoutMs);
      const left = Math.ceil(deadline - performance.now());
      if (outcome.refused && left > 0)
        outcome = await h2Exchange(session.session, blocks[i] as http2.OutgoingHttpHeaders, body, left);
      return callResultOf(protocol, outcome.reply, timeoutMs);
    },
    get reconnections(): number {
      return kept.reduce((n, k) => n + k.reconnections, 0);
    },
    close(): void {
      for (const k of kept) k.close();
    },
  };
}
