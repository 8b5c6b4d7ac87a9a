// The lean path for Hello over Connect and gRPC-Web (reference-server/http/connect-rpc.ts) answers byte for byte as
// connect-es does, and hands connect-es everything else: the same raw HTTP/1.1 requests, sent to one app with the
// lean path and one without it, get the same status line, headers (but Date) and body, while the lean path is seen
// to answer the plain calls.
import net from "node:net";
import { gzipSync } from "node:zlib";
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBodyBytes, encodeMessage } from "../../../common/message.js";
import { registerConnectRpc } from "../../../reference-server/http/connect-rpc.js";
import {
  startHttpServer,
  type HttpServerHandle,
  type HttpServerOptions,
} from "../../../reference-server/http/server.js";
import { MALFORMED } from "../../../suites/grpc/errors-malformed-request.js";

const MAX_MESSAGE_BYTES = 2048;
const PATH = "/example.exampleService/Hello";

interface Served {
  app: FastifyInstance;
  port: number;
  served: { lean: number; "connect-es": number; front: number };
}

/** The RPC route as the reference registers it, on an app that reads other bodies as bytes, as the reference's does. */
async function serveRpc(lean: boolean): Promise<Served> {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "*",
    { parseAs: "buffer" },
    (_r: FastifyRequest, body: Buffer, done: (e: null, b: Buffer) => void) => done(null, body),
  );
  const served = { lean: 0, "connect-es": 0, front: 0 };
  await registerConnectRpc(app, { maxMessageBytes: MAX_MESSAGE_BYTES, lean, onServed: (path) => served[path]++ });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { app, port: address.port, served };
}

let withLean: Served;
let without: Served;
beforeAll(async () => {
  withLean = await serveRpc(true);
  without = await serveRpc(false);
});
afterAll(async () => {
  await withLean.app.close();
  await without.app.close();
});

interface RawCall {
  headers: Record<string, string>;
  body: Buffer;
  /** Send the body this long after the head (a deadline that passes while the body is on its way). */
  bodyAfterMs?: number;
  /** Chunked framing instead of Content-Length. */
  chunked?: boolean;
  /** A Content-Length past the body's: the body never arrives whole. */
  announcedLength?: number;
}

/** One request on its own connection (Connection: close), and every byte the server sent until it closed. */
function exchange(port: number, call: RawCall): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("no complete answer in 10 s"));
    }, 10_000);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("latin1"));
    });
    const framing = call.chunked
      ? "Transfer-Encoding: chunked\r\n"
      : `Content-Length: ${call.announcedLength ?? call.body.length}\r\n`;
    const head =
      `POST ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${framing}` +
      Object.entries(call.headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join("") +
      "\r\n";
    const body = call.chunked
      ? Buffer.concat([Buffer.from(`${call.body.length.toString(16)}\r\n`), call.body, Buffer.from("\r\n0\r\n\r\n")])
      : call.body;
    socket.write(head);
    if (call.bodyAfterMs === undefined) socket.write(body);
    else setTimeout(() => socket.write(body), call.bodyAfterMs);
  });
}

/** The answer without its Date header, the one part that may differ between two servers answering alike. */
const withoutDate = (answer: string) => answer.replace(/\r\nDate: [^\r]*/i, "");

const frame = (flags: number, payload: Uint8Array) => {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
};

const hello = Buffer.from(encodeMessage("lean"));
const invalidUtf8 = Buffer.from(encodeBodyBytes(Buffer.from([0xc0, 0xaf])));
const atLimit = Buffer.from(encodeMessage("x".repeat(MAX_MESSAGE_BYTES - 3)));
const overLimit = Buffer.from(encodeMessage("x".repeat(MAX_MESSAGE_BYTES)));
const large = Buffer.from(encodeMessage("y".repeat(1500)));
const connect = (body: Buffer, headers: Record<string, string> = {}): RawCall => ({
  headers: { "content-type": "application/proto", "connect-protocol-version": "1", ...headers },
  body,
});
const grpcWeb = (body: Buffer, headers: Record<string, string> = {}): RawCall => ({
  headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", ...headers },
  body,
});

