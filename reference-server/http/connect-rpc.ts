// Hello over the Connect protocol and gRPC-Web on the HTTP port, beside the REST resources.
//
// The same operation as on the gRPC port, decided the same way: the reply is helloReply of the body; a body that
// is not valid UTF-8, a malformed message or one past the gRPC port's receive limit is refused; unknown fields are
// skipped. No API key is asked for (the gRPC port asks for none: Hello reads no stored data).
//
// Two paths, one wire behaviour. connect-es (its universal handler, as @connectrpc/connect-fastify mounts it)
// decides every request. A plain call, the one a load generator makes again and again, is answered by a lean path
// first (`leanCall`): a POST of one binary Connect message or one gRPC-Web frame, uncompressed, with a deadline of at
// least a millisecond or none, whose body parses and whose reply needs no compression. For it connect-es's answer is
// fixed (200, the reply message, and for gRPC-Web the trailer `grpc-status: 0`), and the lean path writes those very
// bytes with the same serializer and headers, without connect-es's per-request machinery (a fetch Headers object
// per request and per reply, an AbortController linked to the request and aborted with a DOMException at its end,
// async iterables for one message): under `node --cpu-prof` these made a Connect call cost the server 4 to 6 times
// a gRPC call's CPU. Anything else, a refusal included, is handed to connect-es with the bytes already read, so every
// error, content type, compression, timeout and limit is answered by connect-es as before
// (test/reference-server/http/connect-lean.test.ts compares the two paths byte for byte).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { create, type DescMethod, type JsonReadOptions, type JsonWriteOptions } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { createConnectRouter } from "@connectrpc/connect";
import {
  createMethodSerializationLookup,
  type MethodSerializationLookup,
  type UniversalHandler,
  type UniversalServerRequest,
  validateReadWriteMaxBytes,
} from "@connectrpc/connect/protocol";
import * as protoConnect from "@connectrpc/connect/protocol-connect";
import * as protoGrpc from "@connectrpc/connect/protocol-grpc";
import * as protoGrpcWeb from "@connectrpc/connect/protocol-grpc-web";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { exampleService, type MessageSchema } from "../../gen/example/example_pb.js";
import { helloReply } from "../hello.js";
import type { Shedder } from "../protection.js";

export interface ConnectRpcOptions {
  /** Largest request message, after decompression; past it RESOURCE_EXHAUSTED, as on the gRPC port. */
  maxMessageBytes: number;
  /** Which path answered each call: for tests that compare the two paths. */
  onServed?: (path: "lean" | "connect-es" | "front") => void;
  /** False: connect-es answers every call (the lean path is off). For tests that compare the two; default true. */
  lean?: boolean;
}

/**
 * Hello as the HTTP interface serves it over RPC protocols. The contract does not mark it side-effect free, and
 * the Connect protocol allows GET only for methods that are: this server's Hello has no side effects (a pure
 * function of the request), so it says so, and serves Connect GET as well as POST.
 */
export const HELLO_RPC: DescMethod = {
  ...exampleService.method.hello,
  idempotency: MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS,
};

/** Hello as generated, with its message types (HELLO_RPC's are the same). */
const HELLO = exampleService.method.hello;

/** The route Connect and gRPC-Web clients call: /example.exampleService/Hello. */
export const HELLO_RPC_PATH = `/${exampleService.typeName}/${exampleService.method.hello.name}`;

/**
 * protobuf-es decodes proto3 strings strictly (invalid UTF-8 is a parse error) and keeps unknown fields aside, as
 * the gRPC port's decoder does; JSON's unknown members are skipped likewise. A JSON body is turned into text
 * before it is parsed, by a decoder connect-es takes from these options (read by its JSON serialization, though
 * not in its types): a fatal one, so invalid UTF-8 is refused (INVALID_ARGUMENT), never read as U+FFFD.
 */
const JSON_OPTIONS: Partial<JsonReadOptions & JsonWriteOptions> & {
  textDecoder: { decode(bytes: Uint8Array): string };
} = {
  ignoreUnknownFields: true,
  textDecoder: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }),
};

/** Hello's request message with body "warm-up", in a gRPC-Web envelope (flags 0, length 9). */
const WARM_UP_GRPC_WEB = Buffer.from([0, 0, 0, 0, 9, 0x0a, 7, ...Buffer.from("warm-up")]);

