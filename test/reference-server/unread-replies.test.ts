// HTTP/1.1 replies that clients never read, on the reference server in this process: many connections each GET a
// message whose XML representation is 5 MiB (the message, its reply or the page that holds it) and read none of
// it. The server holds a bounded piece of each reply, not the reply, closes each connection once its reply has
// stalled, and a client from another address is served throughout and gets the whole reply, byte for byte,
// afterwards. And the other side of the stall bound, now that a reply is watched from its request's start: a client
// that reads slowly, or a store that answers slowly, is not taken for a stalled reply.
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startReferenceServer, type ReferenceServer } from "../../reference-server/start.js";
import { startHttpServer, type HttpServerHandle } from "../../reference-server/http/server.js";
import { createMemoryStore } from "../../reference-server/http/store.js";
import { createOwedLedger } from "../../reference-server/owed.js";
import { MAX_PIECE_BYTES } from "../../reference-server/http/representation.js";
import { get, heldConnections, mib, post, sleep } from "../helpers/serve-process.js";
import { recordReliability } from "../helpers/reliability-results.js";

const MiB = 1024 * 1024;
/** Connections that never read, all from 127.0.0.1: one reply of each held whole would be 64 x 5 MiB, 320 MiB. */
const ATTACKERS = 64;
/** A reply that makes no progress for this long has its connection closed (owed.ts). */
const STALL_MS = 1500;
/** 1 MiB of `&`, less the JSON around it: five times that in XML. */
const BODY = "&".repeat(MiB - 64);
/**
 * What one unread connection may hold in the server: the reply stream's next piece and the socket's queue (under its
 * 16 KiB high-water mark and one piece), so under three pieces; four, and 128 KiB for the connection's own objects
 * (socket, parser, request, reply: a few KiB), leave room. Its client, in this process, never reads: what reached it
 * waits in the kernel.
 */
const PER_CONNECTION = 4 * MAX_PIECE_BYTES + 128 * 1024;
/** What the process may grow by besides the connections: garbage not yet collected, code compiled on first use. */
const SLACK = 64 * MiB;
const GROWTH_BOUND = ATTACKERS * PER_CONNECTION + SLACK;
/** How long a bystander may wait for its answer on a loaded machine: a bound on refusal, not on speed. */
const BYSTANDER_MS = 15_000;

let server: ReferenceServer | HttpServerHandle | undefined;
const attackers: net.Socket[] = [];
afterEach(async () => {
  for (const socket of attackers.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
});

const portOf = (url: string) => Number(new URL(url).port);

/** Memory the process holds now: the resident set, and what the watermark counts (heap and external). */
function memory(): { rss: number; counted: number } {
  const m = process.memoryUsage();
  return { rss: m.rss, counted: m.heapUsed + m.external };
}

/** A connection from 127.0.0.1 that asks for `path` in XML and never reads a byte of the answer. */
function unreadGet(port: number, path: string): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    attackers.push(socket);
    socket.on("error", () => undefined);
    socket.pause();
    socket.once("connect", () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: application/xml\r\n\r\n`);
      resolve(socket);
    });
  });
}

/** The first 15 bytes waiting in a socket that has not read until now (a status line), or why there are none. */
function statusLineOf(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve("nothing within 5 s"), 5000);
    socket.once("close", () => resolve("closed"));
    socket.once("readable", () => {
      clearTimeout(timer);
      resolve(String(socket.read(15) ?? "too short"));
    });
  });
}

interface Watched {
  maxRssGrowth: number;
  maxCountedGrowth: number;
  bystanders: string[];
}

/**
 * Samples memory every 50 ms against `before` and runs bystanders (GET / from 127.0.0.2) one after another until
 * `done` says stop; past the bound the attackers are destroyed at once, so a server that holds whole replies
 * fails the test before it takes the machine's memory.
 */
async function watch(port: number, before: { rss: number; counted: number }, done: () => boolean): Promise<Watched> {
  const seen: Watched = { maxRssGrowth: 0, maxCountedGrowth: 0, bystanders: [] };
  const sampler = setInterval(() => {
    const now = memory();
    seen.maxRssGrowth = Math.max(seen.maxRssGrowth, now.rss - before.rss);
    seen.maxCountedGrowth = Math.max(seen.maxCountedGrowth, now.counted - before.counted);
    if (seen.maxRssGrowth > GROWTH_BOUND) for (const socket of attackers) socket.destroy();
  }, 50);
  try {
    while (!done()) {
      seen.bystanders.push((await get(port, "/", BYSTANDER_MS, "127.0.0.2")).status);
      await sleep(100);
    }
  } finally {
    clearInterval(sampler);
  }
  return seen;
}

/**
 * GETs `path` in XML on a new connection and reads `burst` bytes at a time with a pause of `pauseMs` after each: the
 * bytes that came (headers and body), and whether the connection closed before the reply was whole.
 */
function readSlowly(port: number, path: string, burst: number, pauseMs: number): Promise<{ bytes: number; expected: number; closedEarly: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    attackers.push(socket);
    let received = Buffer.alloc(0);
    let sincePause = 0;
    let expected = Infinity;
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(received.subarray(0, Math.max(0, end)).toString("latin1"))?.[1];
      if (end !== -1 && length !== undefined) expected = end + 4 + Number(length);
      if (received.length >= expected) return resolve({ bytes: received.length, expected, closedEarly: false });
      sincePause += chunk.length;
      if (sincePause < burst) return;
      sincePause = 0;
      socket.pause();
      setTimeout(() => socket.resume(), pauseMs);
    });
    socket.once("close", () => resolve({ bytes: received.length, expected, closedEarly: received.length < expected }));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: application/xml\r\n\r\n`);
  });
}