/** Calls the lean path answers: connect-es would answer each with its reply. */
const PLAIN: Array<[string, RawCall]> = [
  ["Connect", connect(hello)],
  ["Connect, empty message", connect(Buffer.alloc(0))],
  ["Connect, U+FEFF and non-ASCII", connect(Buffer.from(encodeMessage("\ufeffGrüße 🌍")))],
  ["Connect, unknown fields", connect(Buffer.concat([Buffer.from([0x38, 0x01]), hello]))],
  ["Connect, at the message limit", connect(atLimit)],
  ["Connect, a deadline", connect(hello, { "connect-timeout-ms": "5000" })],
  [
    "Connect, a deadline of 1 ms that passes before the body",
    { ...connect(hello, { "connect-timeout-ms": "1" }), bodyAfterMs: 30 },
  ],
  ["Connect, content type in capitals", connect(hello, { "content-type": "Application/Proto" })],
  ["Connect, no protocol version", { headers: { "content-type": "application/proto" }, body: hello }],
  ["Connect, protocol version 2", connect(hello, { "connect-protocol-version": "2" })],
  ["gRPC-Web", grpcWeb(frame(0, hello))],
  ["gRPC-Web, application/grpc-web", grpcWeb(frame(0, hello), { "content-type": "application/grpc-web" })],
  ["gRPC-Web, a deadline", grpcWeb(frame(0, hello), { "grpc-timeout": "5S" })],
  [
    "gRPC-Web, a deadline of 1 ms that passes before the body",
    { ...grpcWeb(frame(0, hello), { "grpc-timeout": "1m" }), bodyAfterMs: 30 },
  ],
  ["gRPC-Web, at the message limit", grpcWeb(frame(0, atLimit))],
];

/** Calls the lean path leaves to connect-es (some after reading their body). */
const OTHERS: Array<[string, RawCall]> = [
  ["Connect, invalid UTF-8", connect(invalidUtf8)],
  ...MALFORMED.map((m): [string, RawCall] => [`Connect, malformed: ${m.what}`, connect(Buffer.from(m.bytes))]),
  ["Connect, field 1 as a varint", connect(Buffer.from([0x08, 0x01]))],
  ["Connect, past the message limit", connect(overLimit)],
  ["Connect, chunked", { ...connect(hello), chunked: true }],
  ["Connect, gzip", connect(gzipSync(hello), { "content-encoding": "gzip" })],
  ["Connect, identity encoding", connect(hello, { "content-encoding": "identity" })],
  ["Connect, an unknown encoding", connect(hello, { "content-encoding": "snappy" })],
  ["Connect, gzip accepted, a large reply", connect(large, { "accept-encoding": "gzip" })],
  ["Connect, gzip accepted, a small reply", connect(hello, { "accept-encoding": "gzip, br" })],
  ["Connect, a deadline of 0", connect(hello, { "connect-timeout-ms": "0" })],
  ["Connect, a malformed deadline", connect(hello, { "connect-timeout-ms": "1s" })],
  ["Connect, a deadline of 11 digits", connect(hello, { "connect-timeout-ms": "12345678901" })],
  ["Connect, JSON", connect(Buffer.from('{"body":"json"}'), { "content-type": "application/json" })],
  ["Connect, a charset on proto", connect(hello, { "content-type": "application/proto; charset=utf-8" })],
  ["Connect, a streaming content type", connect(frame(0, hello), { "content-type": "application/connect+proto" })],
  ["gRPC-Web, invalid UTF-8", grpcWeb(frame(0, invalidUtf8))],
  ["gRPC-Web, past the message limit", grpcWeb(frame(0, overLimit))],
  ["gRPC-Web, two frames", grpcWeb(Buffer.concat([frame(0, hello), frame(0, hello)]))],
  ["gRPC-Web, no frame", grpcWeb(Buffer.alloc(0))],
  ["gRPC-Web, a short frame", grpcWeb(frame(0, hello).subarray(0, 8))],
  ["gRPC-Web, a frame longer than said", grpcWeb(Buffer.concat([frame(0, hello), Buffer.from([1])]))],
  ["gRPC-Web, a compressed flag", grpcWeb(frame(1, gzipSync(hello)), { "grpc-encoding": "gzip" })],
  ["gRPC-Web, a compressed flag without an encoding", grpcWeb(frame(1, hello))],
  ["gRPC-Web, a trailer flag", grpcWeb(frame(0x80, hello))],
  ["gRPC-Web, gzip accepted", grpcWeb(frame(0, hello), { "grpc-accept-encoding": "gzip" })],
  ["gRPC-Web, an unknown encoding", grpcWeb(frame(0, hello), { "grpc-encoding": "snappy" })],
  ["gRPC-Web, a deadline of 0", grpcWeb(frame(0, hello), { "grpc-timeout": "0m" })],
  ["gRPC-Web, a deadline in microseconds", grpcWeb(frame(0, hello), { "grpc-timeout": "900u" })],
  ["gRPC-Web, a malformed deadline", grpcWeb(frame(0, hello), { "grpc-timeout": "1x" })],
  ["gRPC-Web, JSON", grpcWeb(frame(0, Buffer.from('{"body":"j"}')), { "content-type": "application/grpc-web+json" })],
  [
    "gRPC-Web, text",
    grpcWeb(Buffer.from(frame(0, hello).toString("base64")), { "content-type": "application/grpc-web-text" }),
  ],
  ["no content type", { headers: {}, body: hello }],
  ["another content type", { headers: { "content-type": "text/plain" }, body: hello }],
];

