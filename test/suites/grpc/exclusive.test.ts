// The gate that lets the history checks run side by side: a probe that counts calls or samples a reply has the
// target to itself while it does, and a target that did not answer the variation probe gets its history checks one
// after another, as before they ran side by side.
import { describe, expect, it } from "vitest";
import { encodeMessage } from "../../../common/message.js";
import type { CheckContext } from "../../../harness/check.js";
import type { GrpcTarget } from "../../../harness/targets/grpc-target.js";
import { grpcContext } from "../../helpers/grpc-context.js";
import type { UnaryResult } from "../../../harness/protocols/rpc.js";
import { hello } from "../../../suites/grpc/_internals/calls.js";
import { exclusively, gated } from "../../../suites/grpc/_internals/exclusive.js";
import { besideOthers, variationProfile } from "../../../suites/grpc/_internals/variation.js";

const tick = (ms = 2) => new Promise((r) => setTimeout(r, ms));

/** A target answering "Hello, <body>" (or nothing, status 14) after a short wait, logging each call's start and end. */
function fakeContext(
  answers: boolean,
  log: string[],
  reply: (body: string, call: number) => string = (body) => `Hello, ${body}`,
): CheckContext {
  let calls = 0;
  const grpc = {
    address: "fake",
    protocol: "grpc",
    get callCount() {
      return calls;
    },
    async unary(request: Uint8Array): Promise<UnaryResult> {
      calls++;
      const body = Buffer.from(request.subarray(2)).toString();
      log.push(`start ${body}`);
      await tick();
      log.push(`end ${body}`);
      if (!answers) return { code: 14, details: "no", headers: {}, trailers: {} } as unknown as UnaryResult;
      return {
        code: 0,
        details: "",
        response: encodeMessage(reply(body, calls)),
        headers: {},
        trailers: {},
      } as unknown as UnaryResult;
    },
    raw: () => Promise.reject(new Error("not here")),
    close: async () => undefined,
  } as unknown as GrpcTarget;
  return grpcContext(grpc, 5, 8);
}

describe("exclusively", () => {
  it("waits for calls under way, holds other calls until it ends, and lets its own calls through", async () => {
    const log: string[] = [];
    const ctx = fakeContext(true, log);
    const before = hello(ctx, encodeMessage("before"));
    await tick(0);
    const section = exclusively(ctx, async () => {
      log.push("section starts");
      await hello(ctx, encodeMessage("mine-1"));
      await hello(ctx, encodeMessage("mine-2"));
      log.push("section ends");
    });
    await tick(0);
    const during = hello(ctx, encodeMessage("during"));
    await Promise.all([before, section, during]);
    expect(log).toEqual([
      "start before",
      "end before",
      "section starts",
      "start mine-1",
      "end mine-1",
      "start mine-2",
      "end mine-2",
      "section ends",
      "start during",
      "end during",
    ]);
  });

  it("runs sections one after another, in the order asked, and goes on past one that throws", async () => {
    const ctx = fakeContext(true, []);
    const order: string[] = [];
    const a = exclusively(
      ctx,
      async () => (order.push("a"), await tick(), order.push("a done"), Promise.reject(new Error("a failed"))),
    );
    const b = exclusively(ctx, async () => (order.push("b"), await gated(ctx, () => tick()), order.push("b done")));
    await expect(a).rejects.toThrow("a failed");
    await b;
    expect(order).toEqual(["a", "a done", "b", "b done"]);
  });
});

describe("besideOthers", () => {
  it("runs bodies side by side once the variation probe's first samples got replies", async () => {
    const ctx = fakeContext(true, []);
    let inFlight = 0;
    let peak = 0;
    const body = async () => {
      peak = Math.max(peak, ++inFlight);
      await tick(5);
      inFlight--;
    };
    await Promise.all([besideOthers(ctx, body), besideOthers(ctx, body), besideOthers(ctx, body)]);
    expect(peak).toBe(3);
  });

  it("runs bodies one at a time, in the order they asked, when the target did not answer the probe", async () => {
    const ctx = fakeContext(false, []);
    const order: string[] = [];
    let inFlight = 0;
    let peak = 0;
    const body = (name: string) => async () => {
      peak = Math.max(peak, ++inFlight);
      order.push(name);
      await hello(ctx, encodeMessage(name));
      inFlight--;
    };
    await Promise.all(["a", "b", "c"].map((n) => besideOthers(ctx, body(n))));
    expect(peak).toBe(1);
    expect(order).toEqual(["a", "b", "c"]);
  });
});

describe("the variation probe beside other calls", () => {
  const probeCalls = (log: string[]) => log.filter((l) => l.startsWith("start variation-probe-")).length;

  it(
    "measures again, alone, a reply that changed while other calls came between: what the calls did is not taken " +
      "for how it varies",
    async () => {
      const log: string[] = [];
      // State that starts at the 8th call: alone, the probe's five calls never reach it.
      const ctx = fakeContext(true, log, (body, call) => (call >= 8 ? `Hello, ${body} (late)` : `Hello, ${body}`));
      const profile = variationProfile(ctx);
      // Another history check's calls during the probe's pause.
      await tick(20);
      for (let i = 0; i < 5; i++) await hello(ctx, encodeMessage(`other-${i}`));
      const measured = await profile;
      expect(probeCalls(log)).toBe(10);
      expect(measured.kind).toBe("same");
      expect(measured.deterministic).toBe(true);
    },
  );

  it("takes replies that varied with no other call between as they are, without a second pause", async () => {
    const log: string[] = [];
    let n = 0;
    const ctx = fakeContext(true, log, (body) => `Hello, ${body} nonce:${(n++).toString(36)}Zq${n % 7}`);
    const measured = await variationProfile(ctx);
    expect(probeCalls(log)).toBe(5);
    expect(measured.deterministic).toBe(false);
  });
});
