// The guards are interceptors over any unary call: the crowding guard sends again alone a call refused while others
// were in flight, and the silence guard ends the waiting on a target that stopped answering, naming the input.
import { describe, expect, it } from "vitest";
import { encodeMessage } from "../../../common/message.js";
import {
  createSilenceGuard,
  TargetStopped,
  withCrowdingGuard,
  type UnaryCall,
} from "../../../harness/targets/guards.js";
import { Status, type UnaryResult } from "../../../harness/protocols/rpc.js";

const ok = (): UnaryResult => ({ code: Status.OK, details: "", response: new Uint8Array(), headers: {}, trailers: {} });
const status = (code: number, headers: Record<string, string[]> = { ":status": ["200"] }): UnaryResult => ({
  code,
  details: "",
  headers,
  trailers: {},
});
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

  it("sends a crowded refusal of a request larger than any served again alone, and takes the one that stays at its word", async () => {
    // A size limit: the refusal stays when the request is sent alone, and calls go back to side by side after it.
    let calls = 0;
    const call = withCrowdingGuard(
      async (request) => (calls++, await tick(), request.length > 100 ? status(Status.RESOURCE_EXHAUSTED) : ok()),
      async () => undefined,
    );
    const [, big] = await Promise.all([call(encodeMessage("small")), call(new Uint8Array(1000))]);
    expect([big.code, calls]).toEqual([Status.RESOURCE_EXHAUSTED, 3]);
    // Alone from the start, a refusal is not sent again.
    expect((await call(new Uint8Array(1000))).code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(calls).toBe(4);
  });

  it("serves a request larger than any served before when its refusal was a cap on calls at once", async () => {
    // The first call a capped server refuses may be larger than any it served: checks run side by side in any order.
    const server = oneAtATime();
    const call = withCrowdingGuard(server.next, async () => undefined);
    const results = await Promise.all([call(encodeMessage("small")), call(new Uint8Array(1000))]);
    expect(results.map((r) => r.code)).toEqual([Status.OK, Status.OK]);
    expect(server.refused()).toBe(1);
  });
});

