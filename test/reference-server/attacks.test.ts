// The reference server under the attacks independent tools made on it, sent as raw frames and sockets: resets after
// HEADERS, Rapid Reset, header blocks far past any limit, floods of connections and calls, a slowloris near the
// descriptor limit, stored data without end, and a stream held over shutdown.
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { FLAG, FRAME, frame, grpcRequestHeaders, headersFrames, rstStream } from "../helpers/h2-frames.js";
import {
  cleanUp,
  connect,
  connectHttp,
  del,
  get,
  hello,
  HELLO,
  mib,
  post,
  rssBytes,
  serve,
  sleep,
  type Answer,
} from "../helpers/serve-process.js";
import { recordReliability } from "../helpers/reliability-results.js";

afterEach(cleanUp);

describe("resets", () => {
  for (const path of [HELLO, "/grpc.health.v1.Health/Check", "/no.such.Service/Method"]) {
    it(
      `HEADERS without END_STREAM, then RST_STREAM with codes 0, 1, 2, 7 and 11, on ${path}: that stream ends, the ` +
        `server serves on both ports`,
      async () => {
        const s = await serve();
        for (const code of [0, 1, 2, 7, 11]) {
          const c = await connect(s.grpcPort);
          await c.write(frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, grpcRequestHeaders(path)));
          await sleep(20);
          await c.write(rstStream(1, code));
          await sleep(20);
          c.destroy();
        }
        expect(await hello(s.grpcPort), s.stderr()).toMatchObject({ status: "0" });
        expect(await get(s.httpPort, "/")).toMatchObject({ status: "200" });
        expect(s.child.exitCode).toBe(null);
      },
    );
  }

  it(
    "Rapid Reset: 20,000 streams opened and reset at once on one connection, the reset codes cycling 0, 1, 2, 7, " +
      "8, 11; other clients are answered within a second throughout, on both ports",
    async () => {
      const s = await serve();
      const c = await connect(s.grpcPort);
      const answers: Answer[] = [];
      let attacking = true;
      const bystander = (async () => {
        while (attacking) {
          answers.push(await hello(s.grpcPort));
          await sleep(50);
        }
      })();
      const headers = grpcRequestHeaders(HELLO);
      // CANCEL, the usual code, raises no stream error in node:http2; the others do, and each must end its stream only.
      const codes = [0, 1, 2, 7, 8, 11];
      for (let batch = 0; batch < 100 && !c.socket.destroyed; batch++) {
        const frames: Buffer[] = [];
        for (let i = 0; i < 200; i++) {
          const id = 1 + 2 * (batch * 200 + i);
          frames.push(
            frame(FRAME.HEADERS, FLAG.END_HEADERS, id, headers),
            rstStream(id, codes[i % codes.length] as number),
          );
        }
        await c.write(...frames);
      }
      await sleep(300);
      attacking = false;
      await bystander;
      expect(s.child.exitCode, s.stderr()).toBe(null);
      expect(answers.length).toBeGreaterThan(0);
      // Answered: served (0) or shed cleanly (8, RESOURCE_EXHAUSTED); never left waiting or cut off.
      expect(answers.filter((a) => a.status !== "0" && a.status !== "8")).toEqual([]);
      expect(await hello(s.grpcPort)).toMatchObject({ status: "0" });
      expect(await get(s.httpPort, "/")).toMatchObject({ status: "200" });
    },
  );
});

describe("large headers", () => {
  it("60 KB header blocks on 20 connections × 50 streams are refused, and the process does not grow", async () => {
    const s = await serve();
    const pid = s.child.pid as number;
    await hello(s.grpcPort);
    const before = rssBytes(pid);
    const block = grpcRequestHeaders(HELLO, "127.0.0.1", [["x-filler", "x".repeat(60_000)]]);
    const connections = await Promise.all(Array.from({ length: 20 }, () => connect(s.grpcPort)));
    await Promise.all(
      connections.map(async (c) => {
        for (let i = 0; i < 50; i++) await c.write(headersFrames(1 + 2 * i, block));
      }),
    );
    await sleep(500);
    // Every stream was refused (a trailers-only answer or a reset), or its connection closed: none was held as a call.
    const refusals = (c: (typeof connections)[number]) =>
      refusedStreams(c.received()) + countFrames(c.received(), FRAME.GOAWAY) * 50;
    // The refusals come as fast as the server reads 60 MB of headers: waited for, bounded, not a fixed pause (one
    // connection had 30 of its 50 by 500 ms in a CI run).
    for (let waited = 0; waited < 10_000 && !connections.every((c) => refusals(c) >= 50); waited += 100)
      await sleep(100);
    const during = rssBytes(pid);
    const bystander = await hello(s.grpcPort);
    const resets = connections.map(refusals);
    for (const c of connections) c.destroy();
    await sleep(500);
    const after = rssBytes(pid);
    console.log(
      `60 KB headers: RSS ${mib(before)} before, ${mib(during)} under 1,000 streams (60 MB of headers), ` +
        `${mib(after)} after`,
    );
    const toMiB = (bytes: number) => Math.round(bytes / 2 ** 20);
    expect(bystander).toMatchObject({ status: "0" });
    expect(
      resets.every((n) => n >= 50),
      `resets and GOAWAYs per connection: ${resets.join(", ")}`,
    ).toBe(true);
    expect(during - before).toBeLessThan(100 * 1024 * 1024);
    // Recorded once the test has held every bound: a failed run's figures do not reach the page.
    recordReliability("large-headers", "test/reference-server/attacks.test.ts", {
      connections: 20,
      streamsEach: 50,
      headerKB: 60,
      rssBeforeMiB: toMiB(before),
      rssDuringMiB: toMiB(during),
      rssAfterMiB: toMiB(after),
    });
  });
});

