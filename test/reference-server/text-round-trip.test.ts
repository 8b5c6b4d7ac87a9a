// Text is kept byte for byte: every class of Unicode scalar the reference accepts reads back exactly as written,
// on every store and in both representations, and Hello echoes it exactly over gRPC and Connect; what it refuses
// is a 400, never stored altered. A leading U+FEFF is the case that failed: PGlite's reader dropped it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBin, startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { cleanUp, HELLO, serve, type Served } from "../helpers/serve-process.js";

/** Fixed, so that a failure replays: fast-check prints the seed and path with the counterexample. */
const SEED = 38_003;
const RUNS_PER_STORE = 60;
const REFUSED_RUNS = 15;
const REQUEST_MS = 10_000;

const range = (from: number, to: number) => fc.integer({ min: from, max: to }).map((c) => String.fromCodePoint(c));
const one = (...chars: string[]) => fc.constantFrom(...chars);

/**
 * Every class of scalar the reference accepts (XML 1.0's characters: tab, LF, CR, U+0020 up, no surrogates, no
 * U+FFFE/U+FFFF).
 */
const acceptedScalar = fc.oneof(
  one("\uFEFF"),
  one("\t", "\n", "\r", "\r\n", "\u2028", "\u2029", "\u0085"),
  range(0x20, 0x7e),
  one("&", "<", ">", '"', "'", "]]>", "&amp;", "&#13;", "\\", "\u00a0"),
  range(0x80, 0xd7ff),
  range(0xe000, 0xfffd),
  // Noncharacters that XML allows: U+FDD0..U+FDEF and the last two of every astral plane.
  range(0xfdd0, 0xfdef),
  fc
    .integer({ min: 1, max: 16 })
    .chain((plane) =>
      one(String.fromCodePoint(plane * 0x10000 + 0xfffe), String.fromCodePoint(plane * 0x10000 + 0xffff)),
    ),
  range(0x10000, 0x10ffff),
  // A base letter with a run of combining marks.
  fc
    .tuple(range(0x61, 0x7a), fc.array(range(0x300, 0x36f), { minLength: 1, maxLength: 8 }))
    .map(([base, marks]) => base + marks.join("")),
);

/**
 * A text, often opening with U+FEFF (once or repeated), since a leading one is what a decoder takes for a byte order
 * mark.
 */
const acceptedText = fc
  .tuple(fc.nat({ max: 3 }), fc.array(acceptedScalar, { maxLength: 24 }))
  .map(([boms, rest]) => "\uFEFF".repeat(boms === 3 ? 0 : boms) + rest.join(""));

/** Always tried first, whatever the seed. */
const EXAMPLES: Array<[string]> = [
  ["\uFEFF"],
  ["\uFEFFhello"],
  ["\uFEFF\uFEFF\r\n\u2028\u{10FFFF}e\u0301"],
  ["\uFDD0\u{1FFFE}\r"],
];

/**
 * Scalars the reference refuses in a body (XML 1.0 cannot carry them): NUL and the other C0 controls, lone surrogates,
 * U+FFFE, U+FFFF.
 */
const refusedScalar = fc.oneof(
  one("\u0000", "\u0001", "\u0008", "\u000b", "\u001f", "\uFFFE", "\uFFFF"),
  range(0xd800, 0xdfff),
);
const refusedText = fc.tuple(acceptedText, refusedScalar, acceptedText);

/** Strict and BOM-keeping: a test that decoded as fetch's text() does would strip what it is looking for. */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

async function request(url: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_MS) });
  return { status: res.status, text: utf8.decode(await res.arrayBuffer()) };
}

function xmlEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\r/g, "&#13;");
}

/**
 * The text of <body> in an XML message, its references resolved as XML does: written out here so no parser's quirks
 * stand between.
 */
function xmlBody(document: string): string {
  const match = /<body>([^<]*)<\/body>/.exec(document);
  if (match === null) throw new Error(`no <body> in ${JSON.stringify(document.slice(0, 200))}`);
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
  return (match[1] as string).replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (_, ref: string) =>
    ref.startsWith("#x")
      ? String.fromCodePoint(parseInt(ref.slice(2), 16))
      : ref.startsWith("#")
        ? String.fromCodePoint(Number(ref.slice(1)))
        : (named[ref] as string),
  );
}

