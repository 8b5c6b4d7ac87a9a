// Pages of the collection cut by their encoded bytes, in JSON and XML, escaping included; a message too large for any
// reply; and pipelined requests on one connection served one at a time, in order, over the reference HTTP server.
import net from "node:net";
import { XMLParser } from "fast-xml-parser";
import { afterEach, describe, expect, it } from "vitest";
import { type HttpServerHandle, startHttpServer } from "../../reference-server/http/server.js";
import { readPage } from "../../reference-server/http/page.js";
import { createMemoryStore, type MessageStore } from "../../reference-server/http/store.js";
import { createOwedLedger } from "../../reference-server/owed.js";
import { rawRequest, type RawResponse } from "../helpers/http-server.js";

const PAGE_BYTES = 4096;
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  trimValues: false,
  htmlEntities: true,
  isArray: (name) => name === "link" || name === "message",
});

let server: HttpServerHandle | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function started(
  store: MessageStore,
  options: { pageBytes?: number; maxReplyBytes?: number } = {},
): Promise<HttpServerHandle> {
  server = await startHttpServer({ port: 0, log: "silent", store, pageBytes: PAGE_BYTES, ...options });
  return server;
}

interface Page {
  bodies: string[];
  next?: string;
  /** The bytes the page's messages take, as the page encodes them. */
  messageBytes: number[];
}

function pageOf(format: "json" | "xml", response: RawResponse): Page {
  if (format === "json") {
    const doc = JSON.parse(response.text) as {
      messages: Array<{ body: string }>;
      links: Array<{ rel: string; href: string }>;
    };
    return {
      bodies: doc.messages.map((m) => m.body),
      messageBytes: doc.messages.map((m) => Buffer.byteLength(JSON.stringify(m))),
      ...nextOf(doc.links),
    };
  }
  const doc = xml.parse(response.text) as {
    messages: { message?: Array<{ body: string }>; links: { link: Array<{ rel: string; href: string }> } };
  };
  const raw = [...response.text.matchAll(/<message>.*?<\/message>/gs)].map((m) => Buffer.byteLength(m[0]));
  return {
    bodies: (doc.messages.message ?? []).map((m) => m.body),
    messageBytes: raw,
    ...nextOf(doc.messages.links.link),
  };
}

function nextOf(links: Array<{ rel: string; href: string }>): { next?: string } {
  const next = links.find((l) => l.rel === "next")?.href;
  return next === undefined ? {} : { next };
}

/** Every page from the first, following next; at most `max` of them. */
async function allPages(url: string, format: "json" | "xml", first = "/messages", max = 1000): Promise<Page[]> {
  const pages: Page[] = [];
  for (let path: string | undefined = first; path !== undefined && pages.length < max; ) {
    const response = await rawRequest(url, { path, headers: { accept: `application/${format}` } });
    expect(response.status, response.text.slice(0, 300)).toBe(200);
    const page = pageOf(format, response);
    pages.push(page);
    path = page.next;
  }
  return pages;
}

// Bodies whose escaping multiplies them: `&` is 5 bytes in XML, `<` 4, CR 5; in JSON a tab, newline or CR is 2, `"` 2.
const BODIES = [
  "&".repeat(700),
  "plain",
  "\t\n\r".repeat(300),
  '"quoted" <tag> & more'.repeat(40),
  "é€😀".repeat(100),
  '&<>\r\t\n"'.repeat(120),
  "",
  "x".repeat(3000),
  "&".repeat(2000),
];

