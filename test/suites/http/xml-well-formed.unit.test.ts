// Unit tests of http.xml.well-formed (suites/http/xml-well-formed.ts), in memory: the reference passes (it refuses
// both requests); a small message server passes with each legal answer to a body XML cannot carry (406 for XML,
// JSON whatever Accept asks) and fails with each defect (the character raw, as a reference, replaced by U+FFFD,
// XML that is not UTF-8 taken, and a body sent as text, CDATA and a reference read in pieces), saying why. No socket
// is opened (the unit project refuses one).
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpHandler } from "../../../harness/targets/http-inject.js";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { xmlWellFormed } from "../../../suites/http/xml-well-formed.js";
import { verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => {
  reference = await createReferenceHttpHandler();
});
afterAll(() => reference.close());

/**
 * How the small server answers a read as XML of a body XML cannot carry; "lenient" also takes bytes that are not UTF-8.
 */
type Mode = "406" | "json" | "raw" | "reference" | "fffd" | "lenient" | "pieces";

const NOT_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const HAS_NOT_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const XML_TEXT: Record<Mode, (body: string) => string> = {
  "406": (b) => b,
  json: (b) => b,
  raw: (b) => b,
  lenient: (b) => b.replace(NOT_CHAR, "\uFFFD"),
  reference: (b) => b.replace(NOT_CHAR, (c) => `&#x${(c.codePointAt(0) ?? 0).toString(16)};`),
  fffd: (b) => b.replace(NOT_CHAR, "\uFFFD"),
  pieces: (b) => b,
};

const PREDEFINED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/**
 * The text of an XML message's <body>, as XML reads it: CDATA sections and references joined to the text around
 * them; "pieces" reads only the text outside CDATA, its references left as written.
 */
function xmlBody(text: string, mode: Mode): string {
  const inner = /<body>([\s\S]*?)<\/body>/.exec(text)?.[1] ?? "";
  if (mode === "pieces") return inner.replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, "");
  return inner.replace(
    /<!\[CDATA\[([\s\S]*?)\]\]>|&#x([0-9a-fA-F]+);|&#(\d+);|&(amp|lt|gt|quot|apos);/g,
    (_m, cdata?: string, hex?: string, dec?: string, named?: string) =>
      cdata ??
      (hex !== undefined ? String.fromCodePoint(parseInt(hex, 16)) : undefined) ??
      (dec !== undefined ? String.fromCodePoint(Number(dec)) : undefined) ??
      PREDEFINED[named ?? ""] ??
      "",
  );
}

/** A message collection at /messages: JSON or XML in, JSON or XML out, and the mode's answer to XML it cannot carry. */
function messageServer(mode: Mode): HttpHandler {
  const store = new Map<string, string>();
  const send = (res: ServerResponse, status: number, type: string, text: string) => {
    res.writeHead(status, { "content-type": `${type}; charset=utf-8` });
    res.end(text);
  };
  const answer = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const item = /^\/messages\/(\d+)$/.exec(req.url ?? "")?.[1];
    const xml = /application\/xml/.test(req.headers.accept ?? "") && mode !== "json";
    if (req.method === "POST" && req.url === "/messages") {
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: mode !== "lenient" }).decode(raw);
      } catch {
        return send(res, 400, "application/json", '{"error":"not UTF-8"}');
      }
      const body = /xml/.test(req.headers["content-type"] ?? "")
        ? xmlBody(text, mode)
        : (JSON.parse(text) as { body: string }).body;
      const id = String(store.size + 1);
      store.set(id, body);
      res.setHeader("location", `/messages/${id}`);
      return send(res, 201, "application/json", JSON.stringify({ id, body }));
    }
    if (req.method === "GET" && req.url === "/messages")
      return send(
        res,
        200,
        "application/json",
        JSON.stringify({ messages: [...store].map(([id, body]) => ({ id, body })) }),
      );
    const body = item === undefined ? undefined : store.get(item);
    if (body === undefined) return send(res, 404, "application/json", "{}");
    if (req.method === "DELETE") {
      store.delete(item as string);
      return send(res, 204, "application/json", "");
    }
    if (!xml) return send(res, 200, "application/json", JSON.stringify({ id: item, body }));
    if ((mode === "406" || mode === "pieces") && HAS_NOT_CHAR.test(body))
      return send(res, 406, "application/json", "{}");
    return send(
      res,
      200,
      "application/xml",
      `<?xml version="1.0" encoding="UTF-8"?><message><id>${item}</id><body>${XML_TEXT[mode](body)}</body></message>`,
    );
  };
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => answer(req, res, Buffer.concat(chunks)));
  };
}

describe("http.xml.well-formed", () => {
  it("passes the reference's routes, which refuse XML that is not UTF-8 and a body XML cannot carry", async () => {
    const outcome = await verdictOf(xmlWellFormed, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    expect(outcome.message).toMatch(
      /POST \/messages with XML holding bytes C3 28 FF, not UTF-8 → 400; POST \/messages of a body holding U\+0001 and U\+FFFF → 400 \(refused\)/,
    );
  });

  it.each([
    ["406", /read as XML → 406/],
    ["json", /read as XML → JSON \(Accept disregarded\)/],
  ] as const)("passes a server that stores the body and answers a read as XML with %s", async (mode, shown) => {
    const outcome = await verdictOf(xmlWellFormed, messageServer(mode));
    expect(outcome.status, outcome.message).toBe("pass");
    expect(outcome.message).toMatch(shown);
  });

  it.each([
    ["raw", /answered 200 with XML that is not well formed: it holds U\+0001 at character \d+, outside XML's Char/],
    ["reference", /not well formed: it holds &#x1;, a reference to no Char/],
    ["fffd", /answered 200 with XML showing another body than the one stored/],
    [
      "pieces",
      /with XML whose <body> is text, a CDATA section and a character reference answered 201, and GET \/messages\/\d+ shows a body of \d+ characters where \d+ were sent/,
    ],
    [
      "lenient",
      /POST \/messages with XML holding bytes C3 28 FF, not UTF-8 answered 201 Created: a document not in its encoding is a fatal error/,
    ],
  ] as const)("fails a server that writes XML %s, saying why", async (mode, why) => {
    const outcome = await verdictOf(xmlWellFormed, messageServer(mode));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(why);
  });
});