describe("the silence guard", () => {
  it("after calls in a row with no answer, and a request served before unanswered too, ends the run naming the input", async () => {
    let dead = false;
    const silentResult = status(Status.UNAVAILABLE, {});
    const guard = createSilenceGuard({
      address: "127.0.0.1:9",
      timeoutMs: 100,
      resend: async () => (dead ? silentResult : ok()),
    });
    const call = guard.intercept(async () => (dead ? silentResult : ok()));
    const good = encodeMessage("known good");
    guard.served(good, undefined, await call(good));
    dead = true;
    for (let i = 0; i < 3; i++) expect((await call(encodeMessage("killer"))).code).toBe(Status.UNAVAILABLE);
    await expect(call(encodeMessage("later"))).rejects.toMatchObject({
      code: "unreachable",
      message: expect.stringMatching(/stopped answering after the request with body "killer"/),
    });
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

describe("the silence guard's second attempt", () => {
  /** A target that answers each request after `delays` ms in turn (the last delay for every attempt after). */
  const slowThen = (delays: number[]) => {
    let attempts = 0;
    const next: UnaryCall = async (_request, options) => {
      const delay = delays[Math.min(attempts++, delays.length - 1)] as number;
      const deadline = options?.deadlineMs ?? 100;
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, deadline)));
      return delay >= deadline ? status(Status.DEADLINE_EXCEEDED, {}) : ok();
    };
    return { next, attempts: () => attempts };
  };

  it("makes a call that got no answer in time once more, and gives the check the answer to that", async () => {
    // A starved machine (the harness's process or the target's) can miss one deadline: the check must not pay for it.
    const target = slowThen([150, 1]);
    const guard = createSilenceGuard({ address: "127.0.0.1:9", timeoutMs: 100, resend: async () => ok() });
    const result = await guard.intercept(target.next)(encodeMessage("slow once"));
    expect([result.code, target.attempts()]).toEqual([Status.OK, 2]);
  });

  it("gives the check the second silence of a request the target never answers in time, and makes no third", async () => {
    const target = slowThen([150]);
    const guard = createSilenceGuard({ address: "127.0.0.1:9", timeoutMs: 100, resend: async () => ok() });
    const result = await guard.intercept(target.next)(encodeMessage("hangs"));
    expect([result.code, target.attempts()]).toEqual([Status.DEADLINE_EXCEEDED, 2]);
  });

  it(
    "makes no second attempt of a DEADLINE_EXCEEDED the target sent before the deadline, nor of a dropped " +
      "connection",
    async () => {
      let attempts = 0;
      const guard = createSilenceGuard({ address: "127.0.0.1:9", timeoutMs: 100, resend: async () => ok() });
      const answered = await guard.intercept(async () => (attempts++, status(Status.DEADLINE_EXCEEDED)))(
        encodeMessage("a"),
      );
      const dropped = await guard.intercept(async () => (attempts++, status(Status.UNAVAILABLE, {})))(
        encodeMessage("b"),
      );
      expect([answered.code, dropped.code, attempts]).toEqual([Status.DEADLINE_EXCEEDED, Status.UNAVAILABLE, 2]);
    },
  );

  it("makes none while another silence stands: a target that stopped costs one timeout more, not one per call", async () => {
    const target = slowThen([150]);
    const guard = createSilenceGuard({ address: "127.0.0.1:9", timeoutMs: 100, resend: async () => ok() });
    const call = guard.intercept(target.next);
    await call(encodeMessage("first"));
    expect(target.attempts()).toBe(2);
    await call(encodeMessage("second"));
    expect(target.attempts()).toBe(3);
  });

  it("makes a hand-built request that got no answer in time once more", async () => {
    let attempts = 0;
    const guard = createSilenceGuard({ address: "127.0.0.1:9", timeoutMs: 100, resend: async () => ok() });
    const timedOut = (r: { failure?: string }) => r.failure === "timeout";
    const result = await guard.run(
      encodeMessage("raw"),
      async () => (++attempts === 1 ? { failure: "timeout" } : {}),
      timedOut,
      timedOut,
    );
    expect([result, attempts]).toEqual([{}, 2]);
  });
});

/** A call whose result the test gives when it chooses: the order calls end in is the test's. */
function controlled() {
  const pending = new Map<string, (r: UnaryResult) => void>();
  /** Results given before the guard passed the call on (it asks first whether the target is gone). */
  const early = new Map<string, UnaryResult>();
  const key = (request: Uint8Array) => Buffer.from(request).toString("hex");
  const next: UnaryCall = (request) => {
    const given = early.get(key(request));
    early.delete(key(request));
    return given ? Promise.resolve(given) : new Promise((resolve) => pending.set(key(request), resolve));
  };
  const end = (request: Uint8Array, r: UnaryResult) => {
    const resolve = pending.get(key(request));
    pending.delete(key(request));
    if (resolve) resolve(r);
    else early.set(key(request), r);
  };
  return { next, end };
}

/** A guard over `controlled` calls whose target has served "known good" `times` times; `dead` says what resend gets. */
async function guarded(resend: () => UnaryResult, times = 1) {
  const target = controlled();
  const guard = createSilenceGuard({ address: "127.0.0.1:9", timeoutMs: 100, resend: async () => resend() });
  const call = guard.intercept(target.next);
  const good = encodeMessage("known good");
  for (let i = 0; i < times; i++) {
    const served = call(good);
    target.end(good, ok());
    guard.served(good, undefined, await served);
  }
  /** One call that ends with `result` once it is under way. */
  const ended = async (request: Uint8Array, result: UnaryResult) => {
    const c = call(request);
    target.end(request, result);
    return c;
  };
  return { call, end: target.end, good, ended };
}

describe("the silence guard's suspects, read from evidence", () => {
  const dropped = status(Status.UNAVAILABLE, {});
  const text = (r: Uint8Array | undefined) => Buffer.from(r as Uint8Array).toString();

  it(
    "names the input that went silent first though a reply sent before the target died came after it, and a new " +
      "call went silent after that",
    async () => {
      let dead = false;
      const { call, end } = await guarded(() => (dead ? dropped : ok()));
      const [late, killer, beside] = [encodeMessage("late"), encodeMessage("killer"), encodeMessage("beside")];
      const calls = [late, killer, beside].map((r) => call(r));
      await tick();
      dead = true;
      end(killer, dropped);
      await calls[1];
      // The target's reply to a call begun before it died arrives after the killer's connection dropped.
      end(late, ok());
      await calls[0];
      // A call begun after the first silence, on a new connection, goes silent: the guard named only what was under
      // way then, and the killer had ended.
      const after = encodeMessage("after");
      const afterCall = call(after);
      end(after, dropped);
      end(beside, dropped);
      await Promise.all([afterCall, calls[2]]);
      const err = await call(encodeMessage("next")).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TargetStopped);
      const stopped = err as TargetStopped;
      expect(stopped.message).toMatch(/"killer"/);
      // Sent after the first silence: not what stopped it.
      expect(stopped.message).not.toMatch(/"after"/);
      expect(stopped.suspects.map(text)).toEqual([beside, killer].map(text));
    },
  );

  it("ranks them: never served before first, then those delivered whole, then the latest sent first", async () => {
    let dead = false;
    const { call, end, good } = await guarded(() => (dead ? dropped : ok()), 2);
    // Sent in this order: a body past HTTP/2's initial window, the known-good one again, then two small new ones.
    const big = encodeMessage("x".repeat(70_000));
    const sent = [big, good, encodeMessage("a"), encodeMessage("b")];
    const calls: Promise<UnaryResult>[] = [];
    for (const r of sent) {
      calls.push(call(r));
      await tick();
    }
    dead = true;
    for (const r of sent) end(r, dropped);
    await Promise.all(calls);
    const err = (await call(encodeMessage("next")).catch((e: unknown) => e)) as TargetStopped;
    expect(err.suspects.map((r) => r?.length)).toEqual([sent[3], sent[2], big, good].map((r) => r?.length));
    expect(err.message).toMatch(
      /one of the 4 requests it had not answered when it went silent, likeliest first \(the request with body "b"/,
    );
  });

  it("takes a silence as outlived once a call begun after it is answered: a hang on one input is no death", async () => {
    let resent = 0;
    const { ended, good } = await guarded(() => (resent++, ok()));
    await ended(encodeMessage("hangs"), dropped);
    await ended(good, ok());
    for (const body of ["x", "y"]) await ended(encodeMessage(body), dropped);
    // Two silences since the answer, not three: the target is not asked whether it lives.
    expect((await ended(good, ok())).code).toBe(Status.OK);
    expect(resent).toBe(0);
    // That answer outlived them too; three silences after it, the target is asked, answers, and calls go on.
    for (const body of ["z1", "z2", "z3"]) await ended(encodeMessage(body), dropped);
    expect((await ended(good, ok())).code).toBe(Status.OK);
    expect(resent).toBe(1);
  });
});