/**
 * Hello over each path before the server listens, in-process (fastify's inject: no socket, no client): the lean
 * path for Connect and gRPC-Web, and connect-es for a Connect and a gRPC-Web call in JSON (which the lean path never
 * takes). The first RPC a fresh process serves pays for what Node and connect-es load and compile on first use:
 * connect-node makes a fetch Headers object per request, and the first one loads Node's bundled undici (about
 * 13 ms of the first call's 25 ms of CPU under --cpu-prof), the rest is code run for the first time. Measured with
 * curl, one call on a fresh server: 22 ms for gRPC-Web (49 ms for Connect when it came first) against 2 ms once
 * warm. So the first client's call is served as fast as every later one. Nothing of the warm-up is kept: the
 * replies are dropped, and the calls store nothing (Hello is a pure function of its request).
 */
export async function warmConnectRpc(app: FastifyInstance): Promise<void> {
  const json = Buffer.from('{"body":"warm-up"}');
  for (const [type, payload] of [
    ["application/proto", WARM_UP_GRPC_WEB.subarray(5)],
    ["application/grpc-web+proto", WARM_UP_GRPC_WEB],
    ["application/json", json],
    ["application/grpc-web+json", Buffer.concat([Buffer.from([0, 0, 0, 0, json.length]), json])],
  ] as const) {
    await app.inject({ method: "POST", url: HELLO_RPC_PATH, headers: { "content-type": type }, payload });
  }
}

/** What connect-es is given, as @connectrpc/connect-fastify gives it (gzip and brotli, its default compressions). */
function connectEsOptions(options: ConnectRpcOptions) {
  return {
    // gRPC proper needs HTTP/2 trailers, which this HTTP/1.1 server cannot send: it has its own port.
    grpc: false,
    grpcWeb: true,
    connect: true,
    readMaxBytes: options.maxMessageBytes,
    jsonOptions: JSON_OPTIONS,
    acceptCompression: [compressionGzip, compressionBrotli],
  };
}

/** Hello as connect-es serves it, and connect-es's own serializers with its limits (the lean path's). */
function helloHandlers(options: ConnectRpcOptions): { connectEs: UniversalHandler; serialization: Serialization } {
  const router = createConnectRouter(connectEsOptions(options));
  router.rpc(HELLO_RPC as typeof HELLO, (request) => ({ body: helloReply(request.body) }));
  const [connectEs] = router.handlers as [UniversalHandler];
  // connect-es's own serializers, with its limits: the lean path parses and writes exactly as it does.
  const serialization = createMethodSerializationLookup(
    HELLO,
    undefined,
    JSON_OPTIONS,
    validateReadWriteMaxBytes(options.maxMessageBytes, undefined, undefined),
  );
  return { connectEs, serialization };
}

/**
 * connect-es answers, from the body already read when there is one (as connect-fastify's plugin calls it), after
 * the headers already set on the reply.
 */
async function answerConnectEs(
  connectEs: UniversalHandler,
  raw: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, unknown>,
  body?: Uint8Array,
): Promise<void> {
  try {
    const universal: UniversalServerRequest = universalRequestFromNodeRequest(raw, res, undefined, undefined);
    if (body !== undefined) universal.body = oneChunk(body);
    const answer = await connectEs(universal);
    for (const [key, value] of Object.entries(headers)) {
      if (value !== undefined) res.setHeader(key, value as string | number | readonly string[]);
    }
    await universalResponseToNodeResponse(answer, res);
  } catch {
    // As connect-fastify: a call whose client went away, or one connect-node could not take (no Host), gets
    // nothing more; its connection's close ends it.
  }
}