describe("floods", () => {
  it("connections past the per-address cap are closed at once, on both ports, and another address is served", async () => {
    const s = await serve(["--max-connections", "100", "--max-connections-per-address", "20"]);
    const grpcFlood = await Promise.all(Array.from({ length: 60 }, () => connect(s.grpcPort)));
    const httpFlood = await Promise.all(Array.from({ length: 60 }, () => connectHttp(s.httpPort)));
    await sleep(300);
    const grpcOpen = grpcFlood.filter((c) => !c.socket.destroyed).length;
    const httpOpen = httpFlood.filter((c) => !c.destroyed).length;
    expect([grpcOpen, httpOpen]).toEqual([20, 20]);
    expect(await hello(s.grpcPort)).toMatchObject({ status: "0" });
    expect(await get(s.httpPort, "/")).toMatchObject({ status: "200" });
  });

  it(
    "calls in flight past the cap are shed with RESOURCE_EXHAUSTED and a pushback at once, and served again once " +
      "they end",
    async () => {
      const s = await serve(["--max-in-flight", "50"]);
      const holders = await Promise.all(Array.from({ length: 5 }, () => connect(s.grpcPort)));
      // 100 calls held open: HEADERS and never a message.
      await Promise.all(
        holders.map((c) =>
          c.write(
            ...Array.from({ length: 20 }, (_, i) =>
              frame(FRAME.HEADERS, FLAG.END_HEADERS, 1 + 2 * i, grpcRequestHeaders(HELLO)),
            ),
          ),
        ),
      );
      await sleep(300);
      const shed = holders.reduce((n, c) => n + refusedStreams(c.received()), 0);
      expect(shed).toBe(50);
      // Shed, with the pushback a retrying client honours (gRFC A6), as HTTP's Retry-After: 1.
      expect(await hello(s.grpcPort)).toMatchObject({ status: "8", pushbackMs: "1000" });
      for (const c of holders) c.destroy();
      await sleep(200);
      expect(await hello(s.grpcPort)).toMatchObject({ status: "0" });
    },
  );

  it("an HTTP slowloris near the open-file limit does not starve the gRPC port", async () => {
    // Under a limit of 256 descriptors each interface may hold (256 - 64) / 2 = 96 connections.
    const s = await serve([], 256);
    const loris = await Promise.all(Array.from({ length: 300 }, () => connectHttp(s.httpPort)));
    for (const socket of loris) if (!socket.destroyed) socket.write("GET /messages HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    const drip = setInterval(() => {
      for (const socket of loris) if (!socket.destroyed) socket.write("a");
    }, 200);
    try {
      await sleep(500);
      expect(loris.filter((c) => !c.destroyed).length).toBeLessThanOrEqual(96);
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await hello(s.grpcPort));
      expect(answers.map((a) => a.status)).toEqual(["0", "0", "0", "0", "0"]);
      expect(s.child.exitCode).toBe(null);
    } finally {
      clearInterval(drip);
    }
  });
});

