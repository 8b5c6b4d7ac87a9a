// The wire-level client: one hand-built gRPC request over node:http2 on its own connection, read back unnormalised.
// Hand-built on purpose: checks send what a gRPC library refuses to (lying lengths, bad flags, stray frames).
import http2 from "node:http2";
import { SUITE_VERSION } from "../../version.js";
import { defaultAuthority, type ConnectionOptions, type TlsMaterial } from "../../targets/connection.js";
import type { GrpcFrame, RawRequest, RawResponse } from "../rpc.js";
import { HELLO_PATH, isGrpcReply } from "../rpc.js";
import { MAX_REPLY_BYTES } from "../../wire/bounds.js";
import { rawRecord } from "../../trace/records.js";
import { openHttp2Session } from "../../wire/http2.js";

/** Length-prefixes messages as gRPC does: a compressed flag byte, a 4-byte big-endian length, the payload. */
export function encodeFrames(frames: readonly GrpcFrame[]): Uint8Array {
  const total = frames.reduce((n, f) => n + 5 + f.data.length, 0);
  const out = Buffer.alloc(total);
  let at = 0;
  for (const f of frames) {
    out[at] = f.compressed ? 1 : 0;
    out.writeUInt32BE(f.data.length, at + 1);
    out.set(f.data, at + 5);
    at += 5 + f.data.length;
  }
  return out;
}

/** Splits a response body into complete frames; what is left after the last one is reported, not guessed. */
export function decodeFrames(body: Uint8Array): { frames: GrpcFrame[]; leftover: number } {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const frames: GrpcFrame[] = [];
  let at = 0;
  while (buf.length - at >= 5) {
    const len = buf.readUInt32BE(at + 1);
    if (buf.length - at - 5 < len) break;
    frames.push({ compressed: buf[at] !== 0, data: new Uint8Array(buf.subarray(at + 5, at + 5 + len)) });
    at += 5 + len;
  }
  return { frames, leftover: buf.length - at };
}

function fromRaw(raw: readonly string[] | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (let i = 0; raw && i + 1 < raw.length; i += 2) {
    const key = (raw[i] as string).toLowerCase();
    if (key.startsWith(":")) continue;
    (out[key] ??= []).push(raw[i + 1] as string);
  }
  return out;
}

const MAX_BODY = MAX_REPLY_BYTES;

/** Reads the length prefixes of a message stream as it arrives, chunk by chunk, without keeping the payloads. */
function announcedLengths(): (chunk: Buffer) => number[] {
  let payloadLeft = 0;
  const prefix: number[] = [];
  return (chunk) => {
    const lengths: number[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (payloadLeft > 0) {
        const take = Math.min(payloadLeft, chunk.length - at);
        payloadLeft -= take;
        at += take;
        continue;
      }
      prefix.push(chunk[at] as number);
      at++;
      if (prefix.length === 5) {
        payloadLeft = Buffer.from(prefix).readUInt32BE(1);
        lengths.push(payloadLeft);
        prefix.length = 0;
      }
    }
    return lengths;
  };
}

/** One raw call under way: what it has read, its timer, its session, and how it ends (once). */
interface RawCall {
  result: RawResponse;
  chunks: Buffer[];
  size: number;
  session: http2.ClientHttp2Session;
  timer: NodeJS.Timeout | undefined;
  finish: (failure?: RawResponse["failure"]) => void;
}

export function sendRaw(
  conn: ConnectionOptions,
  tls: TlsMaterial | undefined,
  request: RawRequest,
): Promise<RawResponse> {
  const authority = conn.authority ?? defaultAuthority(conn.address);
  const scheme = tls ? "https" : "http";
  const timeoutMs = request.timeoutMs ?? conn.timeoutMs;
  const startedAt = Date.now();
  const sent = request.body instanceof Uint8Array ? request.body : encodeFrames(request.body ?? []);
  const headers = rawHeaders(conn, request, scheme, authority);
  return new Promise<RawResponse>((resolve) => {
    let settled = false;
    const call: RawCall = {
      result: { headers: {}, trailers: {}, trailersOnly: false, frames: [], leftover: 0 },
      chunks: [],
      size: 0,
      session: openHttp2Session({ address: conn.address, tls, authority: conn.authority }),
      timer: undefined,
      finish(failure) {
        if (settled) return;
        settled = true;
        clearTimeout(call.timer);
        const { result } = call;
        const body = Buffer.concat(call.chunks);
        // A reply that is not gRPC (a proxy's HTML error page) holds no messages: its bytes are no length prefixes.
        const { frames, leftover } = isGrpcReply(result.httpStatus, result.headers)
          ? decodeFrames(body)
          : { frames: [], leftover: body.length };
        result.frames = frames;
        result.leftover = leftover;
        if (failure) result.failure = failure;
        call.session.destroy();
        request.trace?.(() =>
          rawRecord(
            "grpc",
            {
              method: String(headers[":method"]),
              url: `${scheme}://${authority}${String(headers[":path"])}`,
              headers,
              body: sent,
            },
            startedAt,
            body,
            result,
          ),
        );
        resolve(result);
      },
    };
    watchSession(call, conn.timeoutMs, timeoutMs, () => settled);
    let stream: http2.ClientHttp2Stream;
    try {
      stream = call.session.request(headers, { endStream: false });
    } catch (err) {
      call.finish({ kind: "connection", message: err instanceof Error ? err.message : String(err) });
      return;
    }
    readReply(call, stream);
    stream.end(Buffer.from(sent.buffer, sent.byteOffset, sent.byteLength));
  });
}

