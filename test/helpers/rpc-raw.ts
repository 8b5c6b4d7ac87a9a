// Hello over Connect and gRPC-Web with raw bytes over fetch, for tests that must send what no client would (invalid
// UTF-8, truncated messages) and see the status the server put on the wire.
import { codeFromString } from "@connectrpc/connect/protocol-connect";

export interface RawRpcResult {
  /** The gRPC status code (0 OK); for Connect, from the error JSON's code; undefined when none could be read. */
  code: number | undefined;
  /** The reply message's bytes, when the call succeeded. */
  message?: Uint8Array;
  httpStatus: number;
  contentType: string | null;
  /**
   * gRPC-Web: whether the body ended with a trailer frame (flag 0x80), and the grpc-status the HTTP headers carried.
   */
  trailerFrame?: boolean;
  headerStatus?: string | null;
}

const HELLO = "/example.exampleService/Hello";

/** Connect unary: POST the message as the whole body (application/proto). */
export async function connectUnary(
  baseUrl: string,
  message: Uint8Array,
  headers: Record<string, string> = {},
): Promise<RawRpcResult> {
  const res = await fetch(baseUrl + HELLO, {
    method: "POST",
    headers: { "content-type": "application/proto", "connect-protocol-version": "1", ...headers },
    body: message,
    signal: AbortSignal.timeout(5000),
  });
  return connectResult(res);
}

/** Connect unary as GET: the message base64url-encoded in the query, as the Connect protocol defines it. */
export async function connectGet(
  baseUrl: string,
  message: Uint8Array,
  headers: Record<string, string> = {},
): Promise<RawRpcResult> {
  const query = new URLSearchParams({
    connect: "v1",
    encoding: "proto",
    base64: "1",
    message: Buffer.from(message).toString("base64url"),
  });
  const res = await fetch(`${baseUrl}${HELLO}?${query}`, { headers, signal: AbortSignal.timeout(5000) });
  return connectResult(res);
}

async function connectResult(res: Response): Promise<RawRpcResult> {
  const body = new Uint8Array(await res.arrayBuffer());
  const contentType = res.headers.get("content-type");
  if (res.status === 200) return { code: 0, message: body, httpStatus: res.status, contentType };
  let code: number | undefined;
  try {
    const error = JSON.parse(Buffer.from(body).toString("utf8")) as { code?: unknown };
    code = typeof error.code === "string" ? codeFromString(error.code) : undefined;
  } catch {
    code = undefined;
  }
  return { code, httpStatus: res.status, contentType };
}

/** gRPC-Web (binary): one enveloped message in; data and trailer envelopes out, the status read from the trailers. */
export async function grpcWebUnary(
  baseUrl: string,
  message: Uint8Array,
  headers: Record<string, string> = {},
): Promise<RawRpcResult> {
  const envelope = Buffer.alloc(5 + message.length);
  envelope.writeUInt32BE(message.length, 1);
  envelope.set(message, 5);
  const res = await fetch(baseUrl + HELLO, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", ...headers },
    body: envelope,
    signal: AbortSignal.timeout(5000),
  });
  const body = Buffer.from(await res.arrayBuffer());
  let message_: Uint8Array | undefined;
  let trailers = "";
  let trailerFrame = false;
  for (let at = 0; at + 5 <= body.length; ) {
    const flags = body[at]!;
    const length = body.readUInt32BE(at + 1);
    const data = body.subarray(at + 5, at + 5 + length);
    if ((flags & 0x80) !== 0) {
      trailers += data.toString("latin1");
      trailerFrame = true;
    } else message_ = data;
    at += 5 + length;
  }
  // A trailers-only reply may carry the status in the HTTP headers instead.
  const status = /^grpc-status:\s*(\d+)\s*$/im.exec(trailers)?.[1] ?? res.headers.get("grpc-status") ?? undefined;
  const code = status === undefined ? undefined : Number(status);
  return {
    code,
    ...(code === 0 && message_ !== undefined && { message: message_ }),
    httpStatus: res.status,
    contentType: res.headers.get("content-type"),
    trailerFrame,
    headerStatus: res.headers.get("grpc-status"),
  };
}
