// The reference HTTP server over real loopback sockets: every route, status, negotiation, limit and refusal.
import { STATUS_CODES } from "node:http";
import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import { connect } from "node:net";
import { XMLParser } from "fast-xml-parser";
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { helloReply } from "../../reference-server/hello.js";
import { type HttpServerHandle, startHttpServer } from "../../reference-server/http/server.js";
import { createMemoryStore, type MessageStore } from "../../reference-server/http/store.js";
import { type RawRequest, type RawResponse, rawRequest } from "../helpers/http-server.js";

const JSON_TYPE = "application/json";
const XML_TYPE = "application/xml";
const ID_PATH = /^\/messages\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface LinkJson {
  rel: string;
  href: string;
  method: string;
}

interface MessageJson {
  id: string;
  body: string;
  links: LinkJson[];
}

// Responses seen during one test, so that afterEach can hold every one of them to the rules that apply to all.
let seen: Array<{ request: RawRequest; response: RawResponse }> = [];

async function send(server: HttpServerHandle, request: RawRequest): Promise<RawResponse> {
  const response = await rawRequest(server.url, request);
  seen.push({ request, response });
  return response;
}

// htmlEntities: the parser decodes character references (&#13;) only with it.
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  trimValues: false,
  htmlEntities: true,
  isArray: (name) => name === "link" || name === "message",
});

function linkOf(links: readonly LinkJson[], rel: string, method = "GET"): LinkJson | undefined {
  return links.find((l) => l.rel === rel && l.method === method);
}

afterEach(() => {
  const all = seen;
  seen = [];
  for (const { request, response } of all) {
    const what = `${request.method ?? "GET"} ${request.path} → ${response.status}`;
    // Part 4.2 level 2: the exact status text; part 7: a client's mistake is never a 5xx.
    expect(response.statusText, what).toBe(STATUS_CODES[response.status]);
    expect(response.status, what).toBeLessThan(500);
    // Part 1 rule 2: no client context, so nothing to keep in a cookie.
    expect(response.headers["set-cookie"], what).toBeUndefined();
    if (response.body.length === 0) continue;
    // Level 3: every representation, errors included, carries links on.
    const type = String(response.headers["content-type"]);
    if (type.startsWith(JSON_TYPE)) {
      const parsed = JSON.parse(response.text) as { links?: unknown };
      expect(Array.isArray(parsed.links) && parsed.links.length > 0, `${what}: links`).toBe(true);
      for (const link of parsed.links as LinkJson[]) {
        expect(Object.keys(link).sort(), what).toEqual(["href", "method", "rel"]);
        expect(link.href.startsWith("/"), what).toBe(true);
      }
    } else {
      expect(type, what).toMatch(/^application\/xml; charset=utf-8$/);
      expect(response.text, `${what}: links`).toMatch(/<links><link rel="[^"]+" href="\/[^"]*" method="[A-Z]+"\/>/);
    }
    expect(response.headers.vary, what).toBe("Accept");
  }
});