export async function registerConnectRpc(app: FastifyInstance, options: ConnectRpcOptions): Promise<void> {
  const { connectEs, serialization } = helloHandlers(options);
  const lean = options.lean !== false;

  async function answerWithConnectEs(request: FastifyRequest, reply: FastifyReply, body?: Uint8Array) {
    options.onServed?.("connect-es");
    await answerConnectEs(connectEs, request.raw, reply.raw, reply.getHeaders(), body);
  }

  await app.register(async (scope) => {
    // The body of a content type connect-es knows is read by the handler, not by fastify (as connect-fastify does).
    scope.addContentTypeParser(
      [
        protoConnect.contentTypeUnaryJson,
        protoConnect.contentTypeStreamJson,
        protoGrpcWeb.contentTypeProto,
        protoGrpcWeb.contentTypeJson,
        protoGrpc.contentTypeProto,
        protoGrpc.contentTypeJson,
      ],
      leaveBodyUnread,
    );
    scope.addContentTypeParser(protoGrpc.contentTypeRegExp, leaveBodyUnread);
    scope.addContentTypeParser(protoGrpcWeb.contentTypeRegExp, leaveBodyUnread);
    scope.addContentTypeParser(protoConnect.contentTypeRegExp, leaveBodyUnread);
    scope.all(HELLO_RPC_PATH, async (request, reply) => {
      const call = lean ? leanCall(request.raw, options.maxMessageBytes) : undefined;
      if (call === undefined) return answerWithConnectEs(request, reply);
      const body = await readBody(request.raw);
      if (body === undefined) return; // the client went away, or a protection closed the connection
      const answer = answerLean(call, body, serialization);
      if (answer === undefined) return answerWithConnectEs(request, reply, body);
      options.onServed?.("lean");
      writeLean(reply, call, answer);
    });
  });
}

function leaveBodyUnread(_request: FastifyRequest, _payload: unknown, done: (err: null, body?: undefined) => void) {
  done(null, undefined);
}

async function* oneChunk(body: Uint8Array): AsyncIterable<Uint8Array> {
  yield body;
}

/** A call the lean path may answer, by its headers alone; what is left is decided by its body. */
interface LeanCall {
  protocol: "connect" | "grpc-web";
}

/** gRPC-Web's binary content types (connect-es's regular expression, less JSON and text). */
const GRPC_WEB_PROTO = /^application\/grpc-web(\+proto)?$/i;
/** connect-es's: a Connect deadline is 1 to 10 digits of milliseconds. */
const CONNECT_TIMEOUT = /^\d{1,10}$/;
/** connect-es's gRPC deadline: 1 to 8 digits and a unit; the lean path takes only whole milliseconds and up. */
const GRPC_TIMEOUT = /^\d{1,8}[HMSm]$/;

/**
 * The lean path's call, or undefined for connect-es: a POST of a length-framed body within the message limit, with a
 * Host, no compression asked for or offered, and a deadline connect-es would take without error, of a millisecond or
 * more (a deadline of zero is already past when connect-es sees it).
 */
export function leanCall(raw: IncomingMessage, maxMessageBytes: number): LeanCall | undefined {
  const h = raw.headers;
  if (raw.method !== "POST" || h.host === undefined || h["transfer-encoding"] !== undefined) return undefined;
  const length = Number(h["content-length"]);
  if (!Number.isInteger(length) || h["content-length"] === undefined) return undefined;
  const type = h["content-type"] ?? "";
  if (type.toLowerCase() === "application/proto") {
    if (length > maxMessageBytes) return undefined;
    if (h["content-encoding"] !== undefined || h["accept-encoding"] !== undefined) return undefined;
    const timeout = h["connect-timeout-ms"];
    if (timeout !== undefined && !(CONNECT_TIMEOUT.test(String(timeout)) && Number(timeout) >= 1)) return undefined;
    return { protocol: "connect" };
  }
  if (GRPC_WEB_PROTO.test(type)) {
    if (length > maxMessageBytes + 5) return undefined;
    if (h["grpc-encoding"] !== undefined || h["grpc-accept-encoding"] !== undefined) return undefined;
    const timeout = h["grpc-timeout"];
    if (timeout !== undefined && !(GRPC_TIMEOUT.test(String(timeout)) && Number.parseInt(String(timeout), 10) >= 1))
      return undefined;
    return { protocol: "grpc-web" };
  }
  return undefined;
}

/** The whole body, or undefined when the request ended before it arrived. */
function readBody(raw: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    raw.on("data", (chunk: Buffer) => chunks.push(chunk));
    raw.once("end", () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    raw.once("error", () => resolve(undefined));
    raw.once("close", () => resolve(undefined));
  });
}

type Serialization = MethodSerializationLookup<typeof MessageSchema, typeof MessageSchema>;

/**
 * The reply message's bytes, or undefined where connect-es would answer otherwise: a body that does not parse, past a
 * limit, or (gRPC-Web) not exactly one uncompressed message frame.
 */
