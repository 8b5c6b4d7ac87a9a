// The HTTP target: URL validation, what an exchange keeps, kept-alive and fresh connections, the key, bounds, and curl
// lines that replay it.
import * as http from "node:http";
import * as net from "node:net";
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { listen } from "../../../fixtures/broken-servers/http/_base/server.js";
import type { StartedHttpServer } from "../../../fixtures/broken-servers/http/types.js";
import { createHttpTarget, probeHttpReachable } from "../../../harness/targets/create-http-target.js";
import { parseHttpBaseUrl } from "../../../harness/targets/http-base-url.js";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  port: number;
  body: string;
}

let server: StartedHttpServer | undefined;
let seen: Seen[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  seen = [];
});

async function start(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_q, r) => r.end("ok"),
): Promise<string> {
  const s = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        port: req.socket.remotePort ?? 0,
        body,
      });
      handler(req, res);
    });
  });
  server = await listen(s);
  return server.url;
}

describe("parseHttpBaseUrl", () => {
  it.each([
    ["ftp://host/", /only http and https URLs are supported, not ftp:/],
    ["localhost:8080", /only http and https URLs are supported/],
    ["not a url", /not a valid URL/],
    ["http://user:pw@host/", /credentials in the URL are not supported/],
    ["http://host/?q=1", /no query or fragment/],
  ])("refuses %s with a usage error naming --http", (url, message) => {
    expect(() => parseHttpBaseUrl(url)).toThrow(
      expect.objectContaining({ code: "usage", message: expect.stringMatching(message) }),
    );
    expect(() => parseHttpBaseUrl(url)).toThrow(new RegExp(`^--http ${url.replace(/[?.*+]/g, "\\$&")}: `));
  });

  it("takes http and https URLs, with a path prefix", () => {
    expect(parseHttpBaseUrl("https://example.test/api").pathname).toBe("/api");
    expect(parseHttpBaseUrl("http://[::1]:8080").hostname).toBe("[::1]");
  });
});

describe("probeHttpReachable", () => {
  it("throws an unreachable error with the URL and the cause when nothing listens", async () => {
    await expect(
      probeHttpReachable(new URL("http://127.0.0.1:1"), 2000, undefined, "--http", "http://127.0.0.1:1"),
    ).rejects.toMatchObject({
      code: "unreachable",
      message: expect.stringMatching(/^cannot reach http:\/\/127\.0\.0\.1:1: ECONNREFUSED/),
    });
  });

  it("resolves when a connection can be made", async () => {
    const url = await start();
    await expect(probeHttpReachable(new URL(url), 2000)).resolves.toBeUndefined();
  });
});