describe("each limit, set by its flag", () => {
  it(
    "--max-header-bytes: a header block past it is refused on both ports (RESOURCE_EXHAUSTED, 431), one within it " +
      "served",
    async () => {
      const s = await serve(["--max-header-bytes", "4096"]);
      const big = { "x-filler": "x".repeat(8000) };
      const small = { "x-filler": "x".repeat(1000) };
      expect(await hello(s.grpcPort, undefined, undefined, big)).toMatchObject({ status: "8" });
      expect(await hello(s.grpcPort, undefined, undefined, small)).toMatchObject({ status: "0" });
      expect(await get(s.httpPort, "/", undefined, undefined, big)).toMatchObject({ status: "431" });
      expect(await get(s.httpPort, "/", undefined, undefined, small)).toMatchObject({ status: "200" });
    },
  );

  it(
    "--max-streams: a connection that opens more streams than it allows is refused, one within it is held, and the " +
      "server serves on",
    async () => {
      const s = await serve(["--max-streams", "2"]);
      const [within, past] = await Promise.all([connect(s.grpcPort), connect(s.grpcPort)]);
      await sleep(100); // the server's SETTINGS acknowledged
      const open = (c: typeof within, ids: number[]) =>
        c.write(...ids.map((id) => frame(FRAME.HEADERS, FLAG.END_HEADERS, id, grpcRequestHeaders(HELLO))));
      await Promise.all([open(within, [1, 3]), open(past, [1, 3, 5, 7])]);
      await sleep(300);
      // node:http2 (nghttp2) answers streams past an acknowledged limit with GOAWAY, or resets them.
      const refusals = (c: typeof within) =>
        countFrames(c.received(), FRAME.GOAWAY) + countFrames(c.received(), FRAME.RST_STREAM);
      expect([refusals(within), refusals(past) > 0]).toEqual([0, true]);
      expect(s.child.exitCode).toBe(null);
      expect(await hello(s.grpcPort)).toMatchObject({ status: "0" });
    },
  );

  it(
    "--memory-watermark-mib: past it, gRPC calls get RESOURCE_EXHAUSTED with a pushback and HTTP requests 503 with " +
      "Retry-After",
    async () => {
      const s = await serve(["--memory-watermark-mib", "1"]);
      expect(await hello(s.grpcPort)).toMatchObject({ status: "8", pushbackMs: "1000" });
      const answer = await get(s.httpPort, "/");
      expect([answer.status, answer.headers["retry-after"]]).toEqual(["503", "1"]);
    },
  );

  it(
    "--max-in-flight on HTTP: a request past it gets 503 with Retry-After at once, and requests are served again " +
      "once the held one ends",
    async () => {
      const s = await serve(["--max-in-flight", "1"]);
      const held = await connectHttp(s.httpPort);
      held.write(
        "POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
      );
      await sleep(200);
      const shed = await get(s.httpPort, "/");
      expect([shed.status, shed.headers["retry-after"]]).toEqual(["503", "1"]);
      held.destroy();
      await sleep(200);
      expect(await get(s.httpPort, "/")).toMatchObject({ status: "200" });
    },
  );

  it("--max-connections: past the total cap, new connections from any address close at once on both ports", async () => {
    const s = await serve(["--max-connections", "10"]);
    const grpcFlood = await Promise.all(Array.from({ length: 20 }, () => connect(s.grpcPort)));
    const httpFlood = await Promise.all(Array.from({ length: 20 }, () => connectHttp(s.httpPort)));
    await sleep(300);
    expect([grpcFlood.filter((c) => !c.socket.destroyed).length, httpFlood.filter((c) => !c.destroyed).length]).toEqual(
      [10, 10],
    );
    expect((await hello(s.grpcPort)).status).toMatch(/^no answer/);
    expect((await get(s.httpPort, "/")).status).toMatch(/^no answer/);
    for (const c of grpcFlood) c.destroy();
    for (const c of httpFlood) c.destroy();
    await sleep(200);
    expect(await hello(s.grpcPort)).toMatchObject({ status: "0" });
    expect(await get(s.httpPort, "/")).toMatchObject({ status: "200" });
  });
});