describe("reference HTTP server", () => {
  let server: HttpServerHandle;

  beforeAll(async () => {
    server = await startHttpServer({ port: 0, log: "silent" });
  });
  afterAll(async () => {
    await server.close();
  });

  const req = (request: RawRequest) => send(server, request);

  async function create(body: string): Promise<{ response: RawResponse; message: MessageJson }> {
    const response = await req({
      method: "POST",
      path: "/messages",
      headers: { "content-type": JSON_TYPE },
      body: JSON.stringify({ body }),
    });
    expect(response.status).toBe(201);
    return { response, message: JSON.parse(response.text) as MessageJson };
  }

  async function listing(): Promise<string> {
    const response = await req({ path: "/messages" });
    expect(response.status).toBe(200);
    return response.text;
  }

  it("binds loopback on a free port and reports its URL", () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
  });

  describe("root", () => {
    it("links to the collection in the body and the Link header, without a key", async () => {
      const response = await req({ path: "/" });
      expect(response.status).toBe(200);
      expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
      const root = JSON.parse(response.text) as { links: LinkJson[] };
      expect(linkOf(root.links, "messages")?.href).toBe("/messages");
      expect(linkOf(root.links, "create", "POST")?.href).toBe("/messages");
      expect(response.headers.link).toContain('</messages>; rel="messages"');
    });

    it("answers in XML with the same links", async () => {
      const response = await req({ path: "/", headers: { accept: XML_TYPE } });
      expect(response.status).toBe(200);
      const doc = xml.parse(response.text) as { root: { links: { link: LinkJson[] } } };
      expect(doc.root.links.link).toContainEqual({ rel: "messages", href: "/messages", method: "GET" });
    });
  });

  describe("collection /messages", () => {
    it("POST creates: 201 Created, Location, the created representation with its links", async () => {
      const { response, message } = await create("first");
      expect(response.statusText).toBe("Created");
      const location = String(response.headers.location);
      expect(location).toMatch(ID_PATH);
      expect(response.headers["content-location"]).toBe(location);
      expect(message.body).toBe("first");
      expect(location).toBe(`/messages/${message.id}`);
      expect(linkOf(message.links, "self")?.href).toBe(location);
      expect(linkOf(message.links, "update", "PUT")?.href).toBe(location);
      expect(linkOf(message.links, "delete", "DELETE")?.href).toBe(location);
      expect(linkOf(message.links, "reply")?.href).toBe(`${location}/reply`);
      expect(linkOf(message.links, "collection")?.href).toBe("/messages");

      const read = await req({ path: location });
      expect(read.status).toBe(200);
      expect(JSON.parse(read.text)).toEqual(message);
      expect(read.headers.link).toContain(`<${location}/reply>; rel="reply"`);
    });

    it("two creations get two ids", async () => {
      const a = await create("same");
      const b = await create("same");
      expect(a.message.id).not.toBe(b.message.id);
    });

    it("a missing body member is proto3's default, the empty string", async () => {
      const response = await req({
        method: "POST",
        path: "/messages",
        headers: { "content-type": JSON_TYPE },
        body: "{}",
      });
      expect(response.status).toBe(201);
      expect((JSON.parse(response.text) as MessageJson).body).toBe("");
    });

    it("accepts what it sent: a representation with its read-only id and links posted back", async () => {
      const { message } = await create("echo");
      const response = await req({
        method: "POST",
        path: "/messages",
        headers: { "content-type": JSON_TYPE },
        body: JSON.stringify(message),
      });
      expect(response.status).toBe(201);
      const copy = JSON.parse(response.text) as MessageJson;
      expect(copy.body).toBe("echo");
      expect(copy.id).not.toBe(message.id);
    });

    it("GET lists every message with links; a query filter changes the result", async () => {
      const marker = `filter-${Date.now()}`;
      const { message } = await create(marker);
      await create(`${marker}-other`);

      const all = JSON.parse(await listing()) as { messages: MessageJson[]; links: LinkJson[] };
      expect(all.messages.length).toBeGreaterThanOrEqual(2);
      expect(all.messages.map((m) => m.id)).toContain(message.id);
      for (const m of all.messages) expect(linkOf(m.links, "self")?.href).toBe(`/messages/${m.id}`);
      expect(linkOf(all.links, "self")?.href).toBe("/messages");
      expect(linkOf(all.links, "create", "POST")?.href).toBe("/messages");

      const filtered = await req({ path: `/messages?body=${encodeURIComponent(marker)}` });
      expect(filtered.status).toBe(200);
      const some = JSON.parse(filtered.text) as { messages: MessageJson[]; links: LinkJson[] };
      expect(some.messages).toEqual([message]);
      expect(linkOf(some.links, "self")?.href).toBe(`/messages?body=${encodeURIComponent(marker)}`);

      const none = JSON.parse((await req({ path: "/messages?body=nothing-has-this-body" })).text) as {
        messages: unknown[];
      };
      expect(none.messages).toEqual([]);
    });

    it("an unknown or repeated filter is a 400, not a silently unfiltered list", async () => {
      for (const path of ["/messages?bdy=x", "/messages?body=a&body=b", "/messages?__proto__=x"]) {
        const response = await req({ path });
        expect(response.status, path).toBe(400);
      }
      expect((await req({ path: "/messages/anything?body=x" })).status).toBe(400);
      expect((await req({ path: "/?x=1" })).status).toBe(400);
    });

    it("lists in XML", async () => {
      const { message } = await create("in xml");
      const response = await req({
        path: `/messages?body=${encodeURIComponent("in xml")}`,
        headers: { accept: XML_TYPE },
      });
      expect(response.status).toBe(200);
      const doc = xml.parse(response.text) as {
        messages: { message: Array<{ id: string; body: string }>; links: { link: LinkJson[] } };
      };
      expect(doc.messages.message.map((m) => m.id)).toContain(message.id);
      expect(doc.messages.links.link).toContainEqual({ rel: "create", href: "/messages", method: "POST" });
    });
  });

  describe("document /messages/{id}", () => {
    it("PUT replaces the body, and GET shows it", async () => {
      const { message } = await create("before");
      const response = await req({
        method: "PUT",
        path: `/messages/${message.id}`,
        headers: { "content-type": JSON_TYPE },
        body: JSON.stringify({ body: "after" }),
      });
      expect(response.status).toBe(200);
      expect(response.statusText).toBe("OK");
      expect((JSON.parse(response.text) as MessageJson).body).toBe("after");
      expect((JSON.parse((await req({ path: `/messages/${message.id}` })).text) as MessageJson).body).toBe("after");
    });

    it("PUT takes the representation GET gave, and refuses a different id", async () => {
      const { message } = await create("round trip");
      const ok = await req({
        method: "PUT",
        path: `/messages/${message.id}`,
        headers: { "content-type": JSON_TYPE },
        body: JSON.stringify({ ...message, body: "changed" }),
      });
      expect(ok.status).toBe(200);
      const other = await req({
        method: "PUT",
        path: `/messages/${message.id}`,
        headers: { "content-type": JSON_TYPE },
        body: JSON.stringify({ id: "another", body: "x" }),
      });
      expect(other.status).toBe(400);
      expect((JSON.parse((await req({ path: `/messages/${message.id}` })).text) as MessageJson).body).toBe("changed");
    });

    it("PUT to an unknown id is 404: the collection is server-managed, PUT never creates", async () => {
      const before = await listing();
      const response = await req({
        method: "PUT",
        path: "/messages/00000000-0000-4000-8000-000000000000",
        headers: { "content-type": JSON_TYPE },
        body: '{"body":"x"}',
      });
      expect(response.status).toBe(404);
      expect(await listing()).toBe(before);
    });

    it("DELETE answers 204 with no body; then the message, its reply and a second DELETE are 404", async () => {
      const { message } = await create("doomed");
      const path = `/messages/${message.id}`;
      const response = await req({ method: "DELETE", path });
      expect(response.status).toBe(204);
      expect(response.statusText).toBe("No Content");
      expect(response.body.length).toBe(0);
      expect(response.headers.link).toBe('</messages>; rel="collection"');
      expect((await req({ path })).status).toBe(404);
      expect((await req({ path: `${path}/reply` })).status).toBe(404);
      expect((await req({ method: "DELETE", path })).status).toBe(404);
      expect(await listing()).not.toContain(message.id);
    });

    it("an unknown id is 404 with an error representation in the negotiated format", async () => {
      const json = await req({ path: "/messages/no-such-id" });
      expect(json.status).toBe(404);
      expect(json.statusText).toBe("Not Found");
      const error = JSON.parse(json.text) as { status: number; reason: string; message: string };
      expect(error).toMatchObject({ status: 404, reason: "Not Found" });
      expect(error.message).toContain("no-such-id");

      const asXml = await req({ path: "/messages/no-such-id", headers: { accept: XML_TYPE } });
      expect(asXml.status).toBe(404);
      const doc = xml.parse(asXml.text) as { error: { status: string; reason: string } };
      expect(doc.error).toMatchObject({ status: "404", reason: "Not Found" });
    });
  });

  describe("related document /messages/{id}/reply", () => {
    it("is the Hello reply to the message, linked back to it", async () => {
      const { message } = await create("world");
      const response = await req({ path: `/messages/${message.id}/reply` });
      expect(response.status).toBe(200);
      const reply = JSON.parse(response.text) as { id?: string; body: string; links: LinkJson[] };
      expect(reply.body).toBe(helloReply("world"));
      expect(reply.id).toBeUndefined();
      expect(linkOf(reply.links, "up")?.href).toBe(`/messages/${message.id}`);
      expect(linkOf(reply.links, "self")?.href).toBe(`/messages/${message.id}/reply`);

      const asXml = await req({ path: `/messages/${message.id}/reply`, headers: { accept: XML_TYPE } });
      expect((xml.parse(asXml.text) as { message: Array<{ body: string }> }).message[0]?.body).toBe(
        helloReply("world"),
      );
    });

    it("follows the message when it is replaced", async () => {
      const { message } = await create("");
      expect((JSON.parse((await req({ path: `/messages/${message.id}/reply` })).text) as MessageJson).body).toBe(
        helloReply(""),
      );
      await req({
        method: "PUT",
        path: `/messages/${message.id}`,
        headers: { "content-type": JSON_TYPE },
        body: '{"body":"again"}',
      });
      expect((JSON.parse((await req({ path: `/messages/${message.id}/reply` })).text) as MessageJson).body).toBe(
        helloReply("again"),
      );
    });
  });

  describe("HEAD", () => {
    it("is GET without the body: the same status and headers on every resource, found or not", async () => {
      const { message } = await create("head");
      const paths = [
        "/",
        "/messages",
        `/messages/${message.id}`,
        `/messages/${message.id}/reply`,
        "/messages/missing",
        "/nowhere",
      ];
      for (const path of paths) {
        for (const accept of [JSON_TYPE, XML_TYPE]) {
          const get = await req({ path, headers: { accept } });
          const head = await req({ method: "HEAD", path, headers: { accept } });
          expect(head.status, path).toBe(get.status);
          expect(head.body.length, path).toBe(0);
          const { date: _g, ...getHeaders } = get.headers;
          const { date: _h, ...headHeaders } = head.headers;
          expect(headHeaders, path).toEqual(getHeaders);
          expect(Number(head.headers["content-length"]), path).toBe(get.body.length);
        }
      }
    });
  });

  describe("content negotiation", () => {
    const cases: Array<[accept: string | undefined, expected: string | 406]> = [
      [undefined, JSON_TYPE],
      ["", JSON_TYPE],
      [JSON_TYPE, JSON_TYPE],
      [XML_TYPE, XML_TYPE],
      ["APPLICATION/XML", XML_TYPE],
      ["*/*", JSON_TYPE],
      ["application/*", JSON_TYPE],
      ["text/html, */*;q=0.1", JSON_TYPE],
      ["application/xml, application/json;q=0.9", XML_TYPE],
      ["application/json;q=0.1, application/xml;q=0.2", XML_TYPE],
      ["application/json;q=0.5, application/xml;q=0.5", JSON_TYPE],
      ["application/json;q=0, */*", XML_TYPE],
      ["*/*;q=0.1, application/xml;q=0.8", XML_TYPE],
      ["application/xml;charset=utf-8", XML_TYPE],
      ['application/xml;charset="UTF-8";q=0.9, application/json;q=0.8', XML_TYPE],
      ["application/xml, */*;q=0", XML_TYPE],
      ["text/html", 406],
      ["text/xml", 406],
      ["application/json;q=0, application/xml;q=0", 406],
      ["*/*;q=0", 406],
      ["application/json;charset=iso-8859-1", 406],
      ["application/json;version=2", 406],
      ["application/json;q=2", 406],
      ["not a media type", 406],
    ];
    it.each(cases)("Accept %j → %s", async (accept, expected) => {
      const response = await req({ path: "/messages", headers: accept === undefined ? {} : { accept } });
      if (expected === 406) {
        expect(response.status).toBe(406);
        expect(response.statusText).toBe("Not Acceptable");
        // No representation the client accepts exists, so the error comes in the default, JSON.
        expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
        expect((JSON.parse(response.text) as { message: string }).message).toContain(XML_TYPE);
      } else {
        expect(response.status).toBe(200);
        expect(response.headers["content-type"]).toBe(`${expected}; charset=utf-8`);
      }
    });

    it("a 406 comes before anything is stored", async () => {
      const before = await listing();
      const response = await req({
        method: "POST",
        path: "/messages",
        headers: { "content-type": JSON_TYPE, accept: "text/html" },
        body: '{"body":"x"}',
      });
      expect(response.status).toBe(406);
      expect(await listing()).toBe(before);
    });

    it("a body posted in one format is read back in the other, every character intact", async () => {
      const body = `a & <b> "q" 'a' ]]> \r\n\t ünï 😀 &amp;`;
      const posted = await req({
        method: "POST",
        path: "/messages",
        headers: { "content-type": XML_TYPE, accept: XML_TYPE },
        body:
          `<?xml ` +
          `version="1.0"?><message><body>${body.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/\r/g, "&#13;")}</body></message>`,
      });
      expect(posted.status).toBe(201);
      const location = String(posted.headers.location);
      expect((xml.parse(posted.text) as { message: Array<{ body: string }> }).message[0]?.body).toBe(body);
      expect((JSON.parse((await req({ path: location })).text) as MessageJson).body).toBe(body);

      const viaJson = await create(body);
      const asXml = await req({ path: String(viaJson.response.headers.location), headers: { accept: XML_TYPE } });
      expect((xml.parse(asXml.text) as { message: Array<{ body: string }> }).message[0]?.body).toBe(body);
    });

    it("reads XML sent as text/xml, with whitespace between elements, a CDATA body and comments", async () => {
      const response = await req({
        method: "POST",
        path: "/messages",
        headers: { "content-type": "text/xml; charset=utf-8" },
        body: "<message>\n  <!-- hi -->\n  <body><![CDATA[<raw & text>]]> tail</body>\n</message>\n",
      });
      expect(response.status).toBe(201);
      expect((JSON.parse(response.text) as MessageJson).body).toBe("<raw & text> tail");
    });

    it("reads XML with a declaration, comments, processing instructions and white space beside the root", async () => {
      for (const body of [
        '<?xml version="1.0"?>\n<message><body>a</body></message>\n',
        '<?xml version="1.0" encoding="UTF-8"?>\r\n<!-- before -->\n<?app x="<?"?>\t<message><body>b</body></message>',
        "<message><body>c</body></message>\n<!-- after: <![CDATA[ & ]]> -->\n<?app ?>\n\n",
        '<message a=">"><!-- <message> --><body>d</body></message><!---->',
      ]) {
        const response = await req({ method: "POST", path: "/messages", headers: { "content-type": XML_TYPE }, body });
        expect(response.status, body).toBe(201);
        expect((JSON.parse(response.text) as MessageJson).body).toBe(/<body>(.)</.exec(body)?.[1]);
      }
    });
  });

  describe("request bodies", () => {
    const post = (contentType: string | undefined, body: string | Buffer, accept = JSON_TYPE) =>
      req({
        method: "POST",
        path: "/messages",
        headers: { accept, ...(contentType !== undefined && { "content-type": contentType }) },
        body,
      });

    it("an unsupported or missing Content-Type is 415, in the negotiated format, and nothing is stored", async () => {
      const { message } = await create("target");
      const before = await listing();
      for (const type of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=iso-8859-1",
        "application/jsonx",
        undefined,
      ]) {
        const response = await post(type, '{"body":"x"}');
        expect(response.status, String(type)).toBe(415);
        expect(response.statusText).toBe("Unsupported Media Type");
        expect((JSON.parse(response.text) as { status: number }).status).toBe(415);
      }
      const asXml = await post("text/plain", "x", XML_TYPE);
      expect(asXml.status).toBe(415);
      expect((xml.parse(asXml.text) as { error: { status: string } }).error.status).toBe("415");
      const put = await req({
        method: "PUT",
        path: `/messages/${message.id}`,
        headers: { "content-type": "text/plain" },
        body: "y",
      });
      expect(put.status).toBe(415);
      expect(await listing()).toBe(before);
    });

    const badJson: Array<[string, string | Buffer]> = [
      ["truncated", '{"body":'],
      ["not JSON", "body=x"],
      ["empty", ""],
      ["whitespace", "  \n"],
      ["an array", '[{"body":"x"}]'],
      ["a string", '"x"'],
      ["null", "null"],
      ["a number body", '{"body":5}'],
      ["a null body", '{"body":null}'],
      ["an object body", '{"body":{"text":"x"}}'],
      ["a mistyped member", '{"bdy":"x"}'],
      ["a non-string id", '{"body":"x","id":7}'],
      ["__proto__", '{"__proto__":{"polluted":"yes"},"body":"x"}'],
      ["constructor", '{"constructor":{"prototype":{"polluted":"yes"}},"body":"x"}'],
      ["invalid UTF-8", Buffer.from([0x7b, 0x22, 0x62, 0x6f, 0x64, 0x79, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])],
      ["a lone surrogate", '{"body":"\\ud800"}'],
      ["a control character XML cannot carry", '{"body":"\\u0001"}'],
    ];
    it.each(badJson)("malformed JSON (%s) is 400 with a JSON error, and nothing is stored", async (_name, body) => {
      const before = await listing();
      const response = await post(JSON_TYPE, body);
      expect(response.status).toBe(400);
      expect(response.statusText).toBe("Bad Request");
      expect(JSON.parse(response.text)).toMatchObject({ status: 400, reason: "Bad Request" });
      expect(await listing()).toBe(before);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    const badXml: Array<[string, string]> = [
      ["unclosed", "<message><body>x</body>"],
      ["not XML", "body=x"],
      ["another root", "<note><body>x</body></note>"],
      ["two roots", "<message><body>x</body></message><message/>"],
      // Beside the root only comments, processing instructions and white space (XML 1.0 §2.1, §2.8).
      ["a CDATA section before the root", "<![CDATA[x]]><message><body>y</body></message>"],
      ["a CDATA section after the root", "<message><body>y</body></message><![CDATA[x]]>"],
      ["an empty CDATA section after the root", "<message><body>y</body></message>\n<![CDATA[]]>"],
      ["a character reference after the root", "<message><body>y</body></message>&#10;"],
      ["an entity reference after the root", "<message><body>y</body></message>\n&amp;<!-- c -->"],
      ["text after the root", "<message><body>y</body></message>x"],
      ["a character reference before the root", "&#32;<message><body>y</body></message>"],
      ["a bare ampersand", "<message><body>a & b</body></message>"],
      ["an undeclared entity", "<message><body>&nbsp;</body></message>"],
      ["a reference to a forbidden character", "<message><body>&#1;</body></message>"],
      ["markup in the body", "<message><body><b>x</b></body></message>"],
      ["two bodies", "<message><body>1</body><body>2</body></message>"],
      ["text in the message", "<message>x<body>y</body></message>"],
      ["an unknown element", "<message><bdy>x</bdy></message>"],
      ["__proto__", "<message><__proto__><polluted>yes</polluted></__proto__><body>x</body></message>"],
      ["constructor", "<message><constructor><prototype><polluted>yes</polluted></prototype></constructor></message>"],
    ];
    it.each(badXml)("malformed XML (%s) is 400 with an XML error, and nothing is stored", async (_name, body) => {
      const before = await listing();
      const response = await post(XML_TYPE, body, XML_TYPE);
      expect(response.status).toBe(400);
      expect((xml.parse(response.text) as { error: { status: string; reason: string } }).error).toMatchObject({
        status: "400",
        reason: "Bad Request",
      });
      expect(await listing()).toBe(before);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it("refuses XML entity declarations: no external entity is read, no entity expands", async () => {
      const before = await listing();
      const xxe =
        `<?xml version="1.0"?><!DOCTYPE message [<!ENTITY xxe SYSTEM ` +
        `"file:///etc/passwd">]><message><body>&xxe;</body></message>`;
      const lol = ["<!DOCTYPE lolz [", '<!ENTITY lol "lol">'];
      for (let i = 1; i <= 9; i++) lol.push(`<!ENTITY lol${i} "${`&lol${i === 1 ? "" : i - 1};`.repeat(10)}">`);
      const laughs = `${lol.join("")}]><message><body>&lol9;</body></message>`;
      for (const body of [xxe, laughs]) {
        const started = performance.now();
        const response = await post(XML_TYPE, body);
        expect(response.status).toBe(400);
        expect(response.text).not.toContain("root:");
        expect(response.text).not.toContain("lollol");
        expect((JSON.parse(response.text) as { message: string }).message).toContain("document type declaration");
        expect(performance.now() - started).toBeLessThan(2000);
      }
      expect(await listing()).toBe(before);
    });

    it("a body over 1 MiB is 413, with or without Content-Length, and nothing is stored", async () => {
      const before = await listing();
      const over = JSON.stringify({ body: "x".repeat(1024 * 1024) });
      const sized = await post(JSON_TYPE, over);
      expect(sized.status).toBe(413);
      expect(sized.statusText).toBe(STATUS_CODES[413]);
      expect((JSON.parse(sized.text) as { message: string }).message).toContain(String(1024 * 1024));
      const chunked = await req({
        method: "POST",
        path: "/messages",
        headers: { "content-type": JSON_TYPE },
        body: over,
        chunked: true,
      });
      expect(chunked.status).toBe(413);
      expect(await listing()).toBe(before);

      const under = JSON.stringify({ body: "y".repeat(1024 * 1024 - 20) });
      expect(Buffer.byteLength(under)).toBeLessThanOrEqual(1024 * 1024);
      expect((await post(JSON_TYPE, under)).status).toBe(201);
    });
  });

  describe("methods", () => {
    const cases: Array<[method: string, path: string, allow: string]> = [
      ["DELETE", "/messages", "GET, HEAD, POST, OPTIONS"],
      ["PUT", "/messages", "GET, HEAD, POST, OPTIONS"],
      ["PATCH", "/messages", "GET, HEAD, POST, OPTIONS"],
      ["PROPFIND", "/messages", "GET, HEAD, POST, OPTIONS"],
      ["TRACE", "/messages", "GET, HEAD, POST, OPTIONS"],
      ["POST", "/messages/some-id", "GET, HEAD, PUT, DELETE, OPTIONS"],
      ["PATCH", "/messages/some-id", "GET, HEAD, PUT, DELETE, OPTIONS"],
      ["POST", "/", "GET, HEAD, OPTIONS"],
      ["DELETE", "/", "GET, HEAD, OPTIONS"],
      ["PUT", "/messages/some-id/reply", "GET, HEAD, OPTIONS"],
      ["DELETE", "/messages/some-id/reply", "GET, HEAD, OPTIONS"],
    ];
    it.each(cases)("%s %s is 405 with Allow: %s", async (method, path, allow) => {
      const before = await listing();
      const response = await req({ method, path, headers: { "content-type": JSON_TYPE }, body: '{"body":"x"}' });
      expect(response.status).toBe(405);
      expect(response.statusText).toBe("Method Not Allowed");
      expect(response.headers.allow).toBe(allow);
      expect(await listing()).toBe(before);
      const options = await req({ method: "OPTIONS", path });
      expect(options.status).toBe(204);
      expect(options.headers.allow).toBe(allow);
    });

    it("every method Allow lists works on the collection", async () => {
      const allow = String((await req({ method: "OPTIONS", path: "/messages" })).headers.allow).split(", ");
      for (const method of allow) {
        const response = await req({
          method,
          path: "/messages",
          ...(method === "POST" && { headers: { "content-type": JSON_TYPE }, body: "{}" }),
        });
        expect(response.status, method).toBeLessThan(300);
      }
    });
  });

  describe("paths", () => {
    it("serves no trailing-slash, extension, upper-case or doubled-slash alias", async () => {
      const { message } = await create("aliased");
      const id = message.id;
      const aliases = [
        "/messages/",
        "/messages.json",
        "/messages.xml",
        "/Messages",
        "/MESSAGES",
        "//messages",
        `/messages/${id}/`,
        `/messages/${id}.json`,
        `/messages/${id}.xml`,
        `/messages/${id.toUpperCase()}`,
        `/Messages/${id}`,
        `/messages/${id}/reply/`,
        `/messages/${id}/Reply`,
        `/messages/${id}/reply.json`,
        "/message",
        "/nowhere",
      ];
      for (const path of aliases) {
        const response = await req({ path });
        expect(response.status, path).toBe(404);
        expect(response.statusText, path).toBe("Not Found");
      }
      expect((await req({ path: `/messages/${id}` })).status).toBe(200);
    });

    it("a request that is not HTTP gets a 400 in the same error shape", async () => {
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect({ host: "127.0.0.1", port: server.port });
        let text = "";
        socket.setTimeout(5000, () => socket.destroy(new Error("no answer within the bound")));
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
        socket.write("THIS IS NOT HTTP\r\n\r\n");
      });
      expect(raw.startsWith("HTTP/1.1 400 Bad Request\r\n")).toBe(true);
      const body = JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)) as { status: number; links: LinkJson[] };
      expect(body.status).toBe(400);
      expect(linkOf(body.links, "index")?.href).toBe("/");
    });

    it("a malformed or overlong path is a 4xx with an error representation", async () => {
      const bad = await req({ path: "/messages/%zz" });
      expect(bad.status).toBe(400);
      const long = await req({ path: `/messages/${"a".repeat(300)}` });
      expect(long.status).toBe(414);
      expect((JSON.parse(long.text) as { status: number }).status).toBe(414);
    });
  });

  describe("discovery", () => {
    it("every resource is reachable from the root by following links, each answering 200", async () => {
      const { message } = await create("crawled");
      const seenHrefs = new Set<string>();
      const queue = ["/"];
      // Bounded: the collection grows during the run, the crawl does not.
      for (let i = 0; i < 200 && queue.length > 0; i++) {
        const href = queue.shift()!;
        if (seenHrefs.has(href)) continue;
        seenHrefs.add(href);
        const response = await req({ path: href });
        expect(response.status, href).toBe(200);
        const body = JSON.parse(response.text) as { links: LinkJson[]; messages?: MessageJson[] };
        const links = [...body.links, ...(body.messages ?? []).flatMap((m) => m.links)];
        for (const link of links) if (link.method === "GET" && !seenHrefs.has(link.href)) queue.push(link.href);
      }
      expect(seenHrefs).toContain("/messages");
      expect(seenHrefs).toContain(`/messages/${message.id}`);
      expect(seenHrefs).toContain(`/messages/${message.id}/reply`);
    });
  });
});