/** The request's headers: gRPC's own, the run's metadata, then the request's, where null removes one. */
function rawHeaders(
  conn: ConnectionOptions,
  request: RawRequest,
  scheme: string,
  authority: string,
): http2.OutgoingHttpHeaders {
  const headers: http2.OutgoingHttpHeaders = {
    ":method": request.method ?? "POST",
    ":path": request.path ?? HELLO_PATH,
    ":scheme": scheme,
    ":authority": authority,
    "content-type": "application/grpc",
    te: "trailers",
    "user-agent": `example-conformance/${SUITE_VERSION}`,
    ...conn.metadata,
  };
  for (const [k, v] of Object.entries(request.headers ?? {})) {
    if (v === null) delete headers[k];
    else headers[k] = v;
  }
  return headers;
}

/**
 * The request's own time runs from when it can be sent: a connection (a TLS handshake on a busy machine, say) is
 * bounded by the run's timeout, and failing that is a connection failure, not a slow answer.
 */
function watchSession(call: RawCall, connectMs: number, timeoutMs: number, settled: () => boolean): void {
  const { session } = call;
  call.timer = setTimeout(
    () => call.finish({ kind: "connection", message: `no connection within ${connectMs} ms` }),
    connectMs,
  );
  session.once("connect", () => {
    clearTimeout(call.timer);
    if (!settled()) call.timer = setTimeout(() => call.finish({ kind: "timeout" }), timeoutMs);
  });
  session.on("error", (err: Error) => call.finish({ kind: "connection", message: err.message }));
  session.on("goaway", (code: number) => {
    if (code !== http2.constants.NGHTTP2_NO_ERROR) call.finish({ kind: "goaway", http2Code: code });
  });
}

function readReply(call: RawCall, stream: http2.ClientHttp2Stream): void {
  const { result, finish } = call;
  stream.on("response", (h, flags, raw?: string[]) => {
    result.httpStatus = Number(h[":status"]);
    result.headers = raw ? fromRaw(raw) : fromRaw(Object.entries(h).flatMap(([k, v]) => [k, String(v)]));
    if ((flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0) {
      result.trailersOnly = true;
      result.trailers = result.headers;
    }
  });
  stream.on("trailers", (h, _flags, raw?: string[]) => {
    result.trailers = raw ? fromRaw(raw) : fromRaw(Object.entries(h).flatMap(([k, v]) => [k, String(v)]));
  });
  const announced = announcedLengths();
  stream.on("data", (chunk: Buffer) => {
    call.size += chunk.length;
    if (call.size > MAX_BODY) {
      finish({ kind: "connection", message: `the response body passed ${MAX_BODY} bytes` });
      return;
    }
    // A message announced past the bound would never be read whole: say so now rather than wait it out. Only in a
    // gRPC reply: "<htm" read as a length is 1.7 GB.
    const tooLong = isGrpcReply(result.httpStatus, result.headers)
      ? announced(chunk).find((n) => n > MAX_BODY)
      : undefined;
    call.chunks.push(chunk);
    if (tooLong !== undefined)
      finish({
        kind: "connection",
        message: `a response message announced as ${tooLong} bytes, past the ${MAX_BODY} a check reads`,
      });
  });
  readEnd(call, stream);
}

/** How the stream ended: cleanly, answered early, reset by the server, or with its connection. */
function readEnd(call: RawCall, stream: http2.ClientHttp2Stream): void {
  const { result, finish, session } = call;
  // RFC 9113 8.1: a server may answer before the request is complete. Once it has ended its side (trailers or
  // END_STREAM), the rest of the body answers no question: the stream is cancelled, so that no more is sent.
  let answeredEarly = false;
  stream.on("end", () => {
    if (stream.writableFinished || result.httpStatus === undefined) return;
    answeredEarly = true;
    stream.close(http2.constants.NGHTTP2_CANCEL);
  });
  let streamError: NodeJS.ErrnoException | undefined;
  stream.on("error", (err: NodeJS.ErrnoException) => {
    // The close event that follows carries the reset code.
    streamError = err;
  });
  stream.on("close", () => {
    const code = stream.rstCode ?? http2.constants.NGHTTP2_NO_ERROR;
    // A stream the server had ended before it was cancelled here ended as the server ended it.
    const endedCleanly =
      answeredEarly || (code === http2.constants.NGHTTP2_NO_ERROR && result.httpStatus !== undefined);
    if (endedCleanly) return finish();
    // A connection that went away (the process died, say) also closes its streams with a code, Node's own (CANCEL,
    // often with no error at all): that is no reset the server sent, and no answer. A RST_STREAM the server sent
    // closes the stream while its session lives.
    if (session.destroyed && streamError?.code !== "ERR_HTTP2_STREAM_ERROR") {
      return finish({
        kind: "connection",
        message:
          `the connection closed under the call ` +
          `(${streamError?.code ?? streamError?.message ?? "no reset was received"})`,
      });
    }
    finish({ kind: "reset", http2Code: code });
  });
}
