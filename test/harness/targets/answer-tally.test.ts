// The tally of what each target answered while the checks ran, with stand-in targets (no sockets): a target is
// "unanswered" only when it failed at the connection level and never answered; a deadline that ran out is no evidence.
import { describe, expect, it } from "vitest";
import { ConformanceError } from "../../../harness/errors.js";
import { createAnswerTally } from "../../../harness/targets/answer-tally.js";
import { Status, type UnaryResult } from "../../../harness/protocols/rpc.js";
import type { HttpResponse } from "../../../harness/targets/http-target.js";

const unary = (code: number, details = "", headers: Record<string, string[]> = {}): UnaryResult => ({
  code,
  details,
  headers,
  trailers: {},
});
const refusedHttp: HttpResponse = {
  status: 0,
  statusText: "",
  headers: {},
  body: new Uint8Array(),
  text: "",
  failure: { kind: "connection", message: "connect ECONNREFUSED 127.0.0.1:9" },
};

describe("the answer tally", () => {
  it("names a target every call of which failed at the connection level, with the first failure's words", async () => {
    const tally = createAnswerTally();
    const rpc = tally.watch(
      { unary: async () => unary(Status.UNAVAILABLE, "connect ECONNREFUSED 127.0.0.1:9") },
      "--grpc 127.0.0.1:9",
    );
    await rpc.unary();
    await rpc.unary();
    expect(tally.unanswered()).toEqual([
      { target: "--grpc 127.0.0.1:9", failed: 2, first: "connect ECONNREFUSED 127.0.0.1:9" },
    ]);
  });

  it("counts a target the guards found stopped (their unreachable error) as unanswered, and lets the error through", async () => {
    const tally = createAnswerTally();
    const http = tally.watch(
      { request: async () => Promise.reject(new ConformanceError("unreachable", "http://x stopped answering")) },
      "--http http://x",
    );
    await expect(http.request()).rejects.toThrow("stopped answering");
    expect(tally.unanswered()).toEqual([{ target: "--http http://x", failed: 1, first: "http://x stopped answering" }]);
  });

  it("one answer of any kind (an error status, an HTTP 500) clears a target", async () => {
    const tally = createAnswerTally();
    let n = 0;
    const rpc = tally.watch(
      { unary: async () => (n++ === 0 ? unary(Status.UNAVAILABLE, "refused") : unary(Status.UNIMPLEMENTED, "no")) },
      "--connect http://y",
    );
    const http = tally.watch(
      { request: async () => (n++ === 2 ? { ...refusedHttp, status: 500, failure: undefined } : refusedHttp) },
      "--http http://z",
    );
    await rpc.unary();
    await rpc.unary();
    await http.request();
    await http.request();
    expect(tally.unanswered()).toEqual([]);
  });

  it(
    "takes a deadline that ran out, or a call cancelled, as no evidence either way; and a target never called as " +
      "nothing",
    async () => {
      const tally = createAnswerTally();
      const rpc = tally.watch(
        {
          unary: async () => unary(Status.DEADLINE_EXCEEDED, "deadline"),
          raw: async () => ({
            headers: {},
            trailers: {},
            trailersOnly: false,
            frames: [],
            leftover: 0,
            failure: { kind: "timeout" },
          }),
        },
        "--grpc a",
      );
      tally.watch({ unary: async () => unary(Status.UNAVAILABLE) }, "--replica b");
      await rpc.unary();
      await rpc.raw();
      expect(tally.unanswered()).toEqual([]);
    },
  );

  it("leaves other members alone: a property reads through, a non-sending method is not counted", () => {
    const tally = createAnswerTally();
    const target = tally.watch({ address: "a", curl: () => "curl a" }, "--http a");
    expect(target.address).toBe("a");
    expect(target.curl()).toBe("curl a");
    expect(tally.unanswered()).toEqual([]);
  });
});
