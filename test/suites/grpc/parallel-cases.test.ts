// A property's cases tried side by side find what one at a time finds: the same first failure, the same shrunk
// counterexample and the same replay path, so a replay (--concurrency or not) reproduces the verdict.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGrpcJsBase } from "../../../fixtures/broken-servers/grpc/_base/grpc-js.js";
import type { StartedServer } from "../../../fixtures/broken-servers/grpc/types.js";
import { runConformance } from "../../../harness/api/run-conformance.js";

let server: StartedServer;
let calls = 0;
beforeAll(async () => {
  // Refuses mid-length bodies only: the fixed cases pass, and the first failure is a drawn case, not the first.
  server = await startGrpcJsBase({
    hello: ({ message }) => {
      calls++;
      const body = message?.body ?? "";
      return body.length >= 24 && body.length <= 64 ? { code: 13, details: "mid-length body" } : body;
    },
  });
});
afterAll(() => server.close());

const run = (concurrency: number) =>
  runConformance({
    grpc: { address: server.address },
    only: ["grpc.strings.unicode"],
    seed: 3,
    runs: 100,
    concurrency,
  });

describe("grpc.strings.unicode with cases side by side", () => {
  it("reports the same failure, counterexample and path as one case at a time", async () => {
    const one = (await run(1)).checks[0];
    const callsOne = calls;
    const eight = (await run(8)).checks[0];
    expect(one?.status).toBe("fail");
    expect(one?.message).toMatch(/mid-length body/);
    // The failure is among the drawn cases, past the fixed ones: side by side had work to do before it.
    expect(Number(one?.replayArgs.path?.split(":")[0])).toBeGreaterThanOrEqual(7);
    expect(eight?.status).toBe(one?.status);
    expect(eight?.counterexample).toBe(one?.counterexample);
    expect(eight?.replayArgs.path).toBe(one?.replayArgs.path);
    // Cases seen side by side were not asked again while fast-check replayed up to the failure.
    expect(calls - callsOne).toBeLessThan(callsOne + 8 * 2);
  });

  it("passes a server that serves every body, over every case", async () => {
    const healthy = await startGrpcJsBase({});
    try {
      const check = (
        await runConformance({
          grpc: { address: healthy.address },
          only: ["grpc.strings.unicode"],
          seed: 3,
          runs: 100,
          concurrency: 8,
        })
      ).checks[0];
      expect(check?.status).toBe("pass");
      expect(check?.message).toMatch(/^100 cases held/);
    } finally {
      await healthy.close();
    }
  });
});