describe("the lean path for Hello over Connect and gRPC-Web", () => {
  it.each(PLAIN)("answers %s itself, as connect-es does", async (_name, call) => {
    const before = { ...withLean.served };
    const lean = await exchange(withLean.port, call);
    expect(withLean.served.lean).toBe(before.lean + 1);
    expect(withLean.served["connect-es"]).toBe(before["connect-es"]);
    expect(lean).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(withoutDate(lean)).toBe(withoutDate(await exchange(without.port, call)));
  });

  it.each(OTHERS)("hands %s to connect-es, which answers as it does without the lean path", async (_name, call) => {
    const before = { ...withLean.served };
    const lean = await exchange(withLean.port, call);
    expect(withLean.served.lean).toBe(before.lean);
    expect(withoutDate(lean)).toBe(withoutDate(await exchange(without.port, call)));
  });

  it("serves every call through connect-es when the lean path is off", () => {
    expect(without.served.lean).toBe(0);
    expect(without.served["connect-es"]).toBe(PLAIN.length + OTHERS.length);
  });
});

/** The reference's HTTP server itself, with the lean front (the default) or without it (fastify serves every call). */
async function serveReference(front: boolean, more: HttpServerOptions = {}) {
  const served = { lean: 0, "connect-es": 0, front: 0 };
  const server = await startHttpServer({
    port: 0,
    log: "silent",
    maxMessageBytes: MAX_MESSAGE_BYTES,
    leanFront: front,
    onRpcServed: (path) => served[path]++,
    ...more,
  });
  return { server, port: server.port, served };
}

describe("the lean front of the reference's HTTP server (before fastify)", () => {
  let fronted: Awaited<ReturnType<typeof serveReference>>;
  let routed: Awaited<ReturnType<typeof serveReference>>;
  const servers: HttpServerHandle[] = [];
  beforeAll(async () => {
    fronted = await serveReference(true);
    routed = await serveReference(false);
    servers.push(fronted.server, routed.server);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it.each(PLAIN)("answers %s itself, byte for byte as fastify's route does", async (_name, call) => {
    const before = { ...fronted.served };
    const beforeRouted = { ...routed.served };
    const answer = await exchange(fronted.port, call);
    expect(fronted.served.front).toBe(before.front + 1);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(withoutDate(answer)).toBe(withoutDate(await exchange(routed.port, call)));
    expect(routed.served.lean).toBe(beforeRouted.lean + 1);
  });

  it.each(OTHERS)("leaves %s to fastify's route or connect-es, answered as without it", async (_name, call) => {
    const before = { ...fronted.served };
    const answer = await exchange(fronted.port, call);
    expect(fronted.served.front).toBe(before.front);
    expect(withoutDate(answer)).toBe(withoutDate(await exchange(routed.port, call)));
  });

  it("is off when asked: fastify's route answers every plain call", () => {
    expect(routed.served.front).toBe(0);
  });

  it("sheds a plain call past the protection's bound as fastify does (503, Retry-After, the resources' shape)", async () => {
    const shedding = await serveReference(true, { protection: { memoryWatermarkBytes: 1 } });
    const shedRouted = await serveReference(false, { protection: { memoryWatermarkBytes: 1 } });
    servers.push(shedding.server, shedRouted.server);
    for (const [, call] of [PLAIN[0], PLAIN[10]] as Array<[string, RawCall]>) {
      const answer = await exchange(shedding.port, call);
      expect(answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n(?:[^\r]*\r\n)*?retry-after: 1\r\n/i);
      expect(withoutDate(answer)).toBe(withoutDate(await exchange(shedRouted.port, call)));
    }
    expect(shedding.served.front).toBe(0);
  });

  it("answers 408 and closes when a plain call's body does not arrive in time, as fastify's route does", async () => {
    const late = await serveReference(true, { requestTimeoutMs: 200 });
    const lateRouted = await serveReference(false, { requestTimeoutMs: 200 });
    servers.push(late.server, lateRouted.server);
    const [, plain] = PLAIN[0] as [string, RawCall];
    const call = { ...plain, announcedLength: plain.body.length + 20 };
    const answer = await exchange(late.port, call);
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(withoutDate(answer)).toBe(withoutDate(await exchange(lateRouted.port, call)));
    expect(late.served.front).toBe(0);
  });
});