describe("createHttpTarget", () => {
  it("keeps the reason phrase exactly and every occurrence of a header, lowercased", async () => {
    const url = await start((_q, res) => {
      res.writeHead(201, "Made Up", [
        ["Set-Cookie", "a=1"],
        ["Set-Cookie", "b=2"],
        ["X-Thing", "v"],
      ]);
      res.end("body");
    });
    const res = await createHttpTarget({ baseUrl: url }).request({ method: "GET", path: "/x" });
    expect(res).toMatchObject({ status: 201, statusText: "Made Up", text: "body" });
    expect(res.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(res.headers["x-thing"]).toEqual(["v"]);
  });

  it(
    "keeps connections alive between requests, a HEAD, a POST and a request that asks on their own, and never " +
      "sends a cookie back",
    async () => {
      const url = await start((_q, res) => {
        res.setHeader("set-cookie", "session=1");
        res.end();
      });
      const target = createHttpTarget({ baseUrl: url });
      try {
        await target.request({ method: "GET", path: "/a" });
        await target.request({ method: "POST", path: "/b", body: "x" });
        await target.request({ method: "HEAD", path: "/c" });
        await target.request({ method: "GET", path: "/d", connection: "fresh" });
        await target.request({ method: "GET", path: "/e" });
      } finally {
        await target.close();
      }
      const [a, b, c, d, e] = seen.map((s) => s.port);
      // A POST is never sent twice, so never on a connection the server may have closed meanwhile.
      expect(e).toBe(a);
      expect(new Set([a, b, c, d]).size).toBe(4);
      expect(seen.map((s) => s.headers.cookie)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    },
  );

  it("sends a request again on a fresh connection when the server had closed the kept-alive one unannounced", async () => {
    // Each connection's first request is answered as if kept alive; its second is met with the connection closed,
    // as a server whose idle timeout ends it just as the request goes out.
    let reusedAndClosed = 0;
    const raw = net.createServer((socket) => {
      let requests = 0;
      socket.on("data", () => {
        if (++requests === 1) {
          socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
          return;
        }
        reusedAndClosed++;
        socket.destroy();
      });
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    const target = createHttpTarget({ baseUrl: `http://127.0.0.1:${(raw.address() as net.AddressInfo).port}` });
    try {
      for (const path of ["/a", "/b", "/c"])
        expect(await target.request({ method: "GET", path })).toMatchObject({ status: 200, text: "ok" });
      expect(reusedAndClosed).toBeGreaterThan(0);
    } finally {
      await target.close();
      await new Promise((resolve) => raw.close(resolve));
    }
  });

  it("sends the API key in its header unless a request leaves it out, and counts every request", async () => {
    const url = await start();
    const target = createHttpTarget({ baseUrl: url, apiKey: "k1", apiKeyHeader: "X-Key" });
    await target.request({ method: "GET", path: "/a" });
    await target.request({ method: "GET", path: "/b", withoutApiKey: true });
    expect(seen.map((s) => s.headers["x-key"])).toEqual(["k1", undefined]);
    expect(target.callCount).toBe(2);
  });

  it("puts requests under the base URL's path prefix, and refuses a path that could leave the origin", async () => {
    const url = await start();
    const target = createHttpTarget({ baseUrl: `${url}/api/` });
    await target.request({ method: "GET", path: "/messages?x=1" });
    expect(seen[0]?.url).toBe("/api/messages?x=1");
    await expect(target.request({ method: "GET", path: "//evil.example/x" })).rejects.toThrow(/paths start with one/);
  });

  it("shows a body a server sends after a HEAD response's headers", async () => {
    const url = await start((req) =>
      req.socket.end("HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello"),
    );
    const res = await createHttpTarget({ baseUrl: url }).request({ method: "HEAD", path: "/" });
    expect(res.status).toBe(200);
    expect(res.text).toBe("hello");
  });

  it("shows a HEAD body a server writes after its headers in a write of its own, once the client has half-closed", async () => {
    // The body goes out only when the client's FIN arrives: a client that closed its socket at the response's end
    // never reads it; one that only half-closes reads it before the server's close, every time.
    const raw = net.createServer({ allowHalfOpen: true }, (socket) => {
      socket.once("data", () => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\n"));
      socket.on("end", () => socket.end("hello"));
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = raw.address() as net.AddressInfo;
      const res = await createHttpTarget({ baseUrl: `http://127.0.0.1:${port}` }).request({
        method: "HEAD",
        path: "/",
      });
      expect(res.status).toBe(200);
      expect(res.text).toBe("hello");
    } finally {
      await new Promise((resolve) => raw.close(resolve));
    }
  });

  it("ends an exchange at its timeout, and after three silent requests in a row refuses the rest", async () => {
    const url = await start(() => undefined);
    const target = createHttpTarget({ baseUrl: url, timeoutMs: 100 });
    for (let i = 0; i < 3; i++)
      expect((await target.request({ method: "GET", path: "/" })).failure).toEqual({ kind: "timeout" });
    await expect(target.request({ method: "GET", path: "/" })).rejects.toMatchObject({ code: "unreachable" });
  });

  it("stops at the budget", async () => {
    const url = await start();
    const target = createHttpTarget({ baseUrl: url, maxCalls: 1 });
    await target.request({ method: "GET", path: "/" });
    await expect(target.request({ method: "GET", path: "/" })).rejects.toThrow(/budget of 1 calls is spent/);
  });

  it("prints a curl line that replays the request in a shell, with the key as the spec's placeholder", async () => {
    const url = await start((_q, res) => res.end());
    const target = createHttpTarget({ baseUrl: url, apiKey: "secret" });
    const req = {
      method: "POST",
      path: "/messages",
      headers: { "content-type": "application/json" },
      body: `{"body": "it's $HOME"}`,
    };
    const line = target.curl(req);
    expect(line).toBe(
      `curl -sS -i -X POST -H 'content-type: application/json' -H 'x-api-key: <API_KEY>' --data-binary '{"body": ` +
        `"it'\\''s $HOME"}' ${url}/messages`,
    );
    // The shell hands curl the body byte for byte (printed with echo in place of curl).
    const echoed = execFileSync("sh", [
      "-c",
      `printf '%s' ${line.split("--data-binary ")[1]?.split(` ${url}`)[0]}`,
    ]).toString();
    expect(echoed).toBe(req.body);
    expect(target.curl({ method: "HEAD", path: "/" })).toMatch(/^curl -sS -i --head /);
    expect(target.curl({ method: "POST", path: "/", body: new Uint8Array([0xff, 0x00, 0x41]) })).toMatch(
      /^printf '\\377\\000\\101' \| curl .* --data-binary @- /,
    );
  });
});
