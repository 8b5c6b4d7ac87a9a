// gRPC's pushback (gRFC A6): a server that sheds a call with RESOURCE_EXHAUSTED and grpc-retry-pushback-ms asks the
// client to wait that long and send it again. The run does, within its bound (harness/targets/backpressure.ts), and
// judges the server on what it then answers; a server that never lets a call through ends the run "cannot check"
// (exit 4), never "not conformant". A check that provokes RESOURCE_EXHAUSTED on purpose sees the refusal as sent.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../../contract/message.js";
import { runConformance } from "../../../harness/api/run-conformance.js";
import { EXIT_CODES } from "../../../harness/errors.js";
import { frame } from "../../../harness/protocols/grpc-web/index.js";
import {
  BackpressureLog,
  MAX_WAITS_PER_REQUEST,
  pushbackWait,
  waitOut,
} from "../../../harness/targets/backpressure.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";
import { cli } from "../../helpers/cli.js";

const RESOURCE_EXHAUSTED = 8;
/** Short waits, so that a refusal past the bound (at most MAX_WAITS_PER_REQUEST waits) costs a fraction of a second. */
const PUSHBACK = { "grpc-retry-pushback-ms": "20" };
/** Bodies from this size on are the receive-limit probe's: the servers below never shed those. */
const PROBE_SIZE = 1024;

const greet = (request: Buffer) => {
  const d = decodeMessage(request);
  if (!d.ok) return { code: 13, details: d.reason };
  return Buffer.from(encodeMessage(`hi ${d.message.body}`));
};

let sheddingFirst: TestServer;
let refusingAll: TestServer;
let limited: TestServer;
/** gRPC-Web over HTTP/1.1: every call answered RESOURCE_EXHAUSTED with the pushback in the body's trailer frame. */
let refusingWeb: http.Server;
let shed = 0;

beforeAll(async () => {
  // Sheds the first call of each request it gets (bodies under PROBE_SIZE), then serves it: a server under load.
  const seen = new Set<string>();
  sheddingFirst = await startGrpcJsServer((request) => {
    const kind = request.toString("hex");
    if (request.length >= PROBE_SIZE || seen.has(kind)) return greet(request);
    seen.add(kind);
    shed++;
    return { code: RESOURCE_EXHAUSTED, details: "load shed: retry later", trailers: PUSHBACK };
  });
  refusingAll = await startGrpcJsServer(() => ({
    code: RESOURCE_EXHAUSTED,
    details: "quota exhausted",
    trailers: PUSHBACK,
  }));
  // A receive limit of 64 KiB, refused RESOURCE_EXHAUSTED with a pushback (as a server may add one to every refusal).
  refusingWeb = http.createServer((req, res) => {
    req.resume();
    const trailer = Buffer.from("grpc-status: 8\r\ngrpc-message: quota exhausted\r\ngrpc-retry-pushback-ms: 20\r\n");
    res.writeHead(200, { "content-type": "application/grpc-web+proto" }).end(frame(0x80, trailer));
  });
  await new Promise<void>((resolve) => refusingWeb.listen(0, "127.0.0.1", resolve));
  limited = await startGrpcJsServer((request) =>
    request.length > 64 * 1024
      ? { code: RESOURCE_EXHAUSTED, details: "message too large", trailers: PUSHBACK }
      : greet(request),
  );
});
afterAll(async () => {
  await Promise.all([
    sheddingFirst.close(),
    refusingAll.close(),
    limited.close(),
    new Promise<void>((resolve) => refusingWeb.close(() => resolve())),
  ]);
});

