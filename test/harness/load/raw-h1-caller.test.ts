// The load runs' raw HTTP/1.1 client (harness/load/_internals/raw-h1-caller.ts) against servers written byte by byte
// on 127.0.0.1: every reply read as the pool (undici, wire/http1.ts) reads it, the call's result by the same codec
// equal to the pool's (content length, chunked with extensions and trailers, written a byte at a time, up to the
// close, after interim 1xx replies, HTTP/1.0; errors, shed load, gRPC-Web trailers), and the failures and bounds
// (a head past MAX_HEADER_BYTES, a body past the reply bound, a hang-up before and inside a reply, silence, a
// malformed status line) worded alike; its connections kept alive call after call (after chunked replies with trailers,
// and when the head to the same request changes), replaced after `Connection: close` and after bytes nobody asked
// for; and a request it cannot write as given left to the pool. Seen failing against injected defects: keep-alive
// after `Connection: close`, no body bound, 1xx not skipped, trailers not read, chunk sizes read as decimal, a cached
// head used without comparing it.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callResultOf,
  httpRpcCall,
  httpRpcRequest,
  openPool,
  type HttpRpcLoadProtocol,
} from "../../../harness/load/_internals/http-rpc-call.js";
import { rawH1Caller, requestBytes } from "../../../harness/load/_internals/raw-h1-caller.js";
import { CONNECT } from "../../../harness/protocols/connect/index.js";
import { GRPC_WEB } from "../../../harness/protocols/grpc-web/index.js";
import { MAX_HEADER_BYTES, MAX_LOAD_REPLY_BYTES } from "../../../harness/wire/bounds.js";

/** Generous: no figure of time is asserted, and a loaded 2-core machine may be slow. */
const BOUND_MS = 10_000;
/** Hello's reply message ("Hello, x"), and a gRPC-Web frame of it and its OK trailer. */
const REPLY = Buffer.from([0x0a, 8, ...Buffer.from("Hello, x")]);
const frame = (flags: number, bytes: Buffer) => Buffer.concat([Buffer.from([flags, 0, 0, 0, bytes.length]), bytes]);
const GRPC_WEB_BODY = Buffer.concat([frame(0, REPLY), frame(0x80, Buffer.from("grpc-status: 0\r\n"))]);
const ERROR_JSON = JSON.stringify({ code: "invalid_argument", message: "no" });

/** How the server answers a request for a case: the bytes to write, in pieces written one after another. */
interface Answer {
  pieces: (string | Buffer)[];
  /** Ends the connection after the pieces (a close-delimited reply, a hang-up). */
  close?: boolean;
  /** Never answers. */
  silent?: boolean;
}

const head = (lines: string[]) => `${lines.join("\r\n")}\r\n\r\n`;
const byteByByte = (bytes: Buffer) => [...bytes].map((b) => Buffer.from([b]));