describe("a page is cut by its encoded bytes", () => {
  for (const format of ["json", "xml"] as const) {
    it(
      `in ${format.toUpperCase()}: every page's messages within ${PAGE_BYTES} bytes (escaping included) unless it ` +
        `holds one, and every message exactly once, in order`,
      async () => {
        const store = createMemoryStore();
        const bodies = Array.from({ length: 60 }, (_, i) => `${i}:${BODIES[i % BODIES.length]}`);
        for (const body of bodies) await store.create(body);
        const { url } = await started(store);
        const pages = await allPages(url, format);
        expect(pages.flatMap((p) => p.bodies)).toEqual(bodies);
        for (const page of pages) {
          expect(page.bodies.length).toBeGreaterThan(0);
          const bytes = page.messageBytes.reduce(
            (a, b) => a + b + (format === "json" ? 1 : 0),
            format === "json" ? -1 : 0,
          );
          if (page.bodies.length > 1) expect(bytes).toBeLessThanOrEqual(PAGE_BYTES);
        }
        // Cut by bytes, not by the count of 100: these 60 messages take many pages, and some carry several.
        expect(pages.length).toBeGreaterThan(10);
        expect(pages.some((p) => p.bodies.length > 1)).toBe(true);
      },
    );
  }

  it("an XML page of `&` bodies holds fewer messages than the JSON page of the same: it is measured escaped", async () => {
    const store = createMemoryStore();
    for (let i = 0; i < 20; i++) await store.create("&".repeat(500));
    const { url } = await started(store);
    const [json] = await allPages(url, "json", "/messages", 1);
    const [inXml] = await allPages(url, "xml", "/messages", 1);
    // With its links a message is about 900 bytes in JSON and 2,900 in XML: four fit 4 KiB in JSON, one in XML.
    expect(json?.bodies.length).toBe(4);
    expect(inXml?.bodies.length).toBe(1);
  });

  it("?limit still bounds the count, and the filter and limit ride on the next link", async () => {
    const store = createMemoryStore();
    for (let i = 0; i < 10; i++) await store.create(i % 2 === 0 ? "same" : "other");
    const { url } = await started(store);
    const pages = await allPages(url, "json", "/messages?body=same&limit=2");
    expect(pages.map((p) => p.bodies.length)).toEqual([2, 2, 1]);
    expect(pages[0]?.next).toMatch(/^\/messages\?body=same&limit=2&cursor=/);
  });

  it(
    "messages created and deleted while a listing is read by bytes: each one present throughout appears exactly " +
      "once",
    async () => {
      const store = createMemoryStore();
      const kept: string[] = [];
      for (let i = 0; i < 40; i++) {
        const m = await store.create(`${i}:${"&".repeat(300 + 50 * (i % 7))}`);
        if (i % 3 !== 0) kept.push(m.body);
      }
      const doomed = (await store.list({}, { limit: 1000 })).messages.filter((_, i) => i % 3 === 0);
      // Between two reads of the store, one message that is not kept is deleted and one is created at the end.
      let turn = 0;
      const racing: MessageStore = {
        ...store,
        async list(filter, page) {
          const result = await store.list(filter, page);
          const victim = doomed[turn++];
          if (victim !== undefined) {
            await store.delete(victim.id);
            await store.create(`late ${turn}`);
          }
          return result;
        },
      };
      const seen: string[] = [];
      for (let cursor: string | undefined, n = 0; n < 100; n++) {
        const page = await readPage(
          racing,
          { filter: {}, limit: 100, ...(cursor !== undefined && { cursor }) },
          (m) => Buffer.byteLength(JSON.stringify({ body: m.body })),
          1,
          { softBytes: 2000, hardBytes: 100_000 },
        );
        seen.push(...page.messages.map((m) => m.body));
        if (page.next === undefined) break;
        cursor = page.next;
      }
      const once = (body: string) => seen.filter((b) => b === body).length;
      expect(kept.filter((b) => once(b) !== 1)).toEqual([]);
      expect(new Set(seen).size).toBe(seen.length);
    },
  );
});

