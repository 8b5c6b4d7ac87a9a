// What held when the reference server was attacked as an adversary would, kept held: a compression bomb on every
// protocol is refused by its decompressed size (the receive limit applies after decompression) without the
// process growing by what it would inflate to, and a request that could be read two ways (request smuggling) is
// refused and its connection closed, so no second request hides in its body. (The API key's part of that list,
// refused on every data route and never logged, is proved in http.test.ts.)
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, get, hello, HELLO, post, rssBytes, serve, type Served } from "../helpers/serve-process.js";

afterEach(cleanUp);

/** 256 MiB of zeros, about 256 KB once gzipped: 64 times the default receive limit of 4 MiB. */
const INFLATED = 256 * 1024 * 1024;
const bomb = gzipSync(Buffer.alloc(INFLATED));
const ROUNDS = 8;

const frame = (flags: number, data: Buffer): Buffer => {
  const prefix = Buffer.alloc(5);
  prefix[0] = flags;
  prefix.writeUInt32BE(data.length, 1);
  return Buffer.concat([prefix, data]);
};

/** One gRPC call with a gzip bomb as its message: the grpc-status it got. */
function grpcBomb(port: number): Promise<string> {
  return new Promise((resolve) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", () => resolve("session error"));
    const req = session.request({
      ":method": "POST",
      ":path": HELLO,
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-encoding": "gzip",
    });
    let status = "none";
    req.on("response", (h) => (status = String(h["grpc-status"] ?? status)));
    req.on("trailers", (t) => (status = String(t["grpc-status"] ?? status)));
    req.on("error", () => undefined);
    req.resume();
    req.on("close", () => {
      session.close();
      resolve(status);
    });
    req.end(frame(1, bomb));
  });
}

/** One HTTP/1.1 POST on the HTTP port: status, content type and body (the first 64 KB). */
function httpPost(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent: false,
        headers: { ...headers, "content-length": body.length },
      },
      (res) => {
        let text = "";
        res.setEncoding("latin1");
        res.on("data", (c: string) => (text += text.length < 65_536 ? c : ""));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** RSS of the server before and at most during `rounds` of `attack`, sampled as it runs. */
async function growth(s: Served, attack: () => Promise<void>): Promise<{ before: number; peak: number }> {
  const pid = s.child.pid as number;
  expect((await hello(s.grpcPort, 5000)).status).toBe("0");
  const before = rssBytes(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 20);
  try {
    for (let i = 0; i < ROUNDS; i++) await attack();
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, rssBytes(pid));
  return { before, peak };
}

/**
 * Inflating even one bomb whole would add its 256 MiB; a bounded inflation adds a few times the limit (Connect: about
 * 40 MiB over 16 bombs, its heap's growth).
 */
const BOUND = 96 * 1024 * 1024;

describe("compression bombs: refused by their inflated size on every protocol, the process does not grow by it", () => {
  it("gRPC (grpc-encoding gzip): RESOURCE_EXHAUSTED", async () => {
    const s = await serve();
    const statuses: string[] = [];
    const { before, peak } = await growth(s, async () => void statuses.push(await grpcBomb(s.grpcPort)));
    expect(statuses).toEqual(Array(ROUNDS).fill("8"));
    expect(peak - before, `RSS ${before} → ${peak}`).toBeLessThan(BOUND);
    expect((await hello(s.grpcPort, 5000)).status).toBe("0");
  });

  it("Connect (Content-Encoding gzip, binary and JSON): resource_exhausted (HTTP 429)", async () => {
    const s = await serve();
    const answers: { status: number; body: string }[] = [];
    const { before, peak } = await growth(s, async () => {
      for (const type of ["application/proto", "application/json"])
        answers.push(await httpPost(s.httpPort, HELLO, { "content-type": type, "content-encoding": "gzip" }, bomb));
    });
    for (const a of answers) {
      expect(a.status).toBe(429);
      expect(JSON.parse(a.body)).toMatchObject({ code: "resource_exhausted" });
    }
    expect(peak - before, `RSS ${before} → ${peak}`).toBeLessThan(BOUND);
    expect((await get(s.httpPort, "/", 5000)).status).toBe("200");
  });

  it("gRPC-Web (grpc-encoding gzip, the message flagged compressed): grpc-status 8 in its trailers", async () => {
    const s = await serve();
    const answers: { status: number; body: string }[] = [];
    const { before, peak } = await growth(
      s,
      async () =>
        void answers.push(
          await httpPost(
            s.httpPort,
            HELLO,
            { "content-type": "application/grpc-web+proto", "grpc-encoding": "gzip" },
            frame(1, bomb),
          ),
        ),
    );
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body).toMatch(/grpc-status: ?8\r\n/);
    }
    expect(peak - before, `RSS ${before} → ${peak}`).toBeLessThan(BOUND);
  });

  it("the HTTP resources (Content-Encoding gzip on POST /messages): a 4xx, nothing inflated or stored", async () => {
    const s = await serve();
    const answers: number[] = [];
    const { before, peak } = await growth(
      s,
      async () =>
        void answers.push(
          (
            await httpPost(
              s.httpPort,
              "/messages",
              { "content-type": "application/json", "content-encoding": "gzip" },
              bomb,
            )
          ).status,
        ),
    );
    for (const status of answers) expect(status >= 400 && status < 500, String(status)).toBe(true);
    expect(peak - before, `RSS ${before} → ${peak}`).toBeLessThan(BOUND);
    const listing = await get(s.httpPort, "/messages", 5000);
    expect(JSON.parse(listing.body)).toMatchObject({ messages: [] });
  });
});

/** Sends raw bytes on a new connection and collects everything until the server closes it (or 5 s pass). */
function raw(port: number, bytes: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, 5000);
    socket.setEncoding("latin1");
    socket.on("data", (c: string) => (text += c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.write(bytes);
  });
}

describe("request smuggling: a request that could be framed two ways is refused, once, and its connection closed", () => {
  const smuggled = "GET /messages HTTP/1.1\r\nHost: x\r\n\r\n";
  const body = '{"body":"x"}';
  const cases: [string, string][] = [
    [
      "Content-Length and Transfer-Encoding: chunked together (CL.TE / TE.CL)",
      `POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ` +
        `${body.length + 5 + smuggled.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
    ],
    [
      "two Content-Length headers that differ",
      `POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ` +
        `${body.length}\r\nContent-Length: 0\r\n\r\n${body}${smuggled}`,
    ],
    [
      "an obfuscated Transfer-Encoding (chunked, then identity)",
      `POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: ` +
        `chunked\r\nTransfer-Encoding: identity\r\nContent-Length: ${body.length}\r\n\r\n${body}${smuggled}`,
    ],
    [
      "a Transfer-Encoding with a space before its colon",
      `POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding : ` +
        `chunked\r\nContent-Length: ${body.length}\r\n\r\n${body}${smuggled}`,
    ],
  ];
  for (const [name, request] of cases) {
    it(name, async () => {
      const s = await serve();
      const answer = await raw(s.httpPort, request);
      expect(answer.closed, answer.text).toBe(true);
      const statusLines = answer.text.match(/^HTTP\/1\.1 \d{3}/gm) ?? [];
      // One answer, a refusal: the request hidden in the body never got one of its own.
      expect(statusLines, answer.text).toEqual(["HTTP/1.1 400"]);
      // And nothing was stored by the ambiguous POST.
      expect(JSON.parse((await get(s.httpPort, "/messages", 5000)).body)).toMatchObject({ messages: [] });
      expect((await post(s.httpPort, body)).status).toBe(201);
    });
  }
});