/** Each case by its name (the last segment of the request's path). */
const ANSWERS: Record<string, Answer> = {
  length: {
    pieces: [head(["HTTP/1.1 200 OK", "Content-Type: application/proto", `Content-Length: ${REPLY.length}`]), REPLY],
  },
  "chunked-bytewise": {
    pieces: byteByByte(
      Buffer.concat([
        Buffer.from(head(["HTTP/1.1 200 OK", "content-type: application/proto", "transfer-encoding: chunked"])),
        Buffer.from(`3;ext=1\r\n`),
        REPLY.subarray(0, 3),
        Buffer.from(`\r\n${(REPLY.length - 3).toString(16)}\r\n`),
        REPLY.subarray(3),
        Buffer.from("\r\n0\r\nx-trailer: t\r\n\r\n"),
      ]),
    ),
  },
  "chunked-no-trailers": {
    pieces: [
      head(["HTTP/1.1 200 OK", "content-type: application/proto", "transfer-encoding: chunked"]),
      `${REPLY.length.toString(16)}\r\n`,
      REPLY,
      "\r\n0\r\n\r\n",
    ],
  },
  "to-the-close": { pieces: [head(["HTTP/1.1 200 OK", "content-type: application/proto"]), REPLY], close: true },
  interim: {
    pieces: [
      head(["HTTP/1.1 100 Continue"]),
      head(["HTTP/1.1 103 Early Hints", "link: </x>"]),
      head(["HTTP/1.1 200 OK", "content-type: application/proto", `content-length: ${REPLY.length}`]),
      REPLY,
    ],
  },
  "http-1.0": {
    pieces: [head(["HTTP/1.0 200 OK", "content-type: application/proto", `content-length: ${REPLY.length}`]), REPLY],
    close: true,
  },
  "connect-error": {
    pieces: [
      head(["HTTP/1.1 400 Bad Request", "content-type: application/json", `content-length: ${ERROR_JSON.length}`]),
      ERROR_JSON,
    ],
  },
  shed: { pieces: [head(["HTTP/1.1 503 Service Unavailable", "retry-after: 1", "content-length: 0"])] },
  "no-content": { pieces: [head(["HTTP/1.1 204 No Content"])] },
  "grpc-web": {
    pieces: [
      head(["HTTP/1.1 200 OK", "content-type: application/grpc-web+proto", "transfer-encoding: chunked"]),
      `${GRPC_WEB_BODY.length.toString(16)}\r\n`,
      GRPC_WEB_BODY,
      "\r\n0\r\n\r\n",
    ],
  },
  "bad-status-line": { pieces: ["HTTP/1.1 2000 OK\r\ncontent-length: 0\r\n\r\n"] },
  "long-head": {
    pieces: [head(["HTTP/1.1 200 OK", `x-long: ${"a".repeat(MAX_HEADER_BYTES + 1)}`, "content-length: 0"])],
  },
  "too-large": {
    pieces: [
      head(["HTTP/1.1 200 OK", "content-type: application/proto", `content-length: ${MAX_LOAD_REPLY_BYTES + 1}`]),
      Buffer.alloc(MAX_LOAD_REPLY_BYTES + 1),
    ],
  },
  "too-large-chunked": {
    pieces: [
      head(["HTTP/1.1 200 OK", "content-type: application/proto", "transfer-encoding: chunked"]),
      ...Array.from({ length: 17 }, () =>
        Buffer.concat([Buffer.from("10000\r\n"), Buffer.alloc(0x10000), Buffer.from("\r\n")]),
      ),
    ],
  },
  "hang-up": { pieces: [], close: true },
  "hang-up-in-body": {
    pieces: [head(["HTTP/1.1 200 OK", "content-type: application/proto", "content-length: 100"]), "short"],
    close: true,
  },
  silent: { pieces: [], silent: true },
  close: {
    pieces: [
      head([
        "HTTP/1.1 200 OK",
        "connection: close",
        "content-type: application/proto",
        `content-length: ${REPLY.length}`,
      ]),
      REPLY,
    ],
  },
  "extra-bytes": {
    pieces: [
      head(["HTTP/1.1 200 OK", "content-type: application/proto", `content-length: ${REPLY.length}`]),
      REPLY,
      "HTTP/1.1 200 OK\r\n",
    ],
  },
};

ANSWERS.keep = ANSWERS.length as Answer;
ANSWERS["keep-chunked"] = {
  pieces: [
    head(["HTTP/1.1 200 OK", "content-type: application/proto", "transfer-encoding: chunked"]),
    `${REPLY.length.toString(16)};x=y\r\n`,
    REPLY,
    "\r\n0\r\nx-trailer: 1\r\nx-other: 2\r\n\r\n",
  ],
};

let server: net.Server;
let origin: URL;
/** Connections the server accepted, and requests it read, by case. */
const connections = new Map<string, Set<net.Socket>>();
const requests = new Map<string, number>();
const sockets = new Set<net.Socket>();

