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

const spec = { id: "http.test.probe", title: "a probe", severity: "MUST", spec: "test", withoutCredentials: true } as const;

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