describe("stored data", () => {
  it("a flood of 1 MB POSTs ends in 507 once the store is full and 413 past the body limit, never a crash", async () => {
    const s = await serve(["--store-max-bytes", String(4 * 1024 * 1024)]);
    const body = JSON.stringify({ body: "m".repeat(1_000_000) });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await post(s.httpPort, body)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 507, 507, 507, 507]);
    expect((await post(s.httpPort, JSON.stringify({ body: "m".repeat(1_100_000) }))).status).toBe(413);
    expect(await get(s.httpPort, "/")).toMatchObject({ status: "200" });
  });

  it("--store-max-messages: a create past the bound on stored messages gets 507, and a delete makes room again", async () => {
    const s = await serve(["--store-max-messages", "3"]);
    const created: string[] = [];
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await post(s.httpPort, JSON.stringify({ body: `small ${i}` }));
      statuses.push(answer.status);
      if (answer.status === 201) created.push((JSON.parse(answer.body) as { id: string }).id);
    }
    expect(statuses).toEqual([201, 201, 201, 507, 507]);
    expect(await del(s.httpPort, `/messages/${created[0] ?? ""}`)).toBe(204);
    expect((await post(s.httpPort, JSON.stringify({ body: "after a delete" }))).status).toBe(201);
  });

  it("lists the collection in pages linked by rel=next, each message exactly once", async () => {
    const s = await serve();
    const created = new Set<string>();
    for (let i = 0; i < 250; i++)
      created.add(
        (JSON.parse((await post(s.httpPort, JSON.stringify({ body: `page ${i}` }))).body) as { id: string }).id,
      );
    const seen: string[] = [];
    let next: string | undefined = "/messages";
    let pages = 0;
    while (next !== undefined && pages < 10) {
      const page = await get(s.httpPort, next);
      pages++;
      const json = JSON.parse(page.body) as {
        messages: Array<{ id: string }>;
        links: Array<{ rel: string; href: string }>;
      };
      expect(json.messages.length).toBeLessThanOrEqual(100);
      seen.push(...json.messages.map((m) => m.id));
      next = json.links.find((l) => l.rel === "next")?.href;
      if (next !== undefined) expect(page.headers.link).toContain(`<${next}>; rel="next"`);
    }
    expect(pages).toBe(3);
    expect(seen.length).toBe(250);
    expect(new Set(seen)).toEqual(created);
    expect((await get(s.httpPort, "/messages?limit=0")).status).toBe("400");
    // A page holds at most 1,000 messages: a client cannot ask for the whole store at once.
    expect((await get(s.httpPort, "/messages?limit=1000")).status).toBe("200");
    expect((await get(s.httpPort, "/messages?limit=1001")).status).toBe("400");
    expect((await get(s.httpPort, "/messages?cursor=forged")).status).toBe("400");
  });
});

describe("shutdown", () => {
  it("SIGTERM with a gRPC stream and an HTTP request held open exits 0 within the grace and a second", async () => {
    const s = await serve(["--shutdown-grace", "1s"]);
    const held = await connect(s.grpcPort);
    await held.write(frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, grpcRequestHeaders(HELLO)));
    const slow = await connectHttp(s.httpPort);
    slow.write("POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
    await sleep(200);
    const t0 = performance.now();
    s.child.kill("SIGTERM");
    const code = await Promise.race([s.exited, sleep(10_000).then(() => "still running after 10 s")]);
    const ms = performance.now() - t0;
    expect(code, s.stderr()).toBe(0);
    expect(ms).toBeLessThan(2000);
  });
});

describe("uncaught errors", () => {
  it("an error nothing handles ends serve loudly: one line naming it, no stack trace, exit 70", async () => {
    // A fault planted in the process itself, thrown from outside any handler when the test asks for it.
    const plant = join(tmpdir(), `example-conformance-plant-${process.pid}.mjs`);
    writeFileSync(plant, `process.on("SIGUSR2", () => setImmediate(() => { throw new Error("planted fault"); }));\n`);
    const s = await serve([], undefined, ["--import", pathToFileURL(plant).href]).finally(() =>
      rmSync(plant, { force: true }),
    );
    expect(await hello(s.grpcPort)).toMatchObject({ status: "0" });
    s.child.kill("SIGUSR2");
    const code = await Promise.race([s.exited, sleep(10_000).then(() => "still running after 10 s")]);
    expect(code, s.stderr()).toBe(70);
    expect(s.stderr()).toContain("example-conformance: serve: fatal: Error: planted fault; stopping\n");
    expect(s.stderr()).not.toMatch(/^\s+at /m);
  });
});

/** Frames of one type in what a server sent, after the preface's SETTINGS. */
function countFrames(bytes: Buffer, type: number): number {
  let n = 0;
  for (let at = 0; at + 9 <= bytes.length; at += 9 + bytes.readUIntBE(at, 3)) if (bytes[at + 3] === type) n++;
  return n;
}

/** Streams the server ended without reading a message: a trailers-only answer (HEADERS with END_STREAM) or a reset. */
function refusedStreams(bytes: Buffer): number {
  let n = 0;
  for (let at = 0; at + 9 <= bytes.length; at += 9 + bytes.readUIntBE(at, 3)) {
    const type = bytes[at + 3];
    if (type === FRAME.RST_STREAM || (type === FRAME.HEADERS && ((bytes[at + 4] ?? 0) & FLAG.END_STREAM) !== 0)) n++;
  }
  return n;
}