describe("a message too large for one reply", () => {
  it("is answered 500 with a message that says why, on its own and in a listing, which links past it", async () => {
    const store = createMemoryStore({ maxBytes: 10_000_000 });
    await store.create("before");
    // Stored directly, as a server with a larger body limit sharing the store would: past this one's reply bound.
    const big = await store.create("&".repeat(30_000));
    await store.create("after");
    const { url } = await started(store, { maxReplyBytes: 100_000 });
    // 30,000 bytes in JSON fit; 150,000 in XML do not.
    expect((await rawRequest(url, { path: `/messages/${big.id}` })).status).toBe(200);
    const alone = await rawRequest(url, { path: `/messages/${big.id}`, headers: { accept: "application/xml" } });
    expect(alone.status).toBe(500);
    expect(alone.text).toContain(`message ${big.id} takes at least 150`);
    expect(alone.text).toContain("past the 100000 bytes one reply may carry");
    const reply = await rawRequest(url, { path: `/messages/${big.id}/reply`, headers: { accept: "application/xml" } });
    expect(reply.status).toBe(500);
    expect(reply.text).toContain("this reply takes at least");

    const first = await rawRequest(url, { path: "/messages", headers: { accept: "application/xml" } });
    expect(pageOf("xml", first).bodies).toEqual(["before"]);
    const stuck = await rawRequest(url, {
      path: pageOf("xml", first).next ?? "",
      headers: { accept: "application/xml" },
    });
    expect(stuck.status).toBe(500);
    const next = /<link rel="next" href="([^"]+)" method="GET"\/>/.exec(stuck.text)?.[1]?.replaceAll("&amp;", "&");
    expect(next).toMatch(/^\/messages\?cursor=/);
    expect(stuck.headers.link).toContain('rel="next"');
    const rest = await rawRequest(url, { path: next ?? "", headers: { accept: "application/xml" } });
    expect(pageOf("xml", rest).bodies).toEqual(["after"]);
  });

  it("a body whose length alone is past the bound is refused without being encoded", async () => {
    const store = createMemoryStore({ maxBytes: 10_000_000 });
    const big = await store.create("x".repeat(200_001));
    const { url } = await started(store, { maxReplyBytes: 200_000 });
    const response = await rawRequest(url, { path: `/messages/${big.id}` });
    expect(response.status).toBe(500);
    expect(response.text).toContain("takes at least 200001 bytes");
  });

  it("the default bound carries every message this server accepts, escaped: a 1 MiB body of `&` is served in XML", async () => {
    const { url } = await started(createMemoryStore({ maxBytes: 10_000_000 }), {});
    const created = await rawRequest(url, {
      method: "POST",
      path: "/messages",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ body: "&".repeat(1024 * 1024 - 20) }),
    });
    expect(created.status).toBe(201);
    const id = (JSON.parse(created.text) as { id: string }).id;
    const response = await rawRequest(url, { path: `/messages/${id}`, headers: { accept: "application/xml" } });
    expect(response.status).toBe(200);
    expect(response.body.length).toBeGreaterThan(5 * (1024 * 1024 - 20));
  });
});