describe("reference HTTP server with an API key", () => {
  const KEY = "k3y-only-the-tests-know";
  const lines: string[] = [];
  let server: HttpServerHandle;
  const req = (request: RawRequest) => send(server, request);

  beforeAll(async () => {
    server = await startHttpServer({ port: 0, apiKey: KEY, log: "debug", logSink: (line) => void lines.push(line) });
  });
  afterAll(async () => {
    await server.close();
    // Part of every test above: the key never reaches a log line, though each request was logged.
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.join("")).not.toContain(KEY);
  });

  it("refuses a data request without the key or with a wrong one: 401 with WWW-Authenticate and no hint", async () => {
    const refusals: RawResponse[] = [];
    for (const headers of [
      {},
      { "x-api-key": "wrong" },
      { "x-api-key": KEY.toUpperCase() },
      { "x-api-key": `${KEY}x` },
      { "x-api-key": "" },
    ]) {
      const response = await req({ path: "/messages", headers });
      expect(response.status).toBe(401);
      expect(response.statusText).toBe("Unauthorized");
      expect(response.headers["www-authenticate"]).toBe('ApiKey realm="example", header="X-API-Key"');
      expect(response.text).not.toContain(KEY);
      refusals.push(response);
    }
    // Missing and wrong keys get the same answer: it says nothing about the key.
    expect(new Set(refusals.map((r) => r.text)).size).toBe(1);
  });

  it("refuses before anything is stored, and before the path is revealed", async () => {
    const post = await req({
      method: "POST",
      path: "/messages",
      headers: { "content-type": JSON_TYPE },
      body: '{"body":"sneaky"}',
    });
    expect(post.status).toBe(401);
    expect((await req({ path: "/nowhere" })).status).toBe(401);
    expect((await req({ method: "PATCH", path: "/messages" })).status).toBe(401);
    const list = await req({ path: "/messages", headers: { "x-api-key": KEY } });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain("sneaky");
  });

  it("serves every data request that carries the key", async () => {
    const headers = { "x-api-key": KEY, "content-type": JSON_TYPE };
    const created = await req({ method: "POST", path: "/messages", headers, body: '{"body":"authorized"}' });
    expect(created.status).toBe(201);
    const location = String(created.headers.location);
    expect((await req({ path: location, headers })).status).toBe(200);
    expect((await req({ path: `${location}/reply`, headers })).status).toBe(200);
    expect((await req({ method: "PUT", path: location, headers, body: '{"body":"b"}' })).status).toBe(200);
    expect((await req({ method: "DELETE", path: location, headers })).status).toBe(204);
    expect((await req({ path: "/nowhere", headers })).status).toBe(404);
  });

  it("leaves the root document open, so a client can discover the interface before it has a key", async () => {
    const response = await req({ path: "/" });
    expect(response.status).toBe(200);
    expect(response.text).toContain('"/messages"');
  });

  it("compares keys in constant time, over digests of one length whatever the key's", async () => {
    // The spy proves the server compares keys with crypto's constant-time primitive; it still compares for real.
    // Set on node:crypto's exports and synced to its named ESM exports, so the server's own import sees it, however
    // the test files share their modules (no module mock, which a worker's shared module cache would not see).
    const spy = vi.spyOn(crypto, "timingSafeEqual");
    syncBuiltinESMExports();
    onTestFinished(() => {
      spy.mockRestore();
      syncBuiltinESMExports();
    });
    await req({ path: "/messages", headers: { "x-api-key": "short" } });
    await req({ path: "/messages", headers: { "x-api-key": "a much longer key than the real one, by far" } });
    await req({ path: "/messages", headers: { "x-api-key": KEY } });
    expect(spy).toHaveBeenCalledTimes(3);
    for (const [a, b] of spy.mock.calls) {
      expect((a as Buffer).length).toBe(32);
      expect((b as Buffer).length).toBe(32);
    }
  });
});

