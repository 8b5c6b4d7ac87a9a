// runConformance end to end against small in-test servers: verdicts, gating, expected failures, replays, exit 3.
import { afterEach, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../contract/message.js";
import { runConformance } from "../../harness/api/run-conformance.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { ConformanceError } from "../../harness/errors.js";
import { startGrpcJsServer, type TestServer } from "../helpers/grpc-js-server.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Echo with a greeting; strict about malformed input. A correct implementation on plain grpc-js. */
const greet = (request: Buffer) => {
  const d = decodeMessage(request);
  if (!d.ok) return { code: 13, details: d.reason };
  return Buffer.from(encodeMessage(`hi ${d.message.body}`));
};

describe("runConformance", () => {
  it("passes every gating check of a correct grpc-js server, and reports grpc-js's own deviations as not gating", async () => {
    server = await startGrpcJsServer(greet);
    const report = await runConformance({ grpc: { address: server.address }, seed: 3, runs: 20, skip: ["contract.*"] });
    const gatingFailures = report.checks.filter((c) => c.gating);
    expect(gatingFailures).toEqual([]);
    expect(report.exitCode).toBe(0);
    // grpc-js accepts the compressed flag without an encoding: a protocol-profile finding, shown but not gating.
    const flag = report.checks.find((c) => c.id === "grpc.encoding.flag-without-encoding");
    expect(flag).toMatchObject({ status: "fail", profile: "protocol", gating: false });
  });

  it("fails history independence for a server that counts calls, with a counterexample and a replay line", async () => {
    let calls = 0;
    server = await startGrpcJsServer(() => Buffer.from(encodeMessage(`call ${++calls}`)));
    const report = await runConformance({
      grpc: { address: server.address },
      seed: 5,
      runs: 20,
      only: ["grpc.stateless.*"],
    });
    const history = report.checks.find((c) => c.id === "grpc.stateless.history-independent");
    expect(history?.status).toBe("fail");
    expect(history?.gating).toBe(true);
    expect(history?.message).toMatch(/counts calls/);
    // The replay as data, and the package's runConformance renders it as the command line that repeats it.
    expect(history?.replayArgs).toEqual({ only: "grpc.stateless.history-independent", seed: 5 });
    expect(history?.replay).toBe(
      `npx example-conformance check --grpc ${server.address} --runs 20 --only ` +
        `grpc.stateless.history-independent --seed 5`,
    );
    expect(report.checks.find((c) => c.id === "grpc.stateless.deterministic")?.status).toBe("fail");
    expect(report.exitCode).toBe(1);
  });

  it("judges a server with a clock in its reply only on what it can: no false history failure", async () => {
    server = await startGrpcJsServer((req) => {
      const d = decodeMessage(req);
      return Buffer.from(encodeMessage(`${d.ok ? d.message.body : ""} at ${process.hrtime.bigint()}`));
    });
    const report = await runConformance({
      grpc: { address: server.address },
      seed: 9,
      runs: 20,
      only: ["grpc.stateless.*"],
    });
    expect(report.checks.find((c) => c.id === "grpc.stateless.history-independent")).toMatchObject({
      status: "pass",
      gating: false,
    });
    expect(report.checks.find((c) => c.id === "grpc.stateless.deterministic")).toMatchObject({
      status: "fail",
      severity: "SHOULD",
      gating: false,
    });
    expect(report.exitCode).toBe(0);
  });

  it(
    "turns a listed failure into an expected failure, and fails the run on a listed check that passes, as the " +
      "configuration file does",
    async () => {
      server = await startGrpcJsServer(greet);
      const file = join(mkdtempSync(join(tmpdir(), "xfail-")), "expected.txt");
      writeFileSync(
        file,
        "grpc.encoding.flag-without-encoding # grpc-js accepts it\ngrpc.defaults.decodes # listed by mistake\n",
      );
      const report = await runConformance({
        grpc: { address: server.address },
        only: ["grpc.encoding.flag-without-encoding", "grpc.defaults.decodes"],
        expectFailures: file,
        strict: true,
      });
      // One meaning for a stale entry, whichever list holds it (issue 41): it fails the run, so the list stays true.
      expect(report.checks.map((c) => [c.id, c.status, c.gating])).toEqual([
        ["grpc.defaults.decodes", "fail", true],
        ["grpc.encoding.flag-without-encoding", "expected-fail", false],
      ]);
      expect(report.checks[0]?.note).toMatch(
        /^listed in --expect-failures \(grpc\.defaults\.decodes, line 2\) but passed: remove it from the list$/,
      );
      expect(report.verdict).toBe("not conformant");
      expect(report.exitCode).toBe(1);
    },
  );

  it("starts each check's preparation as the run's checks start, before the checks ahead of it end", async () => {
    server = await startGrpcJsServer(greet);
    let prepared = false;
    const check = (id: string, extra: Partial<CheckDefinition>): CheckDefinition => ({
      id,
      title: id,
      severity: "MUST",
      area: "grpc",
      profile: "contract",
      spec: "-",
      sharing: "alone",
      run: async () => pass("ran"),
      ...extra,
    });
    // Both "alone": the second starts only once the first has ended, but its preparation is under way before.
    const first = check("test.first", {
      run: async () =>
        prepared ? pass("the next check is being prepared") : fail("the next check's preparation had not begun"),
    });
    const next = check("test.next", { prepare: () => void (prepared = true) });
    const report = await runConformance({ grpc: { address: server.address }, checks: [first, next] });
    expect(report.checks.map((c) => [c.id, c.status, c.message])).toEqual([
      ["test.first", "pass", "the next check is being prepared"],
      ["test.next", "pass", "ran"],
    ]);
  });

  it("throws an unreachable error naming the address and the cause", async () => {
    await expect(
      runConformance({ grpc: { address: "127.0.0.1:1", timeoutMs: 2000 }, only: ["grpc.defaults.*"] }),
    ).rejects.toMatchObject({
      code: "unreachable",
      message: expect.stringMatching(/^cannot reach 127\.0\.0\.1:1: ECONNREFUSED/),
    });
  });

  it("refuses a selection that judges nothing: no check left, or only checks of an interface not given", async () => {
    await expect(runConformance({ skip: ["*"] })).rejects.toMatchObject({
      code: "usage",
      message: expect.stringMatching(/leaves no check to run/),
    });
    await expect(runConformance({ only: ["grpc.defaults.empty-request"] })).rejects.toMatchObject({
      code: "usage",
      message: expect.stringMatching(/need an interface that was not given/),
    });
  });

  it("skips gRPC checks without a target, saying why, and a gRPC-only scope does not judge HTTP", async () => {
    const report = await runConformance({ only: ["grpc.defaults.empty-request", "contract.shape"] });
    expect(report.checks[1]).toMatchObject({
      status: "skip",
      message: "no RPC target (--grpc HOST:PORT, --connect URL or --grpc-web URL)",
    });
    expect(report.scope.interfaces).toEqual([]);
    expect(report.unjudged.some((u) => u.id.startsWith("grpc.") || u.id.startsWith("http."))).toBe(false);
  });

  it(
    "says partial when --only leaves gating checks unjudged, with waivers when a failure is waived, and records " +
      "the selection",
    async () => {
      server = await startGrpcJsServer(greet);
      const file = join(mkdtempSync(join(tmpdir(), "xfail-")), "expected.txt");
      writeFileSync(file, "grpc.encoding.flag-without-encoding # grpc-js accepts it\n");
      const partial = await runConformance({ grpc: { address: server.address }, only: ["grpc.defaults.*"], seed: 1 });
      expect(partial).toMatchObject({
        verdict: "partial",
        exitCode: 0,
        selection: { only: ["grpc.defaults.*"], strict: false, profiles: ["contract"] },
        scope: { interfaces: ["grpc"] },
      });
      expect(partial.unjudged.find((u) => u.id === "grpc.stateless.history-independent")).toMatchObject({
        why: "selection",
      });
      const waived = await runConformance({
        grpc: { address: server.address },
        expectFailures: file,
        claims: { replicas: "single" },
        seed: 1,
        runs: 10,
      });
      expect(waived.checks.filter((c) => c.gating).map((c) => c.id)).toEqual([]);
      expect(waived).toMatchObject({
        verdict: "conformant with waivers",
        exitCode: 0,
        waivers: [{ id: "grpc.encoding.flag-without-encoding", reason: "grpc-js accepts it" }],
      });
    },
  );
});

describe("a target that completes the HTTP/2 handshake and never answers a call", () => {
  it(
    "ends the run by itself, unreachable and no verdict: a few calls wait out the timeout, the rest fail at once " +
      "with the reason",
    async () => {
      const http2 = await import("node:http2");
      // Streams are accepted and left open: no headers, no data, no reset.
      const silent = http2.createServer();
      silent.on("stream", (stream) => stream.on("error", () => undefined));
      const sessions = new Set<import("node:http2").ServerHttp2Session>();
      silent.on("session", (s) => (sessions.add(s), s.on("close", () => sessions.delete(s))));
      await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
      const port = (silent.address() as import("node:net").AddressInfo).port;
      try {
        const results: string[] = [];
        const run = runConformance({
          grpc: { address: `127.0.0.1:${port}`, timeoutMs: 300 },
          skip: ["contract.*"],
          runs: 5,
          reporters: [{ onCheckResult: (r) => void results.push(`${r.status} ${r.message}`) }],
        });
        // It answered none of the checks' calls: nothing about it was judged, so no verdict, never "not conformant".
        const err = (await run.then(
          () => undefined,
          (e: unknown) => e,
        )) as ConformanceError | undefined;
        expect(err).toBeInstanceOf(ConformanceError);
        expect(err?.code).toBe("unreachable");
        expect(err?.message).toMatch(
          new RegExp(
            `^no verdict: --grpc 127\\.0\\.0\\.1:${port} answered none of the checks' calls after the set-up ` +
              `probes \\(\\d+ failed at the connection level; the first: `,
          ),
        );
        const errored = results.filter((r) => r.startsWith("error "));
        expect(errored.length).toBeGreaterThan(10);
        // The guard trips at 3 silent calls in a row; calls side by side may all time out at once, so the count it names
        // may be higher, never lower.
        const silentCalls = /stopped answering: (\d+) calls in a row got no answer within 300 ms/.exec(
          err?.message ?? "",
        );
        expect(silentCalls, err?.message).not.toBeNull();
        expect(Number(silentCalls?.[1])).toBeGreaterThanOrEqual(3);
        expect(results.filter((r) => r.startsWith("pass "))).toEqual([]);
      } finally {
        for (const s of sessions) s.destroy();
        await new Promise((r) => silent.close(r));
      }
    },
  );
});
