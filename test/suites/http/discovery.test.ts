// Discovery: the link forms it follows, what it never follows, its bound on requests, OpenAPI input, one discovery per
// run.
import * as http from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listen } from "../../../fixtures/broken-servers/http/_base/server.js";
import type { StartedHttpServer } from "../../../fixtures/broken-servers/http/types.js";
import { discovery } from "../../../suites/http/_internals/discovery.js";
import { templateOf } from "../../../suites/http/_internals/path-rules.js";
import { httpContext } from "../../helpers/http-context.js";

let server: StartedHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A read-only server of fixed JSON documents (POST is refused), recording the paths asked for. */
async function serve(
  documents: Record<string, { body: unknown; link?: string }>,
  asked: string[] = [],
): Promise<string> {
  server = await listen(
    http.createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0] as string;
      asked.push(`${req.method} ${path}`);
      const doc = documents[path];
      if (req.method !== "GET" || !doc) {
        res.writeHead(req.method === "GET" ? 404 : 405, { "content-type": "application/json" });
        return res.end("{}");
      }
      res.writeHead(200, { "content-type": "application/json", ...(doc.link && { link: doc.link }) });
      res.end(JSON.stringify(doc.body));
    }),
  );
  return server.url;
}

const templates = async (url: string, options: Parameters<typeof httpContext>[1] = {}) => {
  const found = await discovery(httpContext(url, options));
  return [...new Set(found.paths.map(templateOf))].sort();
};

describe("discovery", () => {
  it("names the items a root listing holds /<id>, never //<id> (which no request may ask for)", async () => {
    const url = await serve({ "/": { body: [{ id: "0" }, { id: "7" }] } });
    const found = await discovery(httpContext(url, { collections: ["/messages"] }));
    const paths = found.paths.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(["/0", "/7"]));
    expect(paths.filter((p) => p.startsWith("//"))).toEqual([]);
  });

  it("follows HAL _links, plain links lists, href members and Link headers, on the target's origin only", async () => {
    const url = await serve({
      "/": {
        body: {
          _links: {
            self: { href: "/" },
            messages: { href: "/messages" },
            elsewhere: { href: "http://example.invalid/x" },
          },
        },
      },
      "/messages": {
        body: { items: [{ id: "m1", href: "/messages/m1" }], links: ["/tags"] },
        link: '</authors>; rel="authors"',
      },
      "/messages/m1": { body: { id: "m1", body: "hi", _links: { replies: { href: "/messages/m1/replies" } } } },
      "/tags": { body: [] },
      "/authors": { body: [] },
      "/messages/m1/replies": { body: [] },
    });
    expect(await templates(url)).toEqual([
      "/authors",
      "/messages",
      "/messages/{id}",
      "/messages/{id}/replies",
      "/tags",
    ]);
  });

  it("visits one item per template, and stops at its bound on requests, saying so", async () => {
    const asked: string[] = [];
    const items = Array.from({ length: 20 }, (_, i) => ({ id: `m${i}`, href: `/messages/m${i}` }));
    const docs: Record<string, { body: unknown }> = {
      "/": { body: { links: ["/messages"] } },
      "/messages": { body: { items } },
    };
    for (const it of items) docs[it.href] = { body: { id: it.id, links: [`${it.href}/reply`] } };
    const url = await serve(docs, asked);
    expect(await templates(url)).toEqual(["/messages", "/messages/{id}", "/messages/{id}/reply"]);
    expect(asked.filter((a) => /^GET \/messages\/m\d+$/.test(a))).toHaveLength(1);

    asked.length = 0;
    const found = await discovery(httpContext(url, { collections: ["/messages"] }));
    expect(found.requests).toBeLessThanOrEqual(50);
    const bounded = httpContext(url);
    bounded.httpConfig = { ...(bounded.httpConfig as NonNullable<typeof bounded.httpConfig>), maxDiscoveryRequests: 2 };
    const small = await discovery(bounded);
    expect(small.requests).toBe(2);
    expect(small.notes.join()).toMatch(/bound of 2 discovery requests was reached/);
  });

  it("reads the paths of an OpenAPI document, JSON or YAML, with {param} segments as ids", async () => {
    const url = await serve({ "/": { body: {} } });
    const dir = mkdtempSync(join(tmpdir(), "openapi-"));
    const json = join(dir, "api.json");
    writeFileSync(
      json,
      JSON.stringify({
        openapi: "3.0.0",
        paths: { "/messages": {}, "/messages/{messageId}": {}, "/messages/{messageId}/do_reply": {} },
      }),
    );
    expect(await templates(url, { openapi: json })).toEqual(["/messages", "/messages/{id}", "/messages/{id}/do_reply"]);
    const yaml = join(dir, "api.yaml");
    writeFileSync(yaml, "openapi: 3.0.0\npaths:\n  /notes: {}\n  /notes/{id}: {}\n");
    expect(await templates(url, { openapi: yaml, collections: ["/messages"] })).toEqual([
      "/messages",
      "/notes",
      "/notes/{id}",
    ]);
  });

  it("leaves out the RPC procedures an OpenAPI document lists (Connect, gRPC-Web), saying so: they are no resources", async () => {
    const url = await serve({ "/": { body: {} } });
    const json = join(mkdtempSync(join(tmpdir(), "openapi-")), "api.json");
    writeFileSync(
      json,
      JSON.stringify({
        openapi: "3.0.0",
        paths: { "/messages": {}, "/example.exampleService/Hello": {}, "/messages.json/{id}": {} },
      }),
    );
    expect(await templates(url, { openapi: json })).toEqual(["/messages", "/messages.json/{id}"]);
    const found = await discovery(httpContext(url, { openapi: json }));
    expect(found.notes.join()).toMatch(/RPC procedures \(such as \/example\.exampleService\/Hello\) were left out/);
  });

  it("refuses an OpenAPI URL on another origin without sending anything there", async () => {
    const url = await serve({ "/": { body: {} } });
    await expect(discovery(httpContext(url, { openapi: "http://example.invalid/openapi.json" }))).rejects.toMatchObject(
      { code: "usage" },
    );
  });

  it("runs once per run: every check shares the same discovery", async () => {
    const asked: string[] = [];
    const url = await serve({ "/": { body: { links: ["/messages"] } }, "/messages": { body: [] } }, asked);
    const ctx = httpContext(url);
    const [a, b] = await Promise.all([discovery(ctx), discovery(ctx)]);
    expect(a).toBe(b);
    expect(asked.filter((x) => x === "GET /")).toHaveLength(1);
  });
});

