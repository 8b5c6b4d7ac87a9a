// Unit tests of http.read.after-create (suites/http/read-after-create.ts), in memory: the reference's routes pass, a
// hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpHandler } from "../../../harness/targets/http-inject.js";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { JSON_TYPE } from "../../../suites/http/_internals/representation.js";
import { readAfterCreate } from "../../../suites/http/read-after-create.js";
import { defects, rewriteBody, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.read.after-create", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(readAfterCreate, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a message's GET that answers 404, saying why", async () => {
    const outcome = await verdictOf(readAfterCreate, defects.readLoses(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^GET \/messages\/[^ ]+ \(from the Location header\) answered 404 Not Found, not 200/,
    );
  });
});

describe("http.read.after-create: bodies of characters beyond U+FFFF", () => {
  it("fails a server that writes its reply in slices and cuts a surrogate pair in two, saying where", async () => {
    const outcome = await verdictOf(readAfterCreate, defects.surrogatesSplit(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^GET \/messages\/[^ ]+ with Accept: application\/(json|xml) shows another body than the \d+ code points sent: from code point \d+, U\+FFFD where U\+1F600 was sent/,
    );
  });

  it("passes a server that writes them as escapes: \\uD83D\\uDE00 in JSON, character references in XML", async () => {
    const escaped = rewriteBody(reference.handler, (text, type) => [
      type.includes("xml")
        ? text.replace(/[\u{10000}-\u{10FFFF}]/gu, (c) => `&#x${(c.codePointAt(0) ?? 0).toString(16)};`)
        : text.replace(/[\u{10000}-\u{10FFFF}]/gu, (c) => unicodeEscapes(c)),
    ]);
    const outcome = await verdictOf(readAfterCreate, escaped);
    expect(outcome.status, outcome.message).toBe("pass");
    expect(outcome.message).toMatch(/3 of 3 bodies of 13200 × U\+1F600 \(each followed by "a"\) read back whole/);
  });

  it("fails XML that writes the pair as two character references to surrogates (no Char, XML 1.0 §4.1)", async () => {
    const surrogateRefs = rewriteBody(reference.handler, (text, type) => [
      type.includes("xml")
        ? text.replace(/[\u{10000}-\u{10FFFF}]/gu, (c) =>
            [c.charCodeAt(0), c.charCodeAt(1)].map((u) => `&#x${u.toString(16)};`).join(""),
          )
        : text,
    ]);
    const outcome = await verdictOf(readAfterCreate, surrogateRefs);
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /with Accept: application\/xml answered XML that is not well formed: it holds &#xd83d;/,
    );
  });
});

/** A character as JSON's \uXXXX escapes, one for each UTF-16 unit (a surrogate pair beyond U+FFFF). */
const unicodeEscapes = (c: string): string =>
  [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join("");

describe("http.read.after-create: a body of characters JSON and XML escape (\" \\ < & > ' and a tab)", () => {
  it("fails a server that writes the body unescaped in JSON, saying so", async () => {
    const unescaped = rewriteBody(reference.handler, (text, type) => [
      type.includes("json") ? text.replace(/\\(["\\])/g, "$1").replace(/\\t/g, "\t") : text,
    ]);
    const outcome = await verdictOf(readAfterCreate, unescaped);
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^GET \/messages\/[^ ]+ with Accept: application\/json answered JSON that does not parse/,
    );
  });

  it("fails a server that writes the body unescaped in XML, saying so", async () => {
    const unescaped = rewriteBody(reference.handler, (text, type) => [
      type.includes("xml") ? text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&") : text,
    ]);
    const outcome = await verdictOf(readAfterCreate, unescaped);
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/^GET \/messages\/[^ ]+ with Accept: application\/xml shows no body/);
  });

  it("passes other legal escapes: \\/ and \\u0009 in JSON, &quot; &apos; &#9; and &gt; in XML", async () => {
    const escaped = rewriteBody(reference.handler, (text, type) => [
      type.includes("xml")
        ? text.replace(
            /<body>([^<]*)<\/body>/g,
            (_, b: string) =>
              `<body>${b.replace(/"/g, "&quot;").replace(/'/g, "&apos;").replace(/\t/g, "&#9;").replace(/>/g, "&gt;")}</body>`,
          )
        : text.replace(/\\t/g, "\\u0009").replace(/\//g, "\\/"),
    ]);
    const outcome = await verdictOf(readAfterCreate, escaped);
    expect(outcome.status, outcome.message).toBe("pass");
    expect(outcome.message).toContain("a body of characters JSON and XML escape");
  });
});

/** The reply resource a message links to answered by `answer` instead of the reference. */
const replyAnswered =
  (h: HttpHandler, answer: (res: ServerResponse) => void): HttpHandler =>
  (req, res) =>
    req.method === "GET" && /^\/messages\/[^/]+\/reply$/.test(req.url ?? "") ? answer(res) : h(req, res);

describe("http.read.after-create: the links of the message read, followed with GET", () => {
  it("fails a linked resource answered 500 (the mutants routes.ts:546 and :549), saying which link", async () => {
    const outcome = await verdictOf(
      readAfterCreate,
      replyAnswered(reference.handler, (res) => void res.writeHead(500).end()),
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^GET \/messages\/[^/]+\/reply \(the "reply" link of \/messages\/[^ ]+\) answered 500 Internal Server Error/,
    );
  });

  it("fails a link that names GET answered 405 (the mutant routes.ts:545), saying so", async () => {
    const outcome = await verdictOf(
      readAfterCreate,
      replyAnswered(reference.handler, (res) => void res.writeHead(405, { allow: "OPTIONS" }).end()),
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/\(the "reply" link of \/messages\/[^ ]+, which names GET\) answered 405/);
  });

  it("fails a 200 with an empty body under application/json (the mutants routes.ts:551)", async () => {
    const outcome = await verdictOf(
      readAfterCreate,
      replyAnswered(reference.handler, (res) => void res.writeHead(200, { "content-type": JSON_TYPE }).end()),
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/answered 200 with an empty body that is no JSON \(RFC 8259 §2\)/);
  });

  it("passes a linked resource answered 404 or 406, which a link may meet", async () => {
    for (const status of [404, 406]) {
      const outcome = await verdictOf(
        readAfterCreate,
        replyAnswered(reference.handler, (res) => void res.writeHead(status).end()),
      );
      expect(outcome.status, outcome.message).toBe("pass");
      expect(outcome.message).toMatch(/\d of \d links of the message followed with GET, answered/);
    }
  });
});
