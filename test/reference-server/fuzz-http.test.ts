// The reference HTTP interface under generated requests: random paths, methods, headers and bodies (deep, huge,
// invalid UTF-8, XML entities, "__proto__" keys). No client mistake gets a 5xx, the server never falls over, and a
// refused request leaves the stored messages exactly as they were. FUZZ_RUNS sets the number of cases.
import { request as httpRequest } from "node:http";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpServer, type HttpServerHandle } from "../../reference-server/http/server.js";
import { createMemoryStore, type MessageStore } from "../../reference-server/http/store.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const KEY = "fuzz-key";
let server: HttpServerHandle;
let store: MessageStore;
let seededId = "";
const tally = { cases: 0, refused: 0, accepted: 0, statuses: new Map<number, number>() };

beforeAll(async () => {
  store = createMemoryStore();
  seededId = (await store.create("seed")).id;
  await store.create("<seed & 'two'>");
  server = await startHttpServer({ port: 0, log: "silent", apiKey: KEY, store, bodyLimitBytes: 64 * 1024 });
});
afterAll(async () => {
  await server?.close();
  const seen = [...tally.statuses]
    .sort((a, b) => a[0] - b[0])
    .map(([k, n]) => `${k}×${n}`)
    .join(", ");
  console.log(
    `HTTP fuzz: ${tally.cases} cases (${tally.accepted} accepted, ${tally.refused} refused with the store ` +
      `unchanged): ${seen}`,
  );
});

interface Exchange {
  status: number;
  body: string;
}

/** One request on its own connection, bytes exactly as generated; bounded in time. */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
): Promise<Exchange> {
  // Framed explicitly: Node sends a HEAD, DELETE or TRACE body with no length, which no server can frame.
  if (body !== undefined) headers["content-length"] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port: server.port, method, path, headers, agent: false, timeout: 5000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer within 5 s`)));
    req.on("error", reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

const snapshot = async () => JSON.stringify(await store.list({}, { limit: 100_000 }));

const nested = (depth: number, leaf: string) => "[".repeat(depth) + leaf + "]".repeat(depth);
const jsonBody = fc.oneof(
  fc.string({ maxLength: 30 }).map((s) => JSON.stringify({ body: s })),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '{"__proto__": {"body": "polluted"}}',
    '{"body": "x", "__proto__": {"admin": true}}',
    '{"constructor": {"prototype": {"body": 1}}}',
    '{"body": "a", "body": "b"}',
    '{"body": "x"',
    "",
    "null",
    '{"body": "\\ud800"}',
  ),
  fc.integer({ min: 100, max: 20_000 }).map((d) => nested(d, '{"body":"deep"}')),
  fc.integer({ min: 60_000, max: 80_000 }).map((n) => JSON.stringify({ body: "x".repeat(n) })),
);
const xmlBody = fc.oneof(
  fc.string({ maxLength: 30 }).map((s) => `<message><body>${s}</body></message>`),
  fc.constantFrom(
    '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b ' +
      '"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c ' +
      '"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><message><body>&c;</body></message>',
    '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]><message><body>&x;</body></message>',
    "<message><body>unclosed</message>",
    "<message><__proto__><body>p</body></__proto__></message>",
    "<message><body>a</body><body>b</body></message>",
    "<message/>",
  ),
  fc.integer({ min: 100, max: 5000 }).map((d) => `<message>${"<body>".repeat(d)}x${"</body>".repeat(d)}</message>`),
);
const bytesBody = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  fc.constant(Buffer.from([0x7b, 0x22, 0x62, 0x6f, 0x64, 0x79, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])), // {"body":"<ff fe>"}
);

const segment = fc.oneof(
  fc.constantFrom(
    "messages",
    "Messages",
    "messages.json",
    "reply",
    "..",
    "%2e%2e",
    "%00",
    "%ff",
    "__proto__",
    "constructor",
    "",
  ),
  fc.constant("<id>"),
  fc.stringMatching(/^[A-Za-z0-9._~%-]{1,12}$/),
);
const path = fc
  .oneof(
    { weight: 3, arbitrary: fc.constantFrom("/messages", "/messages/<id>", "/messages/<id>/reply", "/") },
    { weight: 2, arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join("/")}`) },
  )
  .chain((p) =>
    fc
      .tuple(fc.constant(p), fc.constantFrom("", "", "?body=seed", "?body=%ff", "?body=a&body=b", "?__proto__=1", "?x"))
      .map(([a, q]) => a + q),
  );

