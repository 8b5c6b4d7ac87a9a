// The calls a gRPC check makes are remembered with whether each got a Message back, judged only when a failure asks.
import { describe, expect, it } from "vitest";
import { encodeMessage } from "../../common/message.js";
import { failingCall, recording, type RecordedCall } from "../../harness/call-recorder.js";
import type { GrpcTarget } from "../../harness/targets/grpc-target.js";
import type { UnaryResult } from "../../harness/protocols/rpc.js";

/** A reply whose bytes count how often they are read (a decoder reads the length first). */
function counted(bytes: Uint8Array): { reply: Uint8Array; reads: () => number } {
  let reads = 0;
  const reply = new Uint8Array(bytes);
  const length = reply.length;
  Object.defineProperty(reply, "length", {
    get: () => {
      reads++;
      return length;
    },
  });
  return { reply, reads: () => reads };
}

/** A target that answers each call with the next of these results. */
function answering(results: UnaryResult[]): GrpcTarget {
  return { unary: async () => results.shift() as UnaryResult } as unknown as GrpcTarget;
}

const ok = (response: Uint8Array): UnaryResult => ({ code: 0, details: "", response, headers: {}, trailers: {} });

describe("recording", () => {
  it("reads no reply while the check runs, and judges them when a failure asks for the request that shows it", async () => {
    const good = counted(encodeMessage("hi"));
    const garbage = counted(new Uint8Array([0xff, 0xff]));
    const calls: RecordedCall[] = [];
    const target = recording(answering([ok(good.reply), ok(garbage.reply), ok(good.reply)]), calls);
    const requests = [encodeMessage("a"), encodeMessage("b"), encodeMessage("c")];
    for (const r of requests) await target.unary(r);
    expect([good.reads(), garbage.reads()]).toEqual([0, 0]);
    // The last call was answered with a Message; the one before it was not: that is the request that shows it.
    expect(failingCall(calls)?.request).toBe(requests[1]);
    expect(calls.map((c) => c.answered)).toEqual([true, false, true]);
  });

  it("counts a call with a status other than OK as not answered, whatever bytes came", async () => {
    const calls: RecordedCall[] = [];
    const target = recording(answering([{ ...ok(encodeMessage("x")), code: 13 }]), calls);
    await target.unary(encodeMessage("a"));
    expect(calls[0]?.answered).toBe(false);
  });
});
