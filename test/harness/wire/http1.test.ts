// The harness's one HTTP/1.1 client (harness/wire/http1.ts) against a real server on 127.0.0.1: its bounds (reply
// bytes, header bytes, time), its one failure shape, its connection policies (a fresh connection each time, a
// keep-alive pool that keeps to its socket limit), and the Connect reply check and load now read alike.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRpcCall, httpRpcRequest, openPool } from "../../../harness/load/_internals/http-rpc-call.js";
import { connectProtocol } from "../../../harness/protocols/connect/index.js";
import { parseAddress } from "../../../harness/targets/address.js";
import { Status } from "../../../harness/protocols/rpc.js";
import { MAX_HEADER_BYTES } from "../../../harness/wire/bounds.js";
import { http1Exchange, openHttp1Pool, type Http1Client, type Http1Request } from "../../../harness/wire/http1.js";

/** Generous: no figure of time is asserted, and a loaded 2-core machine may be slow. */
const BOUND_MS = 10_000;
const ERROR_BODY = JSON.stringify({ code: "resource_exhausted", message: "the body of a page" });

let server: http.Server;
let origin: URL;
/** The client port of each connection a request came on, by path. */
const ports = new Map<string, number[]>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    const list = ports.get(path) ?? [];
    list.push((req.socket as Socket).remotePort as number);
    ports.set(path, list);
    req.resume();
    req.on("end", () => {
      if (path === "/big")
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.alloc(64 * 1024, 7));
      else if (path === "/long-head") res.writeHead(200, { "x-long": "a".repeat(MAX_HEADER_BYTES + 1) }).end();
      else if (path === "/silent") return;
      else if (path === "/hang-up") req.socket.destroy();
      // What the request came with, as the server saw it: its Keep-Alive field, and how its Host field was spelt.
      else if (path === "/seen")
        res.end(
          JSON.stringify({
            keepAlive: req.headers["keep-alive"] ?? null,
            host: req.rawHeaders.find((name, i) => i % 2 === 0 && name.toLowerCase() === "host"),
          }),
        );
      // A Connect error carried by a page (text/plain), and the same error as Connect sends it (application/json).
      else if (path.startsWith("/page/")) res.writeHead(404, { "content-type": "text/plain" }).end(ERROR_BODY);
      else if (path.startsWith("/json/")) res.writeHead(404, { "content-type": "application/json" }).end(ERROR_BODY);
      else res.writeHead(200, { "x-twice": ["1", "2"] }).end(`answer to ${req.method} ${path}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const ask = (path: string, more: Partial<Http1Request> = {}) =>
  http1Exchange({ origin, method: "GET", path, headers: {}, timeoutMs: BOUND_MS, connection: "fresh", ...more });

describe("the HTTP/1.1 client's connection policies", () => {
  it("opens a connection of its own for each fresh exchange, and reuses a pool's", async () => {
    for (let i = 0; i < 3; i++) await ask("/fresh");
    expect(new Set(ports.get("/fresh")).size).toBe(3);
    const pool = openHttp1Pool(origin);
    try {
      for (let i = 0; i < 3; i++) await ask("/pooled", { connection: pool });
    } finally {
      pool.close();
    }
    expect(new Set(ports.get("/pooled")).size).toBe(1);
  });

  it("keeps a pool to its socket limit: six exchanges at once on two connections", async () => {
    const pool = openHttp1Pool(origin, { maxSockets: 2 });
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () => ask("/limited", { connection: pool })));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    } finally {
      pool.close();
    }
    expect(new Set(ports.get("/limited")).size).toBeLessThanOrEqual(2);
  });
});

/**
 * The Connect protocol (connectrpc.com/docs/protocol, Unary-Response): an error's Content-Type must be
 * application/json, and a client infers the code from the HTTP status when the error body is missing or malformed.
 * A non-200 reply of another type (a proxy's or a framework's page) is no Connect error body, whatever it holds:
 * its HTTP status decides (404: UNIMPLEMENTED). Check and load read it alike (load once read its JSON anyway).
 */
describe("a Connect error reply, read by check and by load alike", () => {
  const hello = new Uint8Array([0x0a, 0x02, 0x68, 0x69]);
  const byCheck = async (base: URL) => {
    const conn = { address: parseAddress(base.host), display: base.href, metadata: {}, timeoutMs: BOUND_MS };
    const transport = connectProtocol.createTransport({ conn, url: base });
    try {
      const r = await transport.unary(hello);
      return { code: r.code, details: r.details };
    } finally {
      transport.close();
    }
  };
  const byLoad = async (base: URL) => {
    const pool = openPool(base, 1);
    try {
      const r = await httpRpcCall("connect", base, pool, httpRpcRequest("connect", base, hello), BOUND_MS);
      return { code: r.code, details: r.details };
    } finally {
      pool.close();
    }
  };

  it("is decided by its HTTP status when it is not application/json", async () => {
    const base = new URL("/page", origin);
    const expected = { code: Status.UNIMPLEMENTED, details: "HTTP 404" };
    expect(await byCheck(base)).toEqual(expected);
    expect(await byLoad(base)).toEqual(expected);
  });

  it("is read as Connect's error when it is application/json", async () => {
    const base = new URL("/json", origin);
    const expected = { code: Status.RESOURCE_EXHAUSTED, details: "the body of a page" };
    expect(await byCheck(base)).toEqual(expected);
    expect(await byLoad(base)).toEqual(expected);
  });
});

/**
 * The client's bounds and failures, on a connection of its own and on a pool's through either client (Http1Client):
 * the same bounds and the same failure shapes. The checks' pools are node:http's; the load runs' undici's.
 */
describe.each(["fresh", "node:http", "undici"] as const)("the HTTP/1.1 client's bounds and failures (%s)", (kind) => {
  let connection: Http1Request["connection"] = "fresh";
  beforeAll(() => {
    if (kind !== "fresh") connection = openHttp1Pool(origin, { client: kind, maxSockets: 2 });
  });
  afterAll(() => {
    if (connection !== "fresh") connection.close();
  });
  const pooled = (path: string, more: Partial<Http1Request> = {}) => ask(path, { connection, ...more });

  it("reads a whole reply: status, every header value in order, the body as sent", async () => {
    const a = await pooled("/plain?x=1", {
      method: "POST",
      body: Buffer.from("hello"),
      headers: { "x-a": ["1", "2"] },
    });
    expect(a).toMatchObject({ status: 200, statusText: "OK", headers: { "x-twice": ["1", "2"] } });
    expect(a.failure).toBeUndefined();
    expect(a.body.toString()).toBe("answer to POST /plain?x=1");
  });

  it("ends a reply past its byte bound too-large, its head and first bytes kept, and the pool goes on", async () => {
    const a = await pooled("/big", { maxBytes: 1000 });
    expect(a.failure).toEqual({ kind: "too-large" });
    expect(a.status).toBe(200);
    expect(a.body.length).toBe(1000);
    const whole = await pooled("/big");
    expect(whole.failure).toBeUndefined();
    expect(whole.body).toEqual(Buffer.alloc(64 * 1024, 7));
  });

  it("ends a head past the header bound as a failed connection, silence as a timeout, a hang-up as node:http says", async () => {
    const long = await pooled("/long-head");
    expect(long.failure).toMatchObject({ kind: "connection", message: expect.stringMatching(/header/i) });
    expect(long.status).toBeUndefined();
    expect(await pooled("/silent", { timeoutMs: 200 })).toEqual({
      headers: {},
      body: Buffer.alloc(0),
      failure: { kind: "timeout" },
    });
    expect((await pooled("/hang-up")).failure).toEqual({
      kind: "connection",
      message: "socket hang up",
      code: "ECONNRESET",
    });
  });

  it("ends an exchange its caller's signal aborts as a failed connection", async () => {
    const stop = new AbortController();
    const pending = pooled("/silent", { signal: stop.signal });
    setImmediate(() => stop.abort());
    const a = await pending;
    expect(a.failure).toMatchObject({ kind: "connection", message: expect.stringMatching(/cancelled/) });
  });

  it("names a refused connection by its system code, never throwing", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const gone = new URL(`http://127.0.0.1:${(closed.address() as AddressInfo).port}`);
    await new Promise((resolve) => closed.close(resolve));
    const refused = kind === "fresh" ? "fresh" : openHttp1Pool(gone, { client: kind });
    try {
      const a = await ask("/", { origin: gone, connection: refused });
      expect(a.failure).toMatchObject({ kind: "connection", code: "ECONNREFUSED" });
    } finally {
      if (refused !== "fresh") refused.close();
    }
  });

  it("sends a request as written, even one undici refuses to write (a Keep-Alive field)", async () => {
    const a = await pooled("/seen", { headers: { "keep-alive": "timeout=5" } });
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body.toString()).keepAlive).toBe("timeout=5");
  });
});

describe("which client a pool sends through", () => {
  /** node:http spells the Host field it adds "Host"; undici "host". */
  const seen = async (client: Http1Client) => {
    const pool = openHttp1Pool(origin, { client });
    try {
      return JSON.parse((await ask("/seen", { connection: pool })).body.toString()).host;
    } finally {
      pool.close();
    }
  };
  it("is node:http by default and undici when asked; load's pools ask", async () => {
    expect(await seen("node:http")).toBe("Host");
    expect(await seen("undici")).toBe("host");
    const pool = openPool(origin, 1);
    try {
      expect(JSON.parse((await ask("/seen", { connection: pool })).body.toString()).host).toBe("host");
    } finally {
      pool.close();
    }
  });
});
