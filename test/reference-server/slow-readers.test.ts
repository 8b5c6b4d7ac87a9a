// The reference server's HTTP port under clients that ask for large replies and never read them: pipelined listings
// on many connections, and the XML listing of bodies made of `&` (five bytes each once escaped). Each attack runs
// against `serve` in its own process, from raw sockets written for the purpose, while bystanders from 127.0.0.2
// call Hello on the gRPC port and GET / on the HTTP port.
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanUp,
  connectHttp,
  get,
  heldConnections,
  hello,
  mib,
  post,
  rssBytes,
  serve,
  sleep,
  type Served,
} from "../helpers/serve-process.js";
import { recordReliability } from "../helpers/reliability-results.js";

afterEach(cleanUp);

const MiB = 1024 * 1024;
/**
 * What the attacks must stay under: the default --memory-watermark-mib of 768, plus a margin for what the watermark
 * does not count (code, stacks, the kernel's view of freed pages).
 */
const WATERMARK = 768 * MiB;
const RSS_MARGIN = 256 * MiB;
/** How long a bystander may wait for its answer while an attack runs: the acceptance's bound. */
const BYSTANDER_MS = 5000;

/** POSTs `count` messages with the body `body(i)`, a few at a time. */
async function fill(port: number, count: number, body: (i: number) => string): Promise<void> {
  for (let i = 0; i < count; i += 4) {
    const batch = Array.from({ length: Math.min(4, count - i) }, (_, j) =>
      post(port, JSON.stringify({ body: body(i + j) })),
    );
    for (const r of await Promise.all(batch)) expect(r.status, r.body.slice(0, 200)).toBe(201);
  }
}

interface Watch {
  /** Stops watching; resolves with what was seen. */
  stop(): Promise<{ maxRss: number; bystanders: Array<{ what: string; status: string; ms: number }> }>;
}

/**
 * Samples the server's RSS every 100 ms, killing it at once past the limit (so a server without its guards fails the
 * test before it takes the machine's memory), and runs bystanders one after another: a Hello and a GET / from
 * 127.0.0.2, each on a new connection and bounded by 5 s.
 */
function watch(s: Served, rssLimit: number): Watch {
  const pid = s.child.pid as number;
  let maxRss = 0;
  const sampler = setInterval(() => {
    let rss: number;
    try {
      rss = rssBytes(pid);
    } catch {
      return; // gone: the test sees it by its exit
    }
    maxRss = Math.max(maxRss, rss);
    if (rss > rssLimit) s.child.kill("SIGKILL");
  }, 100);
  const bystanders: Array<{ what: string; status: string; ms: number }> = [];
  let watching = true;
  const loop = (async () => {
    while (watching && s.child.exitCode === null) {
      const t0 = performance.now();
      const [g, h] = await Promise.all([hello(s.grpcPort, BYSTANDER_MS), get(s.httpPort, "/", BYSTANDER_MS)]);
      bystanders.push(
        { what: "Hello", status: g.status, ms: g.ms },
        { what: "GET /", status: h.status, ms: Math.round(performance.now() - t0) },
      );
      await sleep(100);
    }
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      clearInterval(sampler);
      return { maxRss, bystanders };
    },
  };
}

/** Connections from 127.0.0.1 that each send `request` `depth` times, pipelined in one write, and never read a byte. */
async function unreadPipelines(
  port: number,
  connections: number,
  depth: number,
  request: (i: number) => string,
): Promise<{ stop(): void }> {
  const sockets = await Promise.all(Array.from({ length: connections }, () => connectHttp(port)));
  sockets.forEach((socket, i) => {
    socket.pause();
    socket.write(request(i).repeat(depth));
  });
  return {
    stop() {
      for (const socket of sockets) socket.destroy();
    },
  };
}

const LISTING = "GET /messages?limit=1000 HTTP/1.1\r\nHost: x\r\n\r\n";
const XML_LISTING = "GET /messages?limit=1000 HTTP/1.1\r\nHost: x\r\nAccept: application/xml\r\n\r\n";

/**
 * Once attackers are gone, how long until a data request and a Hello are served again (polled every 100 ms, up to 10
 * s).
 */
