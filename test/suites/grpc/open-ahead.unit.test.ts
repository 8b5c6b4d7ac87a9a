// What the gRPC checks ask to have opened ahead: nothing at --concurrency 1, within the check's bound otherwise; a
// property asks for the fresh calls of the cases it tries side by side and gives the asking back when they end.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeMessage } from "../../../common/message.js";
import type { CheckContext } from "../../../harness/check.js";
import { grpcContext } from "../../helpers/grpc-context.js";
import type { UnaryResult } from "../../../harness/protocols/rpc.js";
import type { GrpcTarget } from "../../../harness/targets/grpc-target.js";
import { hello, openAhead } from "../../../suites/grpc/_internals/calls.js";
import { checkProperty } from "../../../suites/grpc/_internals/property.js";

/** A target that serves every call, logging each asking for connections ahead, each giving back, each fresh call. */
function fakeContext(parallelism: number, log: string[]): CheckContext {
  const grpc = {
    address: "fake",
    protocol: "grpc",
    callCount: 0,
    async unary(_request: Uint8Array, options?: { channel?: string }): Promise<UnaryResult> {
      if (options?.channel === "fresh") log.push("fresh call");
      return { code: 0, details: "", response: encodeMessage("hi"), headers: {}, trailers: {} } as UnaryResult;
    },
    openAhead(count: number, limit: number) {
      log.push(`ask ${count} within ${limit}`);
      return () => log.push("give back");
    },
    raw: () => Promise.reject(new Error("not here")),
    close: async () => undefined,
  } as unknown as GrpcTarget;
  return grpcContext(grpc, 6, parallelism);
}

describe("openAhead", () => {
  it("asks within the check's bound, and not at all at --concurrency 1 or for none", () => {
    const log: string[] = [];
    openAhead(fakeContext(8, log), 3)();
    openAhead(fakeContext(1, log), 3)();
    openAhead(fakeContext(8, log), 0)();
    expect(log).toEqual(["ask 3 within 8", "give back"]);
  });
});

describe("checkProperty with fresh calls per case", () => {
  it("asks for every case's fresh calls before the cases side by side, and gives the asking back after them", async () => {
    const log: string[] = [];
    const ctx = fakeContext(4, log);
    const outcome = await checkProperty(
      ctx,
      fc.integer({ min: 0, max: 3 }),
      async (n) => {
        for (let i = 0; i < n; i++) await hello(ctx, encodeMessage(`case ${n}`), { channel: "fresh" });
      },
      String,
      { fresh: (n) => n },
    );
    expect(outcome.status).toBe("pass");
    const cases = fc.sample(fc.integer({ min: 0, max: 3 }), { seed: 1, numRuns: 6 });
    const asked = log.indexOf(`ask ${cases.reduce((a, b) => a + b, 0)} within 4`);
    // The liveness call first (fresh, before any asking), then the asking, the cases' calls, and the giving back.
    expect(asked).toBe(1);
    expect(log.at(-1)).toBe("give back");
    expect(log.filter((l) => l === "fresh call")).toHaveLength(1 + cases.reduce((a, b) => a + b, 0));
  });
});

describe("checkProperty with weighed cases", () => {
  it("starts the cases side by side heaviest first, ties in fast-check's order, and judges them all", async () => {
    const log: string[] = [];
    const ctx = fakeContext(2, log);
    const started: number[] = [];
    const outcome = await checkProperty(
      ctx,
      fc.integer({ min: 0, max: 9 }),
      async (n) => {
        started.push(n);
        await hello(ctx, encodeMessage(`case ${n}`));
      },
      String,
      { weight: (n) => n },
    );
    expect(outcome.status).toBe("pass");
    const cases = fc.sample(fc.integer({ min: 0, max: 9 }), { seed: 1, numRuns: 6 });
    expect(started).toEqual([...cases].sort((a, b) => b - a));
  });
});
