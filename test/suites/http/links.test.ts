// Link headers as discovery reads them (RFC 8288 by http-link-header, nothing from one that does not parse), and the
// bounds on parsing a representation a target sends.
import { describe, expect, it } from "vitest";
import {
  jsonNestsWithin,
  MAX_PARSE_DEPTH,
  MAX_XML_PARSE_BYTES,
  parseJson,
  parseLinkHeader,
  parseXml,
  xmlNestsWithin,
} from "../../../suites/http/_internals/links.js";
import { searchListing } from "../../../suites/http/_internals/uri.js";
import { topObject } from "../../../suites/http/_internals/representation.js";

describe("parseLinkHeader", () => {
  it("reads each link with each of its relation types, quoted parameters and all", () => {
    expect(parseLinkHeader('</messages?page=2>; rel="next last", </messages>;rel=self; title="a, <b>"')).toEqual([
      { href: "/messages?page=2", rel: "next", from: "Link header" },
      { href: "/messages?page=2", rel: "last", from: "Link header" },
      { href: "/messages", rel: "self", from: "Link header" },
    ]);
  });

  it("keeps a link with no rel, and offers nothing from a header that is not a link list", () => {
    expect(parseLinkHeader("</messages/1>")).toEqual([{ href: "/messages/1", from: "Link header" }]);
    expect(parseLinkHeader("not a link; rel=next")).toEqual([]);
  });
});

describe("bounds on parsing a representation", () => {
  it("measures JSON nesting in one pass, brackets inside strings aside", () => {
    expect(jsonNestsWithin('{"a": [[1]]}', 3)).toBe(true);
    expect(jsonNestsWithin('{"a": [[[1]]]}', 3)).toBe(false);
    expect(jsonNestsWithin('["[[[[\\"[[[["]', 1)).toBe(true);
    expect(parseJson("[".repeat(MAX_PARSE_DEPTH + 1) + "]".repeat(MAX_PARSE_DEPTH + 1))).toEqual({ ok: false });
    expect(parseJson("[".repeat(MAX_PARSE_DEPTH) + "]".repeat(MAX_PARSE_DEPTH)).ok).toBe(true);
  });

  it("measures XML nesting in one pass, declarations, comments and self-closed tags aside", () => {
    expect(xmlNestsWithin('<?xml version="1.0"?><!-- c --><a><b/><c>x</c></a>', 2)).toBe(true);
    expect(xmlNestsWithin("<a><a><a>x</a></a></a>", 2)).toBe(false);
    expect(parseXml("<a>".repeat(MAX_PARSE_DEPTH + 1) + "</a>".repeat(MAX_PARSE_DEPTH + 1))).toEqual({ ok: false });
  });

  it("parses no XML body past its size bound", () => {
    const item = "<message><body>hello</body></message>";
    const big = `<messages>${item.repeat(Math.ceil(MAX_XML_PARSE_BYTES / item.length))}</messages>`;
    expect(parseXml(big)).toEqual({ ok: false });
    expect(parseXml(`<messages>${item}</messages>`).ok).toBe(true);
  });
});

describe("what is one XML document (XML 1.0 §2.1, §2.8)", () => {
  it("takes comments, processing instructions and a document type without an internal subset around the root", () => {
    const legal = [
      '<?xml version="1.0"?><!-- made by hand --><message><body>a</body></message>',
      '<?xml version="1.0"?>\n<?xml-stylesheet href="m.xsl"?>\n<message><body>a</body></message>\n',
      "<!-- first --><message><body>a</body></message>",
      '<!DOCTYPE message SYSTEM "m.dtd"><message><body>a</body></message>',
      '\uFEFF<?xml version="1.0"?><message a=">"><body>a</body></message>',
      "<message><body/></message><!-- after --><?pi x?>\r\n",
      "<message><body><![CDATA[<not/><a tag>]]></body></message>",
    ];
    for (const text of legal) {
      const parsed = parseXml(text);
      expect(parsed.ok, text).toBe(true);
      expect(topObject(parsed.ok ? parsed.value : undefined, "xml"), text).toBeDefined();
    }
  });

  it("refuses what is not one document: text or a second element beside the root, a late declaration", () => {
    const illegal = [
      "<message/>junk",
      "<message/><message/>",
      "<message></message><other/>",
      "junk<message/>",
      ' <?xml version="1.0"?><message/>',
      '<message/><?xml version="1.0"?>',
      "<![CDATA[x]]><message/>",
      "<message/>]]>",
      "<message><body>a</body>",
      "<!-- unclosed <message/>",
      '<!DOCTYPE message [<!ENTITY a "aaaa">]><message>&a;</message>',
      "<!DOCTYPE a><!DOCTYPE a><a/>",
    ];
    for (const text of illegal) expect(parseXml(text).ok, text).toBe(false);
  });
});

describe("finding a message in a listing by its body", () => {
  const page = (value: unknown) => async (path: string) => {
    const text = JSON.stringify(value);
    return {
      req: { method: "GET", path, headers: {} },
      res: {
        status: 200,
        statusText: "OK",
        headers: { "content-type": ["application/json"] },
        body: new TextEncoder().encode(text),
        text,
      },
    };
  };

  it("takes the item around the object that holds the body: JSON:API's attributes have no id or link, the item has", async () => {
    const listing = {
      data: [
        { type: "messages", id: "7", attributes: { body: "b7" }, links: { self: "/messages/7" } },
        { type: "messages", id: "8", attributes: { body: "b8" } },
      ],
    };
    expect((await searchListing(page(listing), "/messages", "b7", "http://127.0.0.1:1")).found).toEqual({
      path: "/messages/7",
      how: "listing's link",
    });
    expect((await searchListing(page(listing), "/messages", "b8", "http://127.0.0.1:1")).found).toEqual({
      path: "/messages/8",
      how: "listing's id",
    });
  });
});
