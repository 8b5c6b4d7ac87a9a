// A deployment that rate-limits (429 with Retry-After, as nginx's limit_req or a gateway answers) is no defect: the
// run waits as asked and sends again, counts the waits in the report and on the console, and the verdict is the
// server's. Here the reference's HTTP interface behind a proxy that refuses one request in every EVERY, whatever the
// pace: a limit by the second is met or not by how loaded the machine is, and a test must not depend on that.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_CODES } from "../../../harness/errors.js";
import { backpressureWaitMs, retryAfterMs } from "../../../harness/targets/retry-after.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { checkVerdicts, cli } from "../../helpers/cli.js";

/**
 * One request in this many is answered 429 (the 5th, the 30th, ...): the one sent again after the wait goes through.
 */
const EVERY = 25;
let reference: ReferenceServer;
let limiter: http.Server;
let limited = 0;
/** Answers every request 429 with Retry-After: 1: a limit the run never gets under. */
let refuser: http.Server;

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0 });
  const upstream = new URL(reference.httpUrl);
  let seen = 0;
  limiter = http.createServer((req, res) => {
    if (++seen % EVERY === 5) {
      limited++;
      req.resume();
      res.writeHead(429, { "retry-after": "1", "content-type": "text/html" }).end("<html>429 Too Many Requests</html>");
      return;
    }
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.rawHeaders);
        up.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => limiter.listen(0, "127.0.0.1", resolve));
  refuser = http.createServer((req, res) => {
    req.resume();
    res.writeHead(429, { "retry-after": "1", "content-type": "text/plain" }).end("slow down");
  });
  await new Promise<void>((resolve) => refuser.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  await new Promise<void>((resolve) => limiter.close(() => resolve()));
  await new Promise<void>((resolve) => refuser.close(() => resolve()));
  await reference.close();
});

describe("an HTTP target behind a rate limit", () => {
  it("is judged as the server it fronts: every HTTP check passes, the waits counted in the report and said on the " +
    "console", async () => {
    const url = `http://127.0.0.1:${(limiter.address() as AddressInfo).port}`;
    const run = await checkVerdicts(["--http", url, "--only", "http.*"]);
    expect(run.failed, run.stdout).toEqual([]);
    expect(limited).toBeGreaterThan(0);
    expect(run.report.backpressure?.waits).toBeGreaterThan(0);
    expect(run.stdout).toMatch(
      /^waited: the target asked the run to slow down \(429, or 503 with Retry-After, or RESOURCE_EXHAUSTED with grpc-retry-pushback-ms\) \d+ time\(s\), [\d.]+ s in all/m,
    );
  }, 120_000);
});

describe("an HTTP target that never lets the run through", () => {
  it("ends the run in one line, exit 4, once one request was refused past the bound (5 waits): cannot check, no " +
    "verdict", async () => {
    const url = `http://127.0.0.1:${(refuser.address() as AddressInfo).port}`;
    const run = await cli(["check", "--http", url, "--only", "http.*", "--quiet"]);
    expect(run.code).toBe(EXIT_CODES.refusing);
    expect(run.stderr).toMatch(
      new RegExp(
        `^example-conformance: cannot check: ${url.replace(/\./g, "\\.")} keeps refusing \\(6 answers 429 with ` +
          `waits of 1 s(, 1 s){5}[;)]`,
      ),
    );
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stdout).not.toMatch(/not conformant|^conformant/m);
  }, 120_000);
});

describe("what is waited out", () => {
  it("reads Retry-After as seconds or as an HTTP-date", () => {
    expect(retryAfterMs("3")).toBe(3000);
    expect(retryAfterMs(new Date(10_000 + 2000).toUTCString(), 10_000)).toBe(2000);
    expect(retryAfterMs("soon")).toBeUndefined();
  });

  it("waits on 429 for any method, and on 503 with Retry-After only for a request safe to repeat", () => {
    expect(backpressureWaitMs("POST", 429, undefined)).toBe(1000);
    expect(backpressureWaitMs("GET", 503, "2")).toBe(2000);
    // A POST answered 503 may have been stored: sending it again could store it twice.
    expect(backpressureWaitMs("POST", 503, "2")).toBeUndefined();
    expect(backpressureWaitMs("GET", 503, undefined)).toBeUndefined();
    // Asked as it is: past the bound (backpressure.ts), the target counts as refusing the run.
    expect(backpressureWaitMs("GET", 429, "3600")).toBe(3_600_000);
    expect(backpressureWaitMs("GET", 404, "1")).toBeUndefined();
  });
});