const anyRequest = fc.record({
  method: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom("GET", "POST", "PUT", "DELETE", "HEAD") },
    { weight: 1, arbitrary: fc.constantFrom("PATCH", "OPTIONS", "TRACE", "PROPFIND") },
  ),
  path,
  // Mostly what a client of this interface sends, so that many cases pass the door and reach the parsers.
  contentType: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("application/json", "application/xml") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        "text/xml",
        "text/plain",
        "application/json; charset=latin1",
        "multipart/form-data",
        "application/x-www-form-urlencoded",
      ),
    },
  ),
  accept: fc.constantFrom(
    undefined,
    "application/json",
    "application/xml",
    "*/*",
    "image/png",
    "application/json;q=0, application/xml",
    "garbage/",
  ),
  key: fc.oneof(
    { weight: 8, arbitrary: fc.constant("right") },
    { weight: 1, arbitrary: fc.constantFrom("none", "wrong") },
  ),
  body: fc.oneof(
    fc.constant(undefined),
    jsonBody.map((s) => Buffer.from(s)),
    xmlBody.map((s) => Buffer.from(s)),
    bytesBody,
  ),
});

/** Writes as a client of this interface makes them, with generated bodies: these reach the store when valid. */
const writeRequest = fc.record({
  method: fc.constantFrom("POST", "PUT"),
  path: fc.constantFrom("/messages", "/messages/<id>"),
  contentType: fc.constantFrom("application/json", "application/xml"),
  accept: fc.constantFrom("application/json", "application/xml"),
  key: fc.constant("right"),
  body: fc.oneof(
    fc.string({ maxLength: 30 }).map((b) => Buffer.from(JSON.stringify({ body: b }))),
    jsonBody.map((b) => Buffer.from(b)),
    xmlBody.map((b) => Buffer.from(b)),
  ),
});
const request = fc.oneof({ weight: 3, arbitrary: anyRequest }, { weight: 1, arbitrary: writeRequest });

describe("the reference HTTP interface under fuzzing", () => {
  it(
    `never answers a generated request with a 5xx, and a refused one changes no stored message (${RUNS} cases)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers: Record<string, string> = {};
          if (r.contentType !== undefined) headers["content-type"] = r.contentType;
          if (r.accept !== undefined) headers["accept"] = r.accept;
          if (r.key !== "none") headers["x-api-key"] = r.key === "right" ? KEY : `${KEY}x`;
          const before = await snapshot();
          const target = r.path.replace(/<id>/g, seededId);
          const res = await send(r.method, target, headers, r.body);
          tally.cases++;
          tally.statuses.set(res.status, (tally.statuses.get(res.status) ?? 0) + 1);
          if (res.status >= 500)
            throw new Error(`${r.method} ${target} answered ${res.status}: ${res.body.slice(0, 200)}`);
          if (res.status >= 400) {
            tally.refused++;
            const after = await snapshot();
            if (after !== before)
              throw new Error(`${r.method} ${target} was refused with ${res.status} but changed the stored messages`);
          } else {
            tally.accepted++;
          }
          // Nothing the client sent reaches Object.prototype.
          expect(({} as Record<string, unknown>)["body"]).toBeUndefined();
          expect(({} as Record<string, unknown>)["admin"]).toBeUndefined();
        }),
        { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 20261123), endOnFailure: true },
      );
      const alive = await send("GET", "/messages", { "x-api-key": KEY, accept: "application/json" }, undefined);
      expect(alive.status).toBe(200);
    },
    Math.max(60_000, RUNS * 20),
  );
});
