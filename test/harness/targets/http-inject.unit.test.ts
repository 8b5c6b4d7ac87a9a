// The in-memory HTTP exchange (harness/targets/http-inject.ts) through the HTTP target: a request handler answers
// with no socket, within the wire exchange's bounds (body, header block, time, content codings), the path as sent.
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { createHttpTarget } from "../../../harness/targets/create-http-target.js";
import { MAX_RESPONSE_BYTES } from "../../../harness/wire/bounds.js";
import type { HttpHandler } from "../../../harness/targets/http-inject.js";
import { resolveHttpTarget } from "../../../harness/run-config.js";

const BASE = "http://memory.example";
const target = (inMemory: HttpHandler, timeoutMs = 5000) =>
  createHttpTarget({ baseUrl: BASE, inMemory, timeoutMs, apiKey: "K" });

/** Answers what it was asked: method, path, Host and key, in JSON. */
const echo: HttpHandler = (req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    res.setHeader("set-cookie", ["a=1", "b=2"]);
    res.writeHead(207, "Quite Multi", { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        method: req.method,
        url: req.url,
        host: req.headers.host,
        key: req.headers["x-api-key"],
        body: Buffer.concat(chunks).toString(),
      }),
    );
  });
};

describe("an in-memory HTTP target", () => {
  it("serves the request as the check wrote it, the key where the run puts it, and reads every header occurrence", async () => {
    const t = target(echo);
    const res = await t.request({ method: "put", path: "/messages/./a%2Fb/../c", body: "hi" });
    expect([res.status, res.statusText, res.headers["set-cookie"]]).toEqual([207, "Quite Multi", ["a=1", "b=2"]]);
    expect(JSON.parse(res.text)).toEqual({
      method: "PUT",
      url: "/messages/./a%2Fb/../c",
      host: "memory.example",
      key: "K",
      body: "hi",
    });
    expect(t.callCount).toBe(1);
    expect(resolveHttpTarget({ baseUrl: BASE, inMemory: echo }).rate).toBe(Infinity);
  });

  it(`cuts a body past ${MAX_RESPONSE_BYTES} bytes, as the wire exchange does`, async () => {
    const MiB = Buffer.alloc(1024 * 1024, 0x61);
    const res = await target((_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 12; i++) res.write(MiB);
      res.end();
    }).request({ method: "GET", path: "/big" });
    expect([res.status, res.body.length, res.failure]).toEqual([200, MAX_RESPONSE_BYTES, undefined]);
  });

  it("fails an exchange whose header block is past Node's client bound, and one that never answers, as failures", async () => {
    const huge = await target((_req, res) => {
      for (let i = 0; i < 40; i++) res.setHeader(`x-h${i}`, "v".repeat(1000));
      res.end();
    }).request({ method: "GET", path: "/" });
    expect(huge.failure).toEqual({ kind: "connection", message: "Parse Error: Header overflow" });
    const silent = await target(() => undefined, 50).request({ method: "GET", path: "/" });
    expect(silent).toMatchObject({ status: 0, failure: { kind: "timeout" } });
    const thrown = await target(() => {
      throw new Error("boom");
    }).request({ method: "GET", path: "/" });
    expect(thrown.failure).toEqual({ kind: "connection", message: "the handler threw: boom" });
    const unescaped = await target(echo).request({ method: "GET", path: "/a b" });
    expect(unescaped.failure?.kind).toBe("connection");
  });

  it("reads no body on HEAD or 204, which Node's server would not send, and undoes content codings", async () => {
    const bodied: HttpHandler = (req, res) => {
      if (req.url === "/gz") return void res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync("inflated"));
      if (req.url === "/many")
        return void res.writeHead(200, { "content-encoding": "gzip, gzip, gzip, gzip" }).end("x");
      res.writeHead(req.url === "/none" ? 204 : 200, { "content-length": "4" }).end("body");
    };
    const t = target(bodied);
    expect((await t.request({ method: "HEAD", path: "/" })).body.length).toBe(0);
    expect((await t.request({ method: "GET", path: "/none" })).body.length).toBe(0);
    expect((await t.request({ method: "GET", path: "/" })).text).toBe("body");
    expect((await t.request({ method: "GET", path: "/gz" })).text).toBe("inflated");
    expect((await t.request({ method: "GET", path: "/many" })).failure).toMatchObject({
      message: expect.stringMatching(/4 content codings; at most 3/),
    });
  });
});