describe("reference HTTP server options", () => {
  it("keeps data in the store it is given", async () => {
    const store: MessageStore = createMemoryStore();
    const existing = await store.create("from the store");
    const server = await startHttpServer({ port: 0, log: "silent", store });
    try {
      const response = await send(server, { path: `/messages/${existing.id}` });
      expect(response.status).toBe(200);
      expect((JSON.parse(response.text) as MessageJson).body).toBe("from the store");
      await send(server, {
        method: "POST",
        path: "/messages",
        headers: { "content-type": JSON_TYPE },
        body: '{"body":"into the store"}',
      });
      expect((await store.list({ body: "into the store" }, { limit: 10 })).messages.length).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("applies bodyLimitBytes", async () => {
    const server = await startHttpServer({ port: 0, log: "silent", bodyLimitBytes: 64 });
    try {
      const body = JSON.stringify({ body: "z".repeat(64) });
      expect(
        (await send(server, { method: "POST", path: "/messages", headers: { "content-type": JSON_TYPE }, body }))
          .status,
      ).toBe(413);
      expect(
        (
          await send(server, {
            method: "POST",
            path: "/messages",
            headers: { "content-type": JSON_TYPE },
            body: '{"body":"z"}',
          })
        ).status,
      ).toBe(201);
    } finally {
      await server.close();
    }
  });

  it("answers a failing store with a 500 that reveals nothing of the failure", async () => {
    const failing: MessageStore = {
      ...createMemoryStore(),
      list: () => Promise.reject(new Error("database password is hunter2")),
    };
    const lines: string[] = [];
    const server = await startHttpServer({ port: 0, log: "info", logSink: (l) => void lines.push(l), store: failing });
    try {
      // Not through send(): this 5xx is the server's own failure, which afterEach rightly forbids for client mistakes.
      const response = await rawRequest(server.url, { path: "/messages" });
      expect(response.status).toBe(500);
      expect(response.statusText).toBe("Internal Server Error");
      expect(response.text).not.toContain("hunter2");
      expect(lines.join("")).toContain("http server error");
      // The failure's own message may quote stored data: not at the default level.
      expect(lines.join("")).not.toContain("hunter2");
    } finally {
      await server.close();
    }
  });

  it("refuses bad options up front", async () => {
    await expect(startHttpServer({ port: 0, log: "silent", bodyLimitBytes: 0 })).rejects.toThrow(/bodyLimitBytes/);
    await expect(startHttpServer({ port: 70000, log: "silent" })).rejects.toThrow(/port/);
    await expect(startHttpServer({ port: 0, log: "silent", apiKey: "" })).rejects.toThrow(/API key/);
  });

  it("fails to start, and holds nothing open, when the port is taken", async () => {
    const first = await startHttpServer({ port: 0, log: "silent" });
    try {
      await expect(startHttpServer({ port: first.port, log: "silent" })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });

  it("stops listening on close", async () => {
    const server = await startHttpServer({ port: 0, log: "silent" });
    expect((await send(server, { path: "/" })).status).toBe(200);
    await server.close();
    await expect(rawRequest(server.url, { path: "/", timeoutMs: 2000 })).rejects.toThrow();
  });
});
