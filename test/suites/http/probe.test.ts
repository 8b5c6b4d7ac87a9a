// How an HTTP check turns its probe into an outcome: a probe that cannot go on skips, unless it had already found
// a problem, which then fails the check rather than hide behind the skip.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpCheck } from "../../../suites/http/_internals/probe.js";
import { httpContext } from "../../helpers/http-context.js";

let server: http.Server;
let url: string;
beforeAll(async () => {
  server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const spec = {
  id: "http.test.probe",
  title: "a probe",
  severity: "MUST",
  spec: "test",
  withoutCredentials: true,
} as const;

describe("httpCheck", () => {
  it("fails with a problem found before the probe had to stop, and says why it stopped", async () => {
    const check = httpCheck(spec, async (p) => {
      p.problem("the first thing was wrong");
      return p.skip("nothing left to probe it by");
    });
    const outcome = await check.run(httpContext(url));
    expect(outcome.status).toBe("fail");
    expect(outcome.message).toBe("the first thing was wrong");
    expect(outcome.details?.at(-1)).toBe("then could not go on: nothing left to probe it by");
  });

  it("skips, with the reason, when the probe stops before finding anything", async () => {
    const check = httpCheck(spec, async (p) => p.skip("nothing to probe"));
    expect(await check.run(httpContext(url))).toMatchObject({ status: "skip", message: "nothing to probe" });
  });
});

describe("a message the creating answer does not locate", () => {
  /** POST answers an empty 201 with no Location; the listing holds each body sent (with no id or link), or nothing. */
  async function withStore(listsBodies: boolean, run: (url: string) => Promise<void>): Promise<void> {
    const bodies: string[] = [];
    const store = http.createServer((req, res) => {
      let text = "";
      req.setEncoding("utf8").on("data", (c: string) => (text += c));
      req.on("end", () => {
        if (req.method === "POST" && req.url === "/messages") {
          bodies.push((JSON.parse(text) as { body: string }).body);
          res.writeHead(201).end();
        } else if (req.method === "GET" && req.url === "/messages") {
          const items = listsBodies ? bodies.map((body) => ({ body })) : [];
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ items }));
        } else res.writeHead(404, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((r) => store.listen(0, "127.0.0.1", () => r()));
    try {
      await run(`http://127.0.0.1:${(store.address() as AddressInfo).port}`);
    } finally {
      await new Promise<void>((r) => store.close(() => r()));
    }
  }

  const createOrStop = httpCheck(spec, async (p) => {
    await p.createOrStop("/messages");
    return "located";
  });

  it("is said to be listed without an id or link when the listing holds its body", async () => {
    await withStore(true, async (url) => {
      expect(await createOrStop.run(httpContext(url))).toMatchObject({
        status: "skip",
        message:
          "POST /messages answered 201 Created with no Location, self link or id, and the listing shows the " +
          "message it created by its body, with no id or link to reach it by: nothing to probe it by",
      });
    });
  });

  it("is said not to be found when the listing does not hold it", async () => {
    await withStore(false, async (url) => {
      const outcome = await createOrStop.run(httpContext(url));
      expect(outcome.status).toBe("skip");
      expect(outcome.message).toMatch(
        /and the message it created was not found in the listing within \d+ pages: nothing to probe it by$/,
      );
    });
  });
});
