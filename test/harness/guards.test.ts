// The guards are interceptors over any unary call: the crowding guard sends again alone a call refused while others
// were in flight, and the silence guard ends the waiting on a target that stopped answering, naming the input.
import { describe, expect, it } from "vitest";
import { encodeMessage } from "../../contract/message.js";
import { createSilenceGuard, withCrowdingGuard, type UnaryCall } from "../../harness/targets/guards.js";
import { Status, type UnaryResult } from "../../harness/targets/grpc-target.js";

const ok = (): UnaryResult => ({ code: Status.OK, details: "", response: new Uint8Array(), headers: {}, trailers: {} });
const status = (code: number, headers: Record<string, string[]> = { ":status": ["200"] }): UnaryResult => ({ code, details: "", headers, trailers: {} });
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("the crowding guard", () => {
  /** A legal server that serves one call at a time and refuses the rest with RESOURCE_EXHAUSTED. */
  const oneAtATime = () => {
    let inFlight = 0;
    let refused = 0;
    const next: UnaryCall = async () => {
      if (inFlight > 0) return (refused++, status(Status.RESOURCE_EXHAUSTED));
      inFlight++;
      await tick();
      inFlight--;
      return ok();
    };
    return { next, refused: () => refused };
  };

  it("serves every call of a burst to a server that caps calls at once: the refused are sent again alone", async () => {
    const server = oneAtATime();
    const call = withCrowdingGuard(server.next, async () => undefined);
    await call(encodeMessage("warm"));
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => call(encodeMessage(`n${i}`))));
    expect(results.map((r) => r.code)).toEqual(Array(6).fill(Status.OK));
    expect(server.refused()).toBeGreaterThan(0);
  });

  it("takes a refusal of a request larger than any served at its word (a size limit), without a retry", async () => {
    let calls = 0;
    const call = withCrowdingGuard(async (request) => (calls++, await tick(), request.length > 100 ? status(Status.RESOURCE_EXHAUSTED) : ok()), async () => undefined);
    const [, big] = await Promise.all([call(encodeMessage("small")), call(new Uint8Array(1000))]);
    expect([big.code, calls]).toEqual([Status.RESOURCE_EXHAUSTED, 2]);
  });
});

describe("the silence guard", () => {
  it("after calls in a row with no answer, and a request served before unanswered too, ends the run naming the input", async () => {
    let dead = false;
    const silentResult = status(Status.UNAVAILABLE, {});
    const guard = createSilenceGuard({ address: "127.0.0.1:9", timeoutMs: 100, resend: async () => (dead ? silentResult : ok()) });
    const call = guard.intercept(async () => (dead ? silentResult : ok()));
    const good = encodeMessage("known good");
    guard.served(good, undefined, await call(good));
    dead = true;
    for (let i = 0; i < 3; i++) expect((await call(encodeMessage("killer"))).code).toBe(Status.UNAVAILABLE);
    await expect(call(encodeMessage("later"))).rejects.toMatchObject({ code: "unreachable", message: expect.stringMatching(/stopped answering after the request with body "killer"/) });
  });

  it("lets checks go on when the request served before is still answered: the silence was those inputs'", async () => {
    const guard = createSilenceGuard({ address: "127.0.0.1:9", timeoutMs: 100, resend: async () => ok() });
    const call = guard.intercept(async (request) => (request.length > 50 ? status(Status.UNAVAILABLE, {}) : ok()));
    const good = encodeMessage("known good");
    guard.served(good, undefined, await call(good));
    for (let i = 0; i < 4; i++) await call(new Uint8Array(60));
    expect((await call(good)).code).toBe(Status.OK);
  });
});