describe("ids of any shape, learned from the listing's items (data that existed before the run)", () => {
  it("takes the level a HAL item's self link adds below the listing as an id, though the item has no id member", async () => {
    const id = "7d1b620a-9028-405e-9c28-b3f196557951";
    const url = await serve({
      "/messages": {
        body: {
          _embedded: { messages: [{ body: "seeded", _links: { self: { href: `/messages/${id}` } } }] },
          _links: { self: { href: "/messages" }, latest: { href: "/messages/latest" } },
        },
      },
      [`/messages/${id}`]: { body: { body: "seeded", _links: { self: { href: `/messages/${id}` } } } },
      "/messages/latest": { body: { body: "seeded" } },
    });
    // The item's level is an id; a link of the listing itself (not of an item) names a name.
    expect(await templates(url)).toEqual(["/messages", "/messages/latest", "/messages/{id}"]);
  });

  it("adds the URI of an item that has an id member and no link, in any spelling, and judges it as an id", async () => {
    const url = await serve({
      "/messages": {
        body: {
          items: [
            { id: "V1StGXR8_Z5jdHi6B-myT", body: "seeded" },
            { id: 7, body: "another" },
          ],
        },
      },
      "/messages/V1StGXR8_Z5jdHi6B-myT": { body: { id: "V1StGXR8_Z5jdHi6B-myT", body: "seeded" } },
    });
    const found = await discovery(httpContext(url));
    expect(found.paths.map((p) => [p.path, p.idSegments])).toEqual([
      ["/messages", []],
      ["/messages/V1StGXR8_Z5jdHi6B-myT", [1]],
      ["/messages/7", [1]],
    ]);
  });
});