describe("a slow reader", () => {
  it("that takes 128 KiB of a 1.25 MiB XML reply, then pauses 400 ms, again and again, is not taken for a stalled one: it gets the whole reply", async () => {
    // The stall bound well above the pauses, so that only a reader's progress missed by the server could close it.
    server = await startReferenceServer({ grpcPort: 0, httpPort: 0, host: "127.0.0.1", owed: { stallMs: 4000 } });
    const port = portOf(server.httpUrl);
    const created = await post(port, JSON.stringify({ body: "&".repeat(256 * 1024) }));
    expect(created.status).toBe(201);
    const id = (JSON.parse(created.body) as { id: string }).id;
    const got = await readSlowly(port, `/messages/${id}`, 128 * 1024, 400);
    expect(got.closedEarly).toBe(false);
    expect(got.expected).toBeGreaterThan(5 * 256 * 1024);
    expect(got.bytes).toBe(got.expected);
  }, 60_000);
});

describe("a slow store", () => {
  it("that answers after three times the stall bound is not taken for a stalled reply: nothing is owed while it works, and the reply comes", async () => {
    const store = createMemoryStore();
    const message = await store.create("slow");
    const slow = { ...store, get: async (id: string) => (await sleep(1500), store.get(id)) };
    const http = await startHttpServer({ port: 0, log: "silent", store: slow, ledger: createOwedLedger({ stallMs: 500 }) });
    server = http;
    const got = await get(http.port, `/messages/${message.id}`, BYSTANDER_MS, "127.0.0.1");
    expect(got.status).toBe("200");
    expect((JSON.parse(got.body) as { body: string }).body).toBe("slow");
  });
});

describe("replies left unread", () => {
  it(`${ATTACKERS} connections that each GET a 5 MiB XML reply (a message, its reply, a page) and never read: the process grows by less than ${ATTACKERS} x ${PER_CONNECTION / 1024} KiB + ${SLACK / MiB} MiB, every stalled connection is closed, and a client from 127.0.0.2 is served during and after, the whole reply exactly`, async () => {
    server = await startReferenceServer({ grpcPort: 0, httpPort: 0, host: "127.0.0.1", owed: { stallMs: STALL_MS } });
    const port = portOf(server.httpUrl);
    const created = await post(port, JSON.stringify({ body: BODY }));
    expect(created.status, created.body.slice(0, 200)).toBe(201);
    const id = (JSON.parse(created.body) as { id: string }).id;
    const path = `/messages/${id}`;
    // Read once whole before measuring, so that what a first reply compiles or caches is in the baseline.
    const expected = await get(port, path, BYSTANDER_MS, "127.0.0.2", { accept: "application/xml" });
    expect(expected.status).toBe("200");
    expect(Buffer.byteLength(expected.body)).toBeGreaterThan(5 * MiB - 1024);

    const before = memory();
    const asked = [path, `${path}/reply`, "/messages"];
    await Promise.all(Array.from({ length: ATTACKERS }, (_, i) => unreadGet(port, asked[i % asked.length]!)));
    const started = performance.now();
    // Every attacker's connection is closed by the server once its reply stalls; 30 s is a bound on a loaded machine.
    const held = () => heldConnections(port, "127.0.0.1");
    const seen = await watch(port, before, () => performance.now() - started > 30_000 || (performance.now() - started > STALL_MS && held() === 0));
    const watchedMs = Math.round(performance.now() - started);
    const after = await get(port, path, BYSTANDER_MS, "127.0.0.2", { accept: "application/xml" });
    // Each attacker was answered, not refused: the start of a 200 waits in its socket, unread until now.
    const answered = (await Promise.all(attackers.map(statusLineOf))).filter((line) => line === "HTTP/1.1 200 OK").length;

    console.log(
      `unread replies (${ATTACKERS} x 5 MiB XML): RSS grew at most ${mib(seen.maxRssGrowth)}, heap and external ${mib(seen.maxCountedGrowth)} ` +
        `(bound ${mib(GROWTH_BOUND)}); ${seen.bystanders.length} bystanders; ${held()} connections held after ${Math.round(performance.now() - started)} ms`,
    );
    expect(seen.maxRssGrowth).toBeLessThan(GROWTH_BOUND);
    expect(seen.maxCountedGrowth).toBeLessThan(GROWTH_BOUND);
    expect(answered).toBe(ATTACKERS);
    expect(held()).toBe(0);
    expect(seen.bystanders.length).toBeGreaterThan(0);
    expect(seen.bystanders.filter((status) => status !== "200")).toEqual([]);
    expect(after.status).toBe("200");
    expect(after.headers["content-length"]).toBe(String(Buffer.byteLength(expected.body)));
    expect(after.body === expected.body).toBe(true);
    // Recorded once the test has held every bound: a failed run's figures do not reach the page.
    recordReliability("unread-replies", "test/reference-server/unread-replies.test.ts", {
      connections: ATTACKERS,
      rssGrowthMiB: Math.round(seen.maxRssGrowth / MiB),
      countedGrowthMiB: Math.round(seen.maxCountedGrowth / MiB),
      boundMiB: Math.round(GROWTH_BOUND / MiB),
      answered,
      stillHeld: held(),
      watchedMs,
      bystandersServed: seen.bystanders.filter((status) => status === "200").length,
    });
  }, 90_000);
});