const codePoints = (text: string) =>
  [...text].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`).join(" ");

/** Equal text, or a failure that names each code point, since most of these are invisible. */
function expectSame(actual: string, expected: string, where: string): void {
  if (actual !== expected)
    throw new Error(
      `${where}: read back ${codePoints(actual) || "(empty)"}, sent ${codePoints(expected) || "(empty)"}`,
    );
}

/** serve as a process of its own, as users run it (the embedded store's lease runs in a worker thread of dist/). */
async function start(args: string[]): Promise<{ served: Served; httpUrl: string; grpcAddress: string }> {
  const served = await serve(args);
  return { served, httpUrl: `http://127.0.0.1:${served.httpPort}`, grpcAddress: `127.0.0.1:${served.grpcPort}` };
}

const bin = postgresBin();
let pg: TestPostgres | undefined;
const dirs: string[] = [];

/** Each store by name, with the serve options that open it (PostgreSQL's once its private server is up). */
const STORES: Array<{ name: string; args: () => Promise<string[]> }> = [
  { name: "memory", args: async () => ["--store", "memory:"] },
  {
    name: "embedded (PGlite, serve --data-dir)",
    args: async () => {
      const dir = mkdtempSync(join(tmpdir(), "example-conformance-text-"));
      dirs.push(dir);
      return ["--data-dir", dir];
    },
  },
  ...("dir" in bin
    ? [
        {
          name: "PostgreSQL",
          args: async () => {
            pg = await startTestPostgres(bin.dir);
            return ["--store", pg.url];
          },
        },
      ]
    : []),
];
const servers = new Map<string, Awaited<ReturnType<typeof start>>>();

// All at once: PostgreSQL's initdb and the embedded store's are most of this file's time, and they overlap.
beforeAll(async () => {
  await Promise.all(STORES.map(async (store) => servers.set(store.name, await start(await store.args()))));
}, 120_000);

afterAll(async () => {
  cleanUp();
  await pg?.destroy();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(STORES)("text on the $name store", (store) => {
  let server: Awaited<ReturnType<typeof start>>;
  let created = 0;

  beforeAll(() => {
    server = servers.get(store.name)!;
  });

  /** The message's body as each representation shows it, the item's and the filtered collection's. */
  async function expectStored(id: string, body: string, after: string): Promise<void> {
    const json = await request(`${server.httpUrl}/messages/${id}`, { headers: { accept: "application/json" } });
    expect(json.status, after).toBe(200);
    expectSame((JSON.parse(json.text) as { body: string }).body, body, `${after}, GET as JSON`);
    const xml = await request(`${server.httpUrl}/messages/${id}`, { headers: { accept: "application/xml" } });
    expect(xml.status, after).toBe(200);
    expectSame(xmlBody(xml.text), body, `${after}, GET as XML`);
    const listed = await request(`${server.httpUrl}/messages?body=${encodeURIComponent(body)}&limit=1000`, {
      headers: { accept: "application/json" },
    });
    expect(listed.status, after).toBe(200);
    const mine = (JSON.parse(listed.text) as { messages: Array<{ id: string; body: string }> }).messages.find(
      (m) => m.id === id,
    );
    expect(mine, `${after}: the collection filtered on the body holds the message`).toBeDefined();
    expectSame(mine!.body, body, `${after}, in the collection`);
  }

  it("reads back every accepted text exactly: created as JSON, replaced as XML, read in both", async () => {
    await fc.assert(
      fc.asyncProperty(acceptedText, acceptedText, async (first, second) => {
        const posted = await request(`${server.httpUrl}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ body: first }),
        });
        expect(posted.status, posted.text).toBe(201);
        created++;
        const message = JSON.parse(posted.text) as { id: string; body: string };
        expectSame(message.body, first, "the 201's body");
        await expectStored(message.id, first, "after POST as JSON");
        const put = await request(`${server.httpUrl}/messages/${message.id}`, {
          method: "PUT",
          headers: { "content-type": "application/xml", accept: "application/xml" },
          body: `<?xml version="1.0" encoding="UTF-8"?><message><body>${xmlEscape(second)}</body></message>`,
        });
        expect(put.status, put.text).toBe(200);
        expectSame(xmlBody(put.text), second, "the PUT's reply");
        await expectStored(message.id, second, "after PUT as XML");
      }),
      { seed: SEED, numRuns: RUNS_PER_STORE, examples: EXAMPLES.map(([t]) => [t, t]) },
    );
  }, 60_000);

  it("refuses with a 400 a body holding a scalar it cannot carry, and stores nothing", async () => {
    await fc.assert(
      fc.asyncProperty(refusedText, async ([before, bad, after]) => {
        const text = before + bad + after;
        const asJson = await request(`${server.httpUrl}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ body: text }),
        });
        expect(asJson.status, asJson.text).toBe(400);
        // In XML as a character reference, since UTF-8 cannot carry a lone surrogate.
        const asXml = await request(`${server.httpUrl}/messages`, {
          method: "POST",
          headers: { "content-type": "application/xml" },
          body: `<message><body>${xmlEscape(before)}&#x${bad.codePointAt(0)!.toString(16)};${xmlEscape(after)}</body></message>`,
        });
        expect(asXml.status, asXml.text).toBe(400);
      }),
      { seed: SEED, numRuns: REFUSED_RUNS },
    );
    const all = await request(`${server.httpUrl}/messages?limit=1000`, { headers: { accept: "application/json" } });
    expect(
      (JSON.parse(all.text) as { messages: unknown[] }).messages.length,
      "only the accepted writes are stored",
    ).toBe(created);
  }, 60_000);
});