describe("pipelined requests on one connection", () => {
  /** Writes `requests` in one write and reads every response, splitting them by Content-Length. */
  async function pipeline(port: number, requests: string[]): Promise<Array<{ status: number; body: string }>> {
    const socket = net.connect(port, "127.0.0.1");
    socket.write(requests.join(""));
    let buffer = Buffer.alloc(0);
    const responses: Array<{ status: number; body: string }> = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${responses.length} of ${requests.length} responses within 10 s`)),
        10_000,
      );
      socket.on("data", (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        for (;;) {
          const end = buffer.indexOf("\r\n\r\n");
          if (end === -1) return;
          const head = buffer.subarray(0, end).toString("latin1");
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (buffer.length < end + 4 + length) return;
          responses.push({
            status: Number(head.split(" ")[1]),
            body: buffer.subarray(end + 4, end + 4 + length).toString(),
          });
          buffer = buffer.subarray(end + 4 + length);
          if (responses.length === requests.length) {
            clearTimeout(timer);
            socket.destroy();
            resolve();
          }
        }
      });
      socket.on("error", reject);
    });
    return responses;
  }

  it("are answered one by one, in order, each the answer to its own request, POSTs and GETs mixed", async () => {
    const { port } = await started(createMemoryStore(), { pageBytes: 1024 * 1024 });
    const post = (body: string) => {
      const json = JSON.stringify({ body });
      return (
        `POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ` +
        `${Buffer.byteLength(json)}\r\n\r\n${json}`
      );
    };
    const requests = Array.from({ length: 50 }, (_, i) =>
      i % 5 === 4 ? "GET /messages?limit=1000 HTTP/1.1\r\nHost: x\r\n\r\n" : post(`m${i}`),
    );
    const responses = await pipeline(port, requests);
    responses.forEach((r, i) => {
      if (i % 5 === 4) {
        expect(r.status).toBe(200);
        // The listing sees every create sent before it, and none after: the requests ran in order.
        expect((JSON.parse(r.body) as { messages: unknown[] }).messages.length).toBe(i - Math.floor(i / 5));
      } else {
        expect(r.status).toBe(201);
        expect((JSON.parse(r.body) as { body: string }).body).toBe(`m${i}`);
      }
    });
  });

  it(
    "a connection is not read while its requests wait: a client that stops reading, pipelines 100 more, then " +
      "reads, gets all 200 answers",
    async () => {
      const store = createMemoryStore({ maxBytes: 10_000_000 });
      await store.create("m".repeat(1024 * 1024));
      const { port } = await started(store);
      const socket = net.connect(port, "127.0.0.1");
      socket.on("error", () => undefined);
      socket.pause();
      const listing = "GET /messages HTTP/1.1\r\nHost: x\r\n\r\n";
      socket.write(listing.repeat(100));
      // The first replies fill the kernel's buffers; the rest wait. Were the connection still read, these 100 would
      // make more than 128 wait, and it would be closed.
      await new Promise((r) => setTimeout(r, 300));
      socket.write(listing.repeat(100));
      await new Promise((r) => setTimeout(r, 300));
      let answered = 0;
      let tail = "";
      const done = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 20_000);
        socket.on("data", (c: Buffer) => {
          const text = tail + c.toString("latin1");
          answered += text.split("HTTP/1.1 200 OK").length - 1;
          // Shorter than the marker, so that no answer is counted twice.
          tail = text.slice(-14);
          if (answered === 200) {
            clearTimeout(timer);
            resolve(true);
          }
        });
        socket.on("close", () => resolve(false));
        socket.resume();
      });
      expect(await done, `${answered} of 200 answered`).toBe(true);
      socket.destroy();
    },
  );

  it(
    "the reply bytes a connection leaves unread are owed on the ledger the server was given, and paid when the " +
      "stall bound closes it",
    async () => {
      const ledger = createOwedLedger({ stallMs: 500 });
      const store = createMemoryStore({ maxBytes: 10_000_000 });
      await store.create("m".repeat(1024 * 1024));
      server = await startHttpServer({ port: 0, log: "silent", store, ledger });
      const socket = net.connect(server.port, "127.0.0.1");
      socket.on("error", () => undefined);
      socket.pause();
      socket.write("GET /messages HTTP/1.1\r\nHost: x\r\n\r\n".repeat(50));
      let most = 0;
      const t0 = performance.now();
      let closedMs = -1;
      socket.on("close", () => (closedMs = performance.now() - t0));
      // Closed 0.5 s after the reply stalls; the client learns it only when it reads, so the ledger is what is watched.
      while (performance.now() - t0 < 8000) {
        most = Math.max(most, ledger.total());
        if (most > 0 && ledger.total() === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThan(2 * 1024 * 1024);
      expect(ledger.total()).toBe(0);
      socket.resume();
      await new Promise((r) => setTimeout(r, 500));
      expect(closedMs).toBeGreaterThan(0);
    },
  );

  it(
    "more than 128 waiting behind an unfinished reply close the connection, after the replies already begun; 128 " +
      "are all served",
    async () => {
      const { port, url } = await started(createMemoryStore());
      const count = async (depth: number) => {
        const socket = net.connect(port, "127.0.0.1");
        socket.on("error", () => undefined);
        socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".repeat(depth));
        let text = "";
        socket.on("data", (c: Buffer) => (text += c.toString("latin1")));
        const closed = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 3000);
          socket.on("close", () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
        socket.destroy();
        return { closed, answered: text.split("HTTP/1.1 200 OK").length - 1 };
      };
      // 129: the one being served and 128 waiting; all answered, and the connection kept alive.
      expect(await count(129)).toEqual({ closed: false, answered: 129 });
      const deep = await count(2000);
      expect(deep.closed).toBe(true);
      expect(deep.answered).toBeLessThan(2000);
      expect((await rawRequest(url, { path: "/" })).status).toBe(200);
    },
  );
});
