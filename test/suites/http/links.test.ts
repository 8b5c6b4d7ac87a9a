// Link headers as discovery reads them: RFC 8288 by http-link-header, and nothing from one that does not parse.
import { describe, expect, it } from "vitest";
import { parseLinkHeader } from "../../../suites/http/_internals/links.js";

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