/** Hello's reply as the contract encodes it: field 1, its length as a varint, the UTF-8 bytes. */
function helloBytes(body: string): Buffer {
  const text = Buffer.from(body, "utf8");
  const length: number[] = [];
  for (let n = text.length; ; n >>>= 7) {
    if (n < 0x80) {
      length.push(n);
      break;
    }
    length.push((n & 0x7f) | 0x80);
  }
  return text.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a, ...length]), text]);
}

describe("Hello echoes text exactly", () => {
  let server: Awaited<ReturnType<typeof start>>;
  let client: grpc.Client;

  // Hello is the same on every store: the memory store's server answers it.
  beforeAll(() => {
    server = servers.get("memory")!;
    client = new grpc.Client(server.grpcAddress, grpc.credentials.createInsecure());
  }, 60_000);

  afterAll(() => client?.close());

  const grpcHello = (request: Buffer) =>
    new Promise<Buffer>((resolve, reject) => {
      client.makeUnaryRequest(
        HELLO,
        (b: Buffer) => b,
        (b: Buffer) => b,
        request,
        { deadline: Date.now() + REQUEST_MS },
        (err, reply) => (err ? reject(err) : resolve(reply as Buffer)),
      );
    });

  // NUL is text to Hello: a protobuf string carries any scalar.
  const helloText = fc.oneof(
    acceptedText,
    fc.tuple(acceptedText, acceptedText).map(([a, b]) => `${a}\u0000${b}`),
  );

  it("over gRPC, Connect JSON and Connect binary", async () => {
    await fc.assert(
      fc.asyncProperty(helloText, async (text) => {
        const expected = text === "" ? "Hello" : `Hello, ${text}`;
        expect(
          (await grpcHello(helloBytes(text))).equals(helloBytes(expected)),
          `gRPC reply to ${codePoints(text)}`,
        ).toBe(true);
        const json = await request(`${server.httpUrl}${HELLO}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ body: text }),
        });
        expect(json.status, json.text).toBe(200);
        expectSame((JSON.parse(json.text) as { body: string }).body, expected, "Connect JSON");
        const binary = await fetch(`${server.httpUrl}${HELLO}`, {
          method: "POST",
          headers: { "content-type": "application/proto" },
          body: helloBytes(text),
          signal: AbortSignal.timeout(REQUEST_MS),
        });
        expect(binary.status).toBe(200);
        expect(
          Buffer.from(await binary.arrayBuffer()).equals(helloBytes(expected)),
          `Connect binary reply to ${codePoints(text)}`,
        ).toBe(true);
      }),
      { seed: SEED, numRuns: RUNS_PER_STORE, examples: EXAMPLES },
    );
  }, 60_000);
});