async function recovery(s: Served): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < 10_000) {
    const [g, h] = await Promise.all([
      hello(s.grpcPort, BYSTANDER_MS),
      get(s.httpPort, "/messages?limit=1", BYSTANDER_MS),
    ]);
    if (g.status === "0" && h.status === "200") return Math.round(performance.now() - t0);
    await sleep(100);
  }
  return Infinity;
}

const toMiB = (bytes: number) => Math.round(bytes / MiB);
/** The bystanders' rounds and their slowest answers, as figures for the results file. */
function bystanderFigures(bystanders: Array<{ what: string; status: string; ms: number }>): Record<string, number> {
  const worst = (what: string) => Math.max(0, ...bystanders.filter((b) => b.what === what).map((b) => b.ms));
  return { bystanderRounds: bystanders.length / 2, slowestHelloMs: worst("Hello"), slowestGetMs: worst("GET /") };
}

function summary(bystanders: Array<{ what: string; status: string; ms: number }>): string {
  const worst = (what: string) => Math.max(0, ...bystanders.filter((b) => b.what === what).map((b) => b.ms));
  return `${bystanders.length / 2} rounds, slowest Hello ${worst("Hello")} ms, slowest GET / ${worst("GET /")} ms`;
}

describe("slow readers", () => {
  it("30 connections pipelining full listings of 1 MiB messages (JSON and XML) and never reading: RSS stays under " +
    "the watermark plus 256 MiB, bystanders are served within 5 s, the stalled connections are closed, and nobody " +
    "is refused once they go", async () => {
    const s = await serve(["--store-max-bytes", String(96 * MiB), "--unread-timeout", "2s"]);
    // 64 messages of 1 MiB less the JSON around it: one unbounded listing was 64 MiB.
    await fill(s.httpPort, 64, (i) => `${i}`.padEnd(MiB - 64, "m"));
    const before = rssBytes(s.child.pid as number);
    const watching = watch(s, WATERMARK + RSS_MARGIN);
    // 100 listings each, within the 128 a connection may have waiting: only the stall bound ends these.
    const attack = await unreadPipelines(s.httpPort, 30, 100, (i) => (i % 2 === 0 ? LISTING : XML_LISTING));
    // The stall bound is 2 s; each connection first fills its kernel buffers, then stalls: all closed well within 12 s.
    const started = performance.now();
    await sleep(500);
    const held = heldConnections(s.httpPort);
    while (performance.now() - started < 12_000 && heldConnections(s.httpPort) > 0) await sleep(100);
    const allClosedMs = Math.round(performance.now() - started);
    const closed = 30 - heldConnections(s.httpPort);
    attack.stop();
    const seen = await watching.stop();
    const back = await recovery(s);
    console.log(
      `slow readers (30 connections, 64 x 1 MiB messages): RSS ${mib(before)} before, at most ` +
        `${mib(seen.maxRss)}; ${summary(seen.bystanders)}; ` +
        (`${held} attackers' connections held at 0.5 s, ${closed} of 30 closed by the server within ` +
          `${allClosedMs} ms; served again ${back} ms after the attack stopped`),
    );
    expect(s.child.exitCode, s.stderr()).toBe(null);
    expect(seen.maxRss).toBeLessThan(WATERMARK + RSS_MARGIN);
    expect(seen.bystanders.length).toBeGreaterThan(0);
    expect(seen.bystanders.filter((b) => b.status !== "0" && b.status !== "200")).toEqual([]);
    expect(held).toBe(30);
    expect(closed).toBe(30);
    expect(back).toBeLessThan(5000);
    // Recorded once the test has held every bound: a failed run's figures do not reach the page.
    recordReliability("slow-readers", "test/reference-server/slow-readers.test.ts", {
      connections: 30,
      rssBeforeMiB: toMiB(before),
      rssMaxMiB: toMiB(seen.maxRss),
      closed,
      closedMs: allClosedMs,
      servedAgainMs: back,
      ...bystanderFigures(seen.bystanders),
    });
  }, 90_000);
});