describe("a gRPC server that sheds calls with a pushback", () => {
  it("is conformant: each shed call is sent again after the wait it asked for, and the waits are in the report", async () => {
    const report = await runConformance({
      grpc: { address: sheddingFirst.address },
      claims: { replicas: "single" },
      seed: 7,
      runs: 10,
    });
    expect(report.checks.filter((c) => c.gating).map((c) => `${c.id}: ${c.message}`)).toEqual([]);
    expect(report.verdict).toBe("conformant");
    expect(shed).toBeGreaterThan(0);
    // Every shed call of a check was waited out (the set-up probe's Hello, asked only whether gRPC is spoken, was not).
    expect(report.backpressure?.waits).toBeGreaterThanOrEqual(shed - 1);
  }, 180_000);

  it("that never lets a call through ends the run in one line, exit 4: cannot check, never not conformant", async () => {
    const run = await cli(["check", "--grpc", refusingAll.address, "--only", "grpc.defaults.*", "--quiet"]);
    expect(run.code).toBe(EXIT_CODES.refusing);
    expect(run.stderr).toMatch(
      new RegExp(
        `^example-conformance: cannot check: ${refusingAll.address.replace(/\./g, "\\.")} keeps refusing \\(6 ` +
          `answers RESOURCE_EXHAUSTED with waits of 0\\.02 s(, 0\\.02 s){5}[;)]`,
      ),
    );
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stdout).not.toMatch(/not conformant|^conformant/m);
    // Waiving what the refusals made the checks find waives nothing: the run still has no verdict.
    const dir = mkdtempSync(join(tmpdir(), "pushback-"));
    try {
      writeFileSync(join(dir, "expected.txt"), "grpc.defaults.* # the server refuses every call\n");
      const waived = await cli([
        "check",
        "--grpc",
        refusingAll.address,
        "--only",
        "grpc.defaults.*",
        "--expect-failures",
        join(dir, "expected.txt"),
      ]);
      expect(waived.code).toBe(EXIT_CODES.refusing);
      expect(waived.stderr).toMatch(/^example-conformance: cannot check: .* keeps refusing/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("over gRPC-Web, the pushback in the trailer frame, likewise ends the run in one line, exit 4", async () => {
    const url = `http://127.0.0.1:${(refusingWeb.address() as AddressInfo).port}`;
    const run = await cli(["check", "--grpc-web", url, "--only", "grpc.defaults.*", "--quiet"]);
    expect(run.code).toBe(EXIT_CODES.refusing);
    expect(run.stderr).toMatch(
      new RegExp(
        `^example-conformance: cannot check: ${url.replace(/\./g, "\\.")} keeps refusing \\(6 answers ` +
          `RESOURCE_EXHAUSTED with waits of 0\\.02 s`,
      ),
    );
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  }, 60_000);

  it("gets its size limit judged as sent: the over-limit check sees RESOURCE_EXHAUSTED, not a wait", async () => {
    const report = await runConformance({
      grpc: { address: limited.address },
      only: ["grpc.limits.over-limit"],
      seed: 7,
    });
    expect(report.checks.find((c) => c.id === "grpc.limits.over-limit")).toMatchObject({ status: "pass" });
    expect(report.backpressure).toBeUndefined();
  }, 60_000);
});

describe("what a pushback asks for (gRFC A6)", () => {
  it("waits on RESOURCE_EXHAUSTED with a non-negative pushback, in the trailers or a trailers-only answer's headers", () => {
    expect(pushbackWait(RESOURCE_EXHAUSTED, { "grpc-retry-pushback-ms": ["250"] }, {})).toEqual({
      ms: 250,
      answer: "RESOURCE_EXHAUSTED",
    });
    expect(pushbackWait(RESOURCE_EXHAUSTED, {}, { "grpc-retry-pushback-ms": ["0"] })).toEqual({
      ms: 0,
      answer: "RESOURCE_EXHAUSTED",
    });
  });

  it("lets the answer stand without a pushback, with a negative or malformed one, and for any other status", () => {
    expect(pushbackWait(RESOURCE_EXHAUSTED, {}, {})).toBeUndefined();
    for (const v of ["-1", "007", "1.5", "soon", "99999999999"])
      expect(pushbackWait(RESOURCE_EXHAUSTED, { "grpc-retry-pushback-ms": [v] }, {})).toBeUndefined();
    expect(pushbackWait(14, { "grpc-retry-pushback-ms": ["10"] }, {})).toBeUndefined();
  });

  it("waits at most MAX_WAITS_PER_REQUEST times, then notes the target refusing and waits no more for it", async () => {
    const log = new BackpressureLog();
    let sent = 0;
    const always = { send: async () => ++sent, askedWait: () => ({ ms: 1, answer: "429" }), log, target: "t" };
    await waitOut(always);
    expect(sent).toBe(MAX_WAITS_PER_REQUEST + 1);
    expect(log.summary().waits).toBe(MAX_WAITS_PER_REQUEST);
    await waitOut(always);
    expect(sent).toBe(MAX_WAITS_PER_REQUEST + 2);
    expect(log.refusing()).toMatchObject([{ target: "t", requests: 2 }]);
  });
});