/** Reads requests one after another (each with a Content-Length) and answers each by its case. */
function serve(socket: net.Socket): void {
  sockets.add(socket);
  socket.setNoDelay(true);
  socket.on("error", () => undefined);
  socket.on("close", () => sockets.delete(socket));
  let buffered = Buffer.alloc(0);
  let busy = false;
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    if (!busy) void next();
  });
  async function next(): Promise<void> {
    const end = buffered.indexOf("\r\n\r\n");
    if (end === -1) return;
    const text = buffered.toString("latin1", 0, end);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? 0);
    if (buffered.length < end + 4 + length) return;
    buffered = buffered.subarray(end + 4 + length);
    const name = (/^POST (\S+) /.exec(text)?.[1] ?? "").split("?")[0]?.split("/")[1] ?? "";
    (connections.get(name) ?? connections.set(name, new Set()).get(name))?.add(socket);
    requests.set(name, (requests.get(name) ?? 0) + 1);
    // A reply to the same request whose head changes from call to call: the reply message one call, an error the next.
    const answer =
      name === "alternating" ? ANSWERS[(requests.get(name) ?? 0) % 2 ? "length" : "connect-error"] : ANSWERS[name];
    if (answer === undefined || answer.silent) return;
    busy = true;
    for (const piece of answer.pieces) {
      if (socket.destroyed) return;
      await new Promise((resolve) => socket.write(piece, resolve));
    }
    busy = false;
    if (answer.close) socket.destroy();
    else void next();
  }
}

