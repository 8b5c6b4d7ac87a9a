// The raw HTTP/2 client that drives `load --grpc` (harness/wire/raw-h2-client.ts): its framing against servers
// that frame differently (grpc-go, node:http2's nghttp2 with Huffman and its dynamic table, a hand-written server
// that splits, pads and withholds flow-control window), and its bounds against servers that send what no server
// should (a frame over 16 KiB, a header block that decodes past 64 KiB, a push, a PING flood, DATA past the window,
// GOAWAY, RST_STREAM): each call ends, failed with the reason, and none of them is counted as answered.
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../contract/message.js";
import { implementations, type RunningImplementation } from "../../../fixtures/implementations/index.js";
import { missingGo } from "../../../fixtures/implementations/index.js";
import { runLoad } from "../../../harness/load/run-load.js";
import { rawGrpcCaller } from "../../../harness/load/_internals/raw-grpc-caller.js";
import { parseAddress } from "../../../harness/targets/address.js";
import { encodeFrames } from "../../../harness/protocols/grpc/index.js";
import { within } from "../../helpers/within.js";

const framed = (body: string): Buffer => Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage(body) }]));
const REQUEST = framed("raw");
const REPLY = framed("hello raw");

interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
  /** Which accepted connection it came on, from 0. */
  connection: number;
}

function frame(type: number, flags: number, stream: number, payload: Buffer | number[] = []): Buffer {
  const p = Buffer.from(payload);
  const h = Buffer.alloc(9);
  h.writeUIntBE(p.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream, 5);
  return Buffer.concat([h, p]);
}

