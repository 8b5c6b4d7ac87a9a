// HTTP/1.1 replies that clients never read, on the reference server in this process: issue 38's attack, 256
// connections from two addresses in `npm run soak` (64 in `npm test`: see ATTACKER_COUNTS) that each GET a message
// whose XML representation is 5 MiB (the message, its reply or the page that holds it) and read none of it. The
// server holds a bounded piece of each reply, not the reply, closes each connection once its reply has stalled, and a
// client from a third address is served throughout; once the attackers are gone, every address is served again
// within 5 s, and the whole reply comes byte for byte. And the other side of the stall bound, now that a reply is
// watched from its request's start: a client that reads slowly, or a store that answers slowly, is not taken for a
// stalled reply.
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
const SOAK = process.env.SOAK === "1";
/**
 * Connections that never read, half from each attacking address: one reply of each held whole would be 256 x 5 MiB,
 * 1.25 GiB. What they cost is CPU and the kernel's memory, not the process's: the kernel takes megabytes of each reply
 * into the sockets' buffers before the client's window stops it (up to 7 MiB for one unread loopback connection here,
 * /proc/net/sockstat), so the server encodes most of every 5 MiB reply, about 30 ms of CPU each: 256 took 8-13
 * CPU-seconds in this process (server and clients) and 13-50 s on the loaded 2-core machine. `npm test` runs the same
 * attack with 64, about four CPU-seconds; `npm run soak` (SOAK=1) the acceptance's 256. Not run: the issue's 512
 * (measured once: the process held every bound, RSS 346 MiB at most, and served every address 26 ms after the
 * attackers left, but 3 of 60 bystanders got no answer within 15 s during it: 512 x 7 MiB of socket buffers passes
 * the kernel's TCP memory limit, net.ipv4.tcp_mem, 2.2 GiB on this 24 GiB machine, past which the kernel drops
 * packets on every connection; Node cannot shrink a socket's send buffer).
 */
const ATTACKER_COUNTS = SOAK ? [256] : [64];
const ATTACKING_FROM = ["127.0.0.1", "127.0.0.2"] as const;
/** Bystanders come from an address no attacker uses. */
const BYSTANDER = "127.0.0.3";
/** The server's memory watermark (its default), and what RSS counts besides heap and external memory. */
const WATERMARK = 768 * 1024 * 1024;
const RSS_MARGIN = 128 * 1024 * 1024;
/** The product's promise once an attack ends, and what a loaded machine (2 cores, load 10) may add to it. */
const SERVED_AGAIN_MS = 5000;
const ALLOWANCE_MS = 3000;
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
const growthBound = (attackers: number) => attackers * PER_CONNECTION + SLACK;
/** How long the server may take to close every attacker's connection on a loaded machine: a bound, not a speed. */
const closeBoundMs = (attackers: number) => 30_000 + 200 * attackers;
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

/** A connection from `from` that asks for `path` in XML and never reads a byte of the answer. */
function unreadGet(port: number, path: string, from: string): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress: from });
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
  maxRss: number;
  maxRssGrowth: number;
  maxCountedGrowth: number;
  bystanders: string[];
}

/**
 * Samples memory every 50 ms against `before` and runs bystanders (GET / from BYSTANDER) one after another until
 * `done` says stop; past the bound the attackers are destroyed at once, so a server that holds whole replies
 * fails the test before it takes the machine's memory.
 */