describe("deep pipelines", () => {
  // Node parses a whole chunk of pipelined requests (64 KiB: about 2,000 of these) before anything can stop it, some
  // 60 ms of the event loop each; 10 connections keep that well inside the bystanders' bound on a loaded machine.
  it("10 connections pipelining 3,000 requests each, never reading: each is closed as soon as more than 128 wait, " +
    "and bystanders are served", async () => {
    const s = await serve();
    await fill(s.httpPort, 10, (i) => `message ${i}`);
    const pid = s.child.pid as number;
    const before = rssBytes(pid);
    const watching = watch(s, WATERMARK + RSS_MARGIN);
    const attack = await unreadPipelines(s.httpPort, 10, 3000, (i) =>
      i % 2 === 0 ? LISTING : "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    );
    const started = performance.now();
    while (performance.now() - started < 5000 && heldConnections(s.httpPort) > 0) await sleep(50);
    const closedMs = Math.round(performance.now() - started);
    const held = heldConnections(s.httpPort);
    const seen = await watching.stop();
    attack.stop();
    console.log(
      `deep pipelines (10 x 3,000 requests): RSS ${mib(before)} before, at most ${mib(seen.maxRss)}; all closed ` +
        `within ${closedMs} ms; ${summary(seen.bystanders)}`,
    );
    expect(s.child.exitCode, s.stderr()).toBe(null);
    expect(held).toBe(0);
    // What parsing a 64 KiB chunk of requests leaves for the collector; the requests themselves are not kept.
    expect(seen.maxRss - before).toBeLessThan(128 * MiB);
    expect(seen.bystanders.filter((b) => b.status !== "0" && b.status !== "200")).toEqual([]);
    // Recorded once the test has held every bound: a failed run's figures do not reach the page.
    recordReliability("deep-pipelines", "test/reference-server/slow-readers.test.ts", {
      connections: 10,
      requestsEach: 3000,
      rssBeforeMiB: toMiB(before),
      rssMaxMiB: toMiB(seen.maxRss),
      stillHeld: held,
      closedMs,
      ...bystanderFigures(seen.bystanders),
    });
  }, 60_000);
});

describe("XML amplification", () => {
  it("one XML listing of bodies made of `&` (500 MB unbounded) answers one bounded page, bystanders are served " +
    "within 5 s, and twenty more in a row do not keep anyone out", async () => {
    const s = await serve(["--store-max-bytes", String(128 * MiB)]);
    // 100 bodies of 1 MiB of `&` less the JSON around it: 5 MiB each in XML, 500 MB for one page of 100.
    await fill(s.httpPort, 100, () => "&".repeat(MiB - 64));
    const before = rssBytes(s.child.pid as number);
    const watching = watch(s, WATERMARK + RSS_MARGIN);
    const first = await get(s.httpPort, "/messages", 30_000, "127.0.0.1", { accept: "application/xml" });
    const sizes = [Buffer.byteLength(first.body)];
    for (let i = 0; i < 20; i++) {
      const again = await get(s.httpPort, "/messages", 30_000, "127.0.0.1", { accept: "application/xml" });
      expect(again.status).toBe("200");
      sizes.push(Buffer.byteLength(again.body));
    }
    const seen = await watching.stop();
    const back = await recovery(s);
    console.log(
      `XML amplification (100 x 1 MiB of &): RSS ${mib(before)} before, at most ${mib(seen.maxRss)}; pages of ` +
        `${mib(Math.max(...sizes))} at most; ` +
        `${summary(seen.bystanders)}; served again ${back} ms after`,
    );
    expect(s.child.exitCode, s.stderr()).toBe(null);
    expect(first.status).toBe("200");
    // One message a page (5 MiB of `&amp;`), and the link to the next.
    expect(first.body.match(/<message>/g)?.length).toBe(1);
    expect(first.body).toMatch(/<link rel="next" href="\/messages\?cursor=[^"]+" method="GET"\/>/);
    expect(Math.max(...sizes)).toBeLessThan(6 * MiB);
    expect(seen.maxRss).toBeLessThan(WATERMARK + RSS_MARGIN);
    expect(seen.bystanders.filter((b) => b.status !== "0" && b.status !== "200")).toEqual([]);
    expect(back).toBeLessThan(5000);
    // Recorded once the test has held every bound: a failed run's figures do not reach the page.
    recordReliability("xml-amplification", "test/reference-server/slow-readers.test.ts", {
      listings: sizes.length,
      rssBeforeMiB: toMiB(before),
      rssMaxMiB: toMiB(seen.maxRss),
      largestPageMiB: Math.round((Math.max(...sizes) / MiB) * 10) / 10,
      servedAgainMs: back,
      ...bystanderFigures(seen.bystanders),
    });
  }, 90_000);
});