/** A header field as a literal without indexing, a new name, no Huffman (names and values under 127 bytes). */
const literal = (name: string, value: string): Buffer =>
  Buffer.concat([Buffer.from([0, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
const RESPONSE_HEADERS = Buffer.concat([Buffer.from([0x88]), literal("content-type", "application/grpc")]);
const OK_TRAILERS = literal("grpc-status", "0");

/**
 * A hand-written HTTP/2 server: it reads the client's preface and frames, sends its own SETTINGS (the given ones),
 * acknowledges the client's, and hands every other frame to `onFrame` with a way to write bytes back.
 */
async function framer(onFrame: (f: Frame, write: (b: Buffer) => void) => void, settings: Buffer = Buffer.alloc(0)) {
  const seen: Frame[] = [];
  let connections = 0;
  const server = net.createServer((socket) => {
    const connection = connections++;
    let buf = Buffer.alloc(0);
    let prefaced = false;
    socket.on("error", () => undefined);
    socket.write(frame(4, 0, 0, settings));
    socket.on("data", (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (!prefaced) {
        if (buf.length < 24) return;
        buf = buf.subarray(24);
        prefaced = true;
      }
      while (buf.length >= 9 && buf.length >= 9 + buf.readUIntBE(0, 3)) {
        const f = {
          type: buf[3] as number,
          flags: buf[4] as number,
          stream: buf.readUInt32BE(5),
          payload: buf.subarray(9, 9 + buf.readUIntBE(0, 3)),
          connection,
        };
        buf = buf.subarray(9 + f.payload.length);
        seen.push(f);
        if (f.type === 4 && (f.flags & 1) === 0) socket.write(frame(4, 1, 0));
        else if (!socket.destroyed) onFrame(f, (b) => socket.write(b));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Answers each request's last frame (END_STREAM) with headers, the reply and OK trailers, as `answer` writes them. */
const onRequest =
  (answer: (stream: number, write: (b: Buffer) => void) => void) => (f: Frame, write: (b: Buffer) => void) => {
    if ((f.type === 0 || f.type === 1) && (f.flags & 1) === 1) answer(f.stream, write);
  };

async function callsOn(address: string, n: number, options: { concurrency?: number; timeoutMs?: number } = {}) {
  const concurrency = options.concurrency ?? 1;
  const caller = rawGrpcCaller(parseAddress(address), 1, concurrency, options.timeoutMs ?? 2000);
  const sweep = setInterval(() => caller.sweep(performance.now()), 20);
  try {
    const results = [];
    for (let k = 0; k < n; k += concurrency)
      results.push(
        ...(await Promise.all(Array.from({ length: Math.min(concurrency, n - k) }, (_, w) => caller.call(w, REQUEST)))),
      );
    return results;
  } finally {
    clearInterval(sweep);
    caller.close();
  }
}

describe("the raw HTTP/2 client's framing", () => {
  it(
    "decodes node:http2's Huffman-coded, dynamically indexed trailers, and queues calls past " +
      "SETTINGS_MAX_CONCURRENT_STREAMS 1",
    async () => {
      const server = http2.createServer({ settings: { maxConcurrentStreams: 1 } });
      let open = 0;
      let most = 0;
      server.on("stream", (stream) => {
        most = Math.max(most, ++open);
        stream.resume();
        stream.on("end", () => {
          stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
          stream.on("wantTrailers", () =>
            stream.sendTrailers({ "grpc-status": "3", "grpc-message": "bad %E2%9C%93 request" }),
          );
          stream.end(REPLY, () => open--);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const results = await callsOn(`127.0.0.1:${(server.address() as net.AddressInfo).port}`, 12, {
          concurrency: 4,
        });
        expect(results).toHaveLength(12);
        for (const r of results) expect(r).toMatchObject({ code: 3, details: "bad ✓ request", answered: true });
        expect(results[0]?.reply).toEqual(REPLY.subarray(5));
        expect(most).toBe(1);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );

  it("speaks over a Unix socket (unix:///path), with localhost as the authority", async () => {
    const dir = mkdtempSync(join(tmpdir(), "raw-h2-"));
    const path = join(dir, "s.sock");
    const server = http2.createServer();
    let authority: string | undefined;
    server.on("stream", (stream, headers) => {
      authority = headers[":authority"];
      stream.resume();
      stream.on("end", () => {
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(REPLY);
      });
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      const [r] = await callsOn(`unix://${path}`, 1);
      expect(r).toMatchObject({ code: 0, answered: true });
      expect(authority).toBe("localhost");
    } finally {
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads a header block split over CONTINUATION, padded HEADERS with priority, and padded DATA", async () => {
    const server = await framer(
      onRequest((id, write) => {
        const half = RESPONSE_HEADERS.length >> 1;
        // HEADERS without END_HEADERS, PADDED (3 bytes) and PRIORITY (5 bytes), then the rest in a CONTINUATION.
        write(
          frame(
            1,
            0x8 | 0x20,
            id,
            Buffer.concat([Buffer.from([3, 0, 0, 0, 0, 16]), RESPONSE_HEADERS.subarray(0, half), Buffer.alloc(3)]),
          ),
        );
        write(frame(9, 0x4, id, RESPONSE_HEADERS.subarray(half)));
        write(frame(0, 0x8, id, Buffer.concat([Buffer.from([2]), REPLY, Buffer.alloc(2)])));
        write(frame(1, 0x4 | 0x1, id, OK_TRAILERS));
      }),
    );
    try {
      const [r] = await callsOn(server.address, 1);
      expect(r).toMatchObject({ code: 0, answered: true });
      expect(r?.reply).toEqual(REPLY.subarray(5));
    } finally {
      await server.close();
    }
  });

  it("holds the body until the server's flow-control window has room for it (SETTINGS_INITIAL_WINDOW_SIZE 0)", async () => {
    let violated = false;
    const windowed = new Set<number>();
    const settings = Buffer.from([0, 4, 0, 0, 0, 0]);
    const server = await framer((f, write) => {
      if (f.type === 1) {
        windowed.add(f.stream);
        // The window opens a moment after the headers: DATA before it would break flow control.
        setTimeout(() => write(frame(8, 0, f.stream, [0, 0, 1, 0])), 30);
        setTimeout(() => windowed.delete(f.stream), 29);
      }
      if (f.type === 0) {
        // The first request may go out before the server's SETTINGS arrive, under the default window (RFC 9113 6.9.2).
        if (f.stream > 1 && windowed.has(f.stream)) violated = true;
        write(
          Buffer.concat([
            frame(1, 4, f.stream, RESPONSE_HEADERS),
            frame(0, 0, f.stream, REPLY),
            frame(1, 5, f.stream, OK_TRAILERS),
          ]),
        );
      }
    }, settings);
    try {
      const results = await callsOn(server.address, 3);
      for (const r of results) expect(r).toMatchObject({ code: 0, answered: true });
      expect(violated).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe("the raw HTTP/2 client against a hostile server", () => {
  const hostile: [string, (id: number, write: (b: Buffer) => void) => void, RegExp][] = [
    ["a frame over 16 KiB", (id, write) => write(frame(0, 0, id, Buffer.alloc(16_385))), /a frame of 16385 bytes/],
    [
      "a header block that decodes past 64 KiB",
      // One 4000-byte value added to the dynamic table, then named 20 times by a one-byte index (62).
      (id, write) =>
        write(
          frame(
            1,
            4,
            id,
            Buffer.concat([
              Buffer.from([0x40, 1, 0x78, 0x7f, 0xa1, 0x1e]),
              Buffer.alloc(4000, 0x61),
              Buffer.alloc(20, 0xbe),
            ]),
          ),
        ),
      /decodes to more than 65536 bytes/,
    ],
    [
      "a header block that never ends",
      (id, write) => {
        for (let i = 0; i < 6; i++) write(frame(i === 0 ? 1 : 9, 0, id, Buffer.alloc(16_000, 0x88)));
      },
      /a header block over 65536 bytes/,
    ],
    ["a PUSH_PROMISE", (id, write) => write(frame(5, 4, id, [0, 0, 0, 2, 0x88])), /PUSH_PROMISE/],
    [
      "a PING flood",
      (_id, write) => write(Buffer.concat(Array.from({ length: 2000 }, () => frame(6, 0, 0, Buffer.alloc(8))))),
      /over 1000 PING or SETTINGS frames/,
    ],
    [
      "DATA past the stream's window",
      (id, write) => {
        write(frame(1, 4, id, RESPONSE_HEADERS));
        for (let i = 0; i < 260; i++) write(frame(0, 0, id, Buffer.alloc(16_384)));
      },
      /past the stream's window/,
    ],
    ["an RST_STREAM", (id, write) => write(frame(3, 0, id, [0, 0, 0, 2])), /HTTP\/2 code 2/],
    [
      "a GOAWAY that processed nothing",
      (_id, write) => write(frame(7, 0, 0, [0, 0, 0, 0, 0, 0, 0, 0])),
      /not processed: GOAWAY/,
    ],
    ["a HEADERS frame on stream 0", (_id, write) => write(frame(1, 4, 0, [0x88])), /HEADERS on stream 0/],
  ];
  for (const [what, send, reason] of hostile) {
    it(`fails the call, unanswered, on ${what}`, async () => {
      const server = await framer(onRequest(send));
      try {
        const [r] = await within(what, 5000, callsOn(server.address, 1));
        expect(r).toMatchObject({ code: 14, answered: false });
        expect(r?.details).toMatch(reason);
      } finally {
        await server.close();
      }
    });
  }

  it(
    "starts no call on a connection the server has sent GOAWAY on: a call it did not process goes on a new one, a " +
      "few times at most",
    async () => {
      const server = await framer(onRequest((_id, write) => write(frame(7, 0, 0, [0, 0, 0, 0, 0, 0, 0, 0]))));
      try {
        const results = await within("two calls", 5000, callsOn(server.address, 2));
        expect(results[1]).toMatchObject({
          code: 14,
          answered: false,
          details: expect.stringMatching(/not processed: GOAWAY|^GOAWAY from the server/),
        });
        const headers = server.seen.filter((f) => f.type === 1);
        // One call on each connection, never two: the GOAWAY ended each after its first.
        expect(new Set(headers.map((f) => f.connection)).size).toBe(headers.length);
        // Each call sent at most 4 times (once, and 3 times again), then failed with the reason.
        expect(headers.length).toBeLessThanOrEqual(8);
        expect(headers.length).toBeGreaterThan(2);
      } finally {
        await server.close();
      }
    },
  );

  it("cancels a call past its deadline with RST_STREAM CANCEL, counted as DEADLINE_EXCEEDED", async () => {
    const server = await framer(() => undefined);
    try {
      const [r] = await within("a call", 5000, callsOn(server.address, 1, { timeoutMs: 100 }));
      expect(r).toMatchObject({ code: 4, answered: false });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(server.seen.find((f) => f.type === 3)?.payload.readUInt32BE(0)).toBe(8);
    } finally {
      await server.close();
    }
  });
});

describe("load --grpc through the raw client against grpc-go", () => {
  let go: RunningImplementation | undefined;
  let skip: string | undefined;
  beforeAll(async () => {
    skip = await missingGo();
    if (skip !== undefined) {
      if (process.env.CI === "true") throw new Error(`grpc-go: ${skip}`);
      return;
    }
    go = await within(
      "starting grpc-go",
      240_000,
      (implementations.find((i) => i.name === "go") as { start(): Promise<RunningImplementation> }).start(),
    );
  }, 250_000);
  afterAll(async () => go?.close());

  it("compares every reply under load with the one at rest, none differing, no error", async (t) => {
    if (go === undefined) return t.skip(`grpc-go: ${skip}`);
    const report = await runLoad({ address: go.address, durationMs: 300, concurrency: 16, connections: 2 });
    expect(report.errors).toEqual({});
    expect(report.requests).toBeGreaterThan(16);
    expect(report.stateless).toMatchObject({ compared: report.requests, mismatches: 0 });
  });
});