async function watch(
  port: number,
  before: { rss: number; counted: number },
  bound: number,
  done: () => boolean,
): Promise<Watched> {
  const seen: Watched = { maxRss: before.rss, maxRssGrowth: 0, maxCountedGrowth: 0, bystanders: [] };
  const sampler = setInterval(() => {
    const now = memory();
    seen.maxRss = Math.max(seen.maxRss, now.rss);
    seen.maxRssGrowth = Math.max(seen.maxRssGrowth, now.rss - before.rss);
    seen.maxCountedGrowth = Math.max(seen.maxCountedGrowth, now.counted - before.counted);
    if (seen.maxRssGrowth > bound) for (const socket of attackers) socket.destroy();
  }, 50);
  try {
    while (!done()) {
      seen.bystanders.push((await get(port, "/", BYSTANDER_MS, BYSTANDER)).status);
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
function readSlowly(
  port: number,
  path: string,
  burst: number,
  pauseMs: number,
): Promise<{ bytes: number; expected: number; closedEarly: boolean }> {
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
  it("that takes 128 KiB of a 1.25 MiB XML reply, then pauses 400 ms, again and again, is not taken for a stalled " +
    "one: it gets the whole reply", async () => {
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
  it(
    "that answers after three times the stall bound is not taken for a stalled reply: nothing is owed while it " +
      "works, and the reply comes",
    async () => {
      const store = createMemoryStore();
      const message = await store.create("slow");
      const slow = { ...store, get: async (id: string) => (await sleep(1500), store.get(id)) };
      const http = await startHttpServer({
        port: 0,
        log: "silent",
        store: slow,
        ledger: createOwedLedger({ stallMs: 500 }),
      });
      server = http;
      const got = await get(http.port, `/messages/${message.id}`, BYSTANDER_MS, "127.0.0.1");
      expect(got.status).toBe("200");
      expect((JSON.parse(got.body) as { body: string }).body).toBe("slow");
    },
  );
});

/**
 * Asks every address (both attackers' and the bystanders') for `GET /` every 100 ms until all are answered 200, at
 * most SERVED_AGAIN_MS and the allowance: how long that took, and the last answers.
 */
async function servedAgain(port: number): Promise<{ ms: number; last: string[] }> {
  const gone = performance.now();
  let last: string[] = [];
  while (performance.now() - gone < SERVED_AGAIN_MS + ALLOWANCE_MS) {
    last = await Promise.all(
      [...ATTACKING_FROM, BYSTANDER].map(async (from) => (await get(port, "/", SERVED_AGAIN_MS, from)).status),
    );
    if (last.every((status) => status === "200")) break;
    await sleep(100);
  }
  return { ms: Math.round(performance.now() - gone), last };
}

describe("replies left unread", () => {
  it.each(ATTACKER_COUNTS)(
    `%i connections from two addresses that each GET a 5 MiB XML reply (a message, its reply, a page) and never ` +
      `read: RSS stays under the watermark and a margin, the process grows by less than that many x ` +
      `${PER_CONNECTION / 1024} KiB + ${SLACK / MiB} MiB, every stalled connection is closed, a client from a ` +
      `third address is served during, and every address within 5 s after, the whole reply exactly`,
    async (count) => {
      const bound = growthBound(count);
      const cpuBefore = process.cpuUsage();
      server = await startReferenceServer({
        grpcPort: 0,
        httpPort: 0,
        host: "127.0.0.1",
        owed: { stallMs: STALL_MS },
        protection: { memoryWatermarkBytes: WATERMARK },
      });
      const port = portOf(server.httpUrl);
      const created = await post(port, JSON.stringify({ body: BODY }));
      expect(created.status, created.body.slice(0, 200)).toBe(201);
      const id = (JSON.parse(created.body) as { id: string }).id;
      const path = `/messages/${id}`;
      // Read once whole before measuring, so that what a first reply compiles or caches is in the baseline.
      const expected = await get(port, path, BYSTANDER_MS, BYSTANDER, { accept: "application/xml" });
      expect(expected.status).toBe("200");
      expect(Buffer.byteLength(expected.body)).toBeGreaterThan(5 * MiB - 1024);

      const before = memory();
      const asked = [path, `${path}/reply`, "/messages"];
      await Promise.all(
        Array.from({ length: count }, (_, i) => unreadGet(port, asked[i % asked.length]!, ATTACKING_FROM[i % 2]!)),
      );
      const started = performance.now();
      // Every attacker's connection is closed by the server once its reply stalls, once the kernel has taken what it
      // takes.
      const held = () => ATTACKING_FROM.reduce((n, from) => n + heldConnections(port, from), 0);
      const seen = await watch(
        port,
        before,
        bound,
        () =>
          performance.now() - started > closeBoundMs(count) || (performance.now() - started > STALL_MS && held() === 0),
      );
      const watchedMs = Math.round(performance.now() - started);
      const stillHeld = held();
      // Each attacker was answered, not refused: the start of a 200 waits in its socket, unread until now.
      const answered = (await Promise.all(attackers.map(statusLineOf))).filter(
        (line) => line === "HTTP/1.1 200 OK",
      ).length;
      // The attack ends: the attackers leave, and every address is to be served again within 5 s.
      for (const socket of attackers.splice(0)) socket.destroy();
      const again = await servedAgain(port);
      const after = await get(port, path, BYSTANDER_MS, BYSTANDER, { accept: "application/xml" });
      const cpu = process.cpuUsage(cpuBefore);
      const cpuSeconds = (cpu.user + cpu.system) / 1e6;

      console.log(
        `unread replies (${count} x 5 MiB XML from two addresses): RSS ${mib(before.rss)} before, ` +
          `${mib(seen.maxRss)} at most, grew at most ${mib(seen.maxRssGrowth)}, ` +
          (`heap and external ${mib(seen.maxCountedGrowth)} (bound ${mib(bound)}); ${seen.bystanders.length} ` +
            `bystanders; ${stillHeld} connections held after ${watchedMs} ms; `) +
          `served again ${again.ms} ms after the attackers left; ${cpuSeconds.toFixed(1)} CPU-s in this process`,
      );
      expect(seen.maxRss).toBeLessThan(WATERMARK + RSS_MARGIN);
      expect(seen.maxRssGrowth).toBeLessThan(bound);
      expect(seen.maxCountedGrowth).toBeLessThan(bound);
      expect(answered).toBe(count);
      expect(stillHeld).toBe(0);
      expect(seen.bystanders.length).toBeGreaterThan(0);
      expect(seen.bystanders.filter((status) => status !== "200")).toEqual([]);
      expect(again.last, `answers ${again.ms} ms after the attackers left`).toEqual(["200", "200", "200"]);
      expect(after.status).toBe("200");
      expect(after.headers["content-length"]).toBe(String(Buffer.byteLength(expected.body)));
      expect(after.body === expected.body).toBe(true);
      // Recorded once the test has held every bound: a failed run's figures do not reach the page.
      recordReliability(`unread-replies-${count}`, "test/reference-server/unread-replies.test.ts", {
        connections: count,
        addresses: ATTACKING_FROM.length,
        rssBeforeMiB: Math.round(before.rss / MiB),
        rssMaxMiB: Math.round(seen.maxRss / MiB),
        rssGrowthMiB: Math.round(seen.maxRssGrowth / MiB),
        countedGrowthMiB: Math.round(seen.maxCountedGrowth / MiB),
        boundMiB: Math.round(bound / MiB),
        answered,
        stillHeld,
        watchedMs,
        bystandersServed: seen.bystanders.filter((status) => status === "200").length,
        servedAgainMs: again.ms,
        cpuSeconds: Math.round(cpuSeconds * 10) / 10,
      });
    },
    300_000,
  );
});