export function answerLean(call: LeanCall, body: Uint8Array, serialization: Serialization): Uint8Array | undefined {
  let message = body;
  if (call.protocol === "grpc-web") {
    if (body.length < 5 || body[0] !== 0) return undefined;
    const length = Buffer.from(body.buffer, body.byteOffset, body.length).readUInt32BE(1);
    if (length !== body.length - 5) return undefined;
    message = body.subarray(5);
  }
  try {
    const request = serialization.getI(true).parse(message);
    return serialization.getO(true).serialize(create(HELLO.output, { body: helloReply(request.body) }));
  } catch {
    return undefined;
  }
}

/** The gRPC-Web trailer connect-es writes after a reply: `grpc-status: 0`, in a frame flagged 0x80. */
const GRPC_WEB_OK_TRAILER = Buffer.from([0x80, 0, 0, 0, 16, ...Buffer.from("grpc-status: 0\r\n")]);

/** The lean reply through fastify's reply, after the headers set on it. */
function writeLean(reply: FastifyReply, call: LeanCall, message: Uint8Array): void {
  writeLeanTo(reply.raw, reply.getHeaders(), call, message);
}

/**
 * connect-es's reply to a call it answers without error: the same status, headers (in its order, after those already
 * set on the reply) and body.
 */
function writeLeanTo(res: ServerResponse, headers: Record<string, unknown>, call: LeanCall, message: Uint8Array): void {
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined) res.setHeader(key, value as string | number | readonly string[]);
  }
  if (call.protocol === "connect") {
    res.writeHead(200, { "content-length": String(message.length), "content-type": "application/proto" });
    res.end(message);
    return;
  }
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  res.writeHead(200, { "content-type": "application/grpc-web+proto" });
  res.write(frame);
  res.end(GRPC_WEB_OK_TRAILER);
}

/** What the lean front needs of the server around it (server.ts). */
export interface LeanFrontOptions extends ConnectRpcOptions {
  /** fastify's body limit: a call with a longer body is left to fastify, which refuses it. */
  bodyLimitBytes: number;
  /** A call whose body has not arrived within this gets a 408 (`onLate`), as every request routed by fastify. */
  requestTimeoutMs: number;
  onLate: (socket: Socket) => void;
  /** Whether the front may answer now: not while the server closes (fastify answers 503) or logs every request. */
  open: () => boolean;
  /** The HTTP port's shedder: a call it refuses is left to fastify, which sheds it in the resources' error shape. */
  shedder: Shedder;
}

/**
 * The lean path in front of fastify: the plain call (leanCall, at exactly HELLO_RPC_PATH, within fastify's body
 * limit) answered with the very bytes the route would write, without fastify's request and reply objects, hooks and
 * routing, which cost the server about as much CPU a call as the rest of the call (a bare node:http server answering
 * as the lean path does spent 29-40 us a call where the reference spent 54-75, `load --connect` alternated). It
 * keeps what fastify's hooks do for such a call: the shedder admits it (or fastify refuses it), the body's arrival is
 * bounded by requestTimeoutMs (408), and a body that does not parse goes to connect-es with the bytes read, as the
 * route does. Returns false for anything else: fastify serves it.
 */
export function createLeanFront(options: LeanFrontOptions): (raw: IncomingMessage, res: ServerResponse) => boolean {
  const { connectEs, serialization } = helloHandlers(options);
  return (raw, res) => {
    if (raw.url !== HELLO_RPC_PATH || !options.open()) return false;
    const call = leanCall(raw, options.maxMessageBytes);
    if (call === undefined || Number(raw.headers["content-length"]) > options.bodyLimitBytes) return false;
    if (options.shedder.admit() !== undefined) return false;
    let ended = false;
    const end = () => {
      if (!ended) options.shedder.done();
      ended = true;
    };
    res.once("finish", end);
    res.once("close", end);
    const timer = raw.complete
      ? undefined
      : setTimeout(() => {
          if (!raw.complete) options.onLate(raw.socket);
        }, options.requestTimeoutMs);
    void readBody(raw).then(async (body) => {
      clearTimeout(timer);
      if (body === undefined) return; // the client went away, or a protection closed the connection
      const answer = answerLean(call, body, serialization);
      if (answer === undefined) {
        options.onServed?.("connect-es");
        return answerConnectEs(connectEs, raw, res, {}, body);
      }
      options.onServed?.("front");
      writeLeanTo(res, {}, call, answer);
    });
    return true;
  };
}