beforeAll(async () => {
  server = net.createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** Hello to the case `name` (a base URL of /name, so the path is /name/example.exampleService/Hello). */
function request(protocol: HttpRpcLoadProtocol, name: string) {
  const base = new URL(`/${name}`, origin);
  return { base, req: httpRpcRequest(protocol, base, Buffer.from([0x0a, 1, 0x78])) };
}

/** One call through the raw client, with `slots` slots (the call on slot 0), and its result by the codec. */
async function rawCall(protocol: HttpRpcLoadProtocol, name: string, timeoutMs = BOUND_MS) {
  const { base, req } = request(protocol, name);
  const raw = rawH1Caller({ origin: base }, {}, [req], 1, timeoutMs, MAX_LOAD_REPLY_BYTES);
  if (raw === undefined) throw new Error("the raw client would not write the request");
  try {
    return await callResultOf(protocol, await raw.call(0, 0), timeoutMs);
  } finally {
    raw.close();
  }
}

/** The same call through the pool (undici), the client the raw one replaced under load. */
async function poolCall(protocol: HttpRpcLoadProtocol, name: string, timeoutMs = BOUND_MS) {
  const { base, req } = request(protocol, name);
  const pool = openPool(base, 1);
  try {
    return await httpRpcCall(protocol, base, pool, req, timeoutMs);
  } finally {
    pool.close();
  }
}

describe("the raw HTTP/1.1 client reads every reply as the pool does", () => {
  it.each([
    [CONNECT, "length"],
    [CONNECT, "chunked-bytewise"],
    [CONNECT, "chunked-no-trailers"],
    [CONNECT, "to-the-close"],
    [CONNECT, "http-1.0"],
    [CONNECT, "connect-error"],
    [CONNECT, "shed"],
    [CONNECT, "no-content"],
    [GRPC_WEB, "grpc-web"],
    [GRPC_WEB, "chunked-bytewise"],
  ] as const)("%s: %s", async (protocol, name) => {
    const raw = await rawCall(protocol, name);
    expect(raw).toEqual(await poolCall(protocol, name));
    if (protocol === CONNECT ? name === "length" || name === "chunked-bytewise" : name === "grpc-web")
      expect(raw).toMatchObject({ code: 0, reply: REPLY });
  });

  it.each([
    ["long-head", "Parse Error: Header overflow"],
    ["too-large", `a reply past ${MAX_LOAD_REPLY_BYTES} bytes`],
    ["too-large-chunked", `a reply past ${MAX_LOAD_REPLY_BYTES} bytes`],
    ["hang-up", "ECONNRESET"],
    ["hang-up-in-body", "the connection closed before the reply's end"],
  ])("fails %s as the pool does: %s", async (name, details) => {
    const raw = await rawCall(CONNECT, name);
    expect(raw).toMatchObject({ code: 14, details, answered: false });
    expect(raw).toEqual(await poolCall(CONNECT, name));
  });

  it("reads past interim 1xx replies, as RFC 9110 §15.2 and node:http do (undici refuses a 100)", async () => {
    expect(await rawCall(CONNECT, "interim")).toEqual({ code: 0, details: "", reply: REPLY, answered: true });
  });

  it("fails a malformed status line, as the pool does (unavailable, in its own words)", async () => {
    const raw = await rawCall(CONNECT, "bad-status-line");
    expect(raw).toMatchObject({ code: 14, details: "Parse Error: Invalid response status", answered: false });
    expect((await poolCall(CONNECT, "bad-status-line")).code).toBe(14);
  });

  it("ends a call the server never answers at its deadline, as the pool does", async () => {
    const raw = await rawCall(CONNECT, "silent", 200);
    expect(raw).toEqual({ code: 4, details: "no reply within 200 ms", answered: false });
    expect(raw).toEqual(await poolCall(CONNECT, "silent", 200));
  });
});

describe("the raw HTTP/1.1 client's connections", () => {
  /** `calls` calls on each of `slots` slots, one after another on each; every result. */
  async function calls(name: string, slots: number, each: number) {
    const { base, req } = request(CONNECT, name);
    const raw = rawH1Caller({ origin: base }, {}, [req], slots, BOUND_MS, MAX_LOAD_REPLY_BYTES);
    if (raw === undefined) throw new Error("the raw client would not write the request");
    try {
      const results = await Promise.all(
        Array.from({ length: slots }, async (_, w) => {
          const out = [];
          for (let k = 0; k < each; k++) out.push(await callResultOf(CONNECT, await raw.call(w, 0), BOUND_MS));
          return out;
        }),
      );
      return results.flat();
    } finally {
      raw.close();
    }
  }

  it("keeps one connection a slot, call after call", async () => {
    const results = await calls("keep", 4, 10);
    expect(results.every((r) => r.code === 0 && r.reply?.equals(REPLY))).toBe(true);
    expect(requests.get("keep")).toBe(40);
    expect(connections.get("keep")?.size).toBe(4);
  });

  it("keeps it after a chunked reply with trailers, read to their end", async () => {
    const results = await calls("keep-chunked", 1, 5);
    expect(results.map((r) => r.reply?.toString("hex"))).toEqual(Array(5).fill(REPLY.toString("hex")));
    expect(connections.get("keep-chunked")?.size).toBe(1);
  });

  it("reads each head anew when it changes, call after call on one connection", async () => {
    const results = await calls("alternating", 1, 4);
    expect(results.map((r) => [r.code, r.reply?.toString("hex")])).toEqual(
      Array(2)
        .fill([
          [0, REPLY.toString("hex")],
          [3, undefined],
        ])
        .flat(),
    );
    expect(connections.get("alternating")?.size).toBe(1);
  });

  it("opens a new one after a reply that said Connection: close, and after bytes nobody asked for", async () => {
    for (const name of ["close", "extra-bytes"]) {
      const results = await calls(name, 1, 5);
      expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
      expect(connections.get(name)?.size).toBe(5);
    }
  });
});

describe("a request the raw HTTP/1.1 client cannot write as given", () => {
  it("is left to the pool: a header value with a line break, a hop-by-hop header, a path with a space", () => {
    const { base, req } = request(CONNECT, "length");
    expect(requestBytes(base, {}, [req])).toHaveLength(1);
    expect(requestBytes(base, { headers: { "x-a": "1\r\nx-b: 2" } }, [req])).toBeUndefined();
    expect(requestBytes(base, { headers: { "keep-alive": "timeout=5" } }, [req])).toBeUndefined();
    expect(requestBytes(base, {}, [{ ...req, path: "/a b" }])).toBeUndefined();
  });

  it("is written otherwise with the wire's headers, its authority as Host, its query, then the request's own", () => {
    const { base, req } = request(CONNECT, "length");
    const [bytes] =
      requestBytes(base, { headers: { "x-key": "k" }, authority: "example.test", query: "key=1" }, [req]) ?? [];
    expect(bytes?.toString("latin1")).toBe(
      `POST ${req.path}?key=1 HTTP/1.1\r\nx-key: k\r\nhost: example.test\r\ncontent-type: application/proto\r\n` +
        "connect-protocol-version: 1\r\ncontent-length: 3\r\n\r\n\n\u0001x",
    );
  });
});
