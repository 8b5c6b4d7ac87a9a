// Properties end with a verdict whatever the server does with long bodies: shrinking is cheap and bounded, and
// the event loop keeps turning, so the check's own bound can always fire.
import { afterEach, describe, expect, it } from "vitest";
import { startGrpcJsBase } from "../../../fixtures/broken-servers/grpc/_base/grpc-js.js";
import type { StartedServer } from "../../../fixtures/broken-servers/grpc/types.js";
import { runConformance } from "../../../harness/api/run-conformance.js";

let server: StartedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** How often a 10 ms timer fired while `work` ran: zero would mean the event loop was held the whole time. */
async function ticksDuring<T>(work: Promise<T>): Promise<{ value: T; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  try {
    return { value: await work, ticks };
  } finally {
    clearInterval(timer);
  }
}

describe("a server that fails on long bodies", () => {
  it("fails grpc.strings.unicode with a verdict, not the check's time bound, and the loop keeps turning", async () => {
    // Bodies over 2,000 bytes with a character past ASCII get INTERNAL (a buffer sized in characters, say):
    // every long case fails, each must shrink cheaply, and the limit probe (ASCII) sees no limit to blame.
    server = await startGrpcJsBase({
      hello: ({ message }) => {
        const body = message?.body ?? "";
        return Buffer.byteLength(body) > 2000 && Buffer.byteLength(body) !== body.length
          ? { code: 13, details: "too long for this server" }
          : body;
      },
    });
    const { value: report, ticks } = await ticksDuring(
      runConformance({
        grpc: { address: server.address, timeoutMs: 2000 },
        only: ["grpc.strings.unicode"],
        seed: 5,
        runs: 100,
        checkTimeoutMs: 30_000,
      }),
    );
    const check = report.checks.find((c) => c.id === "grpc.strings.unicode");
    expect(check?.status).toBe("fail");
    expect(check?.message).toMatch(/INTERNAL: too long for this server/);
    // The 64 KiB fixed case fails first, reported as a repeated code point, not as a string to walk.
    expect(check?.counterexample).toMatch(/repeated \d+ times/);
    expect(ticks).toBeGreaterThan(0);
  });
});

describe("a server with a 64 KiB receive limit", () => {
  it("is served every Unicode body: the sizes stay under the limit the run found", async () => {
    server = await startGrpcJsBase({ serverOptions: { "grpc.max_receive_message_length": 64 * 1024 } });
    const report = await runConformance({
      grpc: { address: server.address },
      only: ["grpc.strings.unicode", "grpc.limits.large-message", "grpc.limits.over-limit"],
      seed: 9,
      runs: 30,
    });
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ["grpc.strings.unicode", "pass"],
      ["grpc.limits.large-message", "pass"],
      ["grpc.limits.over-limit", "pass"],
    ]);
    expect(report.checks.find((c) => c.id === "grpc.limits.large-message")?.message).toMatch(
      /receive limit between 60 KiB \(served\) and 120 KiB/,
    );
  });
});
