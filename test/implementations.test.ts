// No false failure: every correct implementation, on every stack, passes every gating check, with a second
// instance as its replica. What does not gate is asserted too, so that a change in either shows.
import { afterAll, describe, expect, it } from "vitest";
import { implementations, type RunningImplementation } from "../fixtures/implementations/index.js";
import { contractChecks } from "../suites/index.js";
import { checkVerdicts } from "./helpers/cli.js";

/**
 * Protocol-profile and SHOULD checks each stack fails, by its library's own behaviour, not its author's: shown in
 * reports, never gating by default.
 */
const NOT_GATING: Record<string, string[]> = {
  reference: [],
  go: [
    // grpc-go registers no gzip codec unless the program imports encoding/gzip; it refuses gzip with UNIMPLEMENTED
    // (right) but leaves out grpc-accept-encoding, which compression.md says the refusal should carry.
    "grpc.encoding.accept-encoding",
    "grpc.encoding.gzip",
    // grpc-go resets the stream (RST_STREAM PROTOCOL_ERROR) for a non-gRPC content-type instead of HTTP 415.
    "grpc.http.content-type",
    // grpc-go answers a unary call with no request message UNKNOWN ("EOF") and serves one with two, where the
    // status-code document asks for UNIMPLEMENTED.
    "grpc.unary.cardinality",
  ],
  python: [
    // gRPC core (1.51) serves a message whose grpc-encoding it does not know, and one whose compressed flag is set
    // without any grpc-encoding, instead of refusing them.
    "grpc.encoding.flag-without-encoding",
    "grpc.encoding.unsupported",
    // It serves a request whatever its content-type, so text/plain gets an answer rather than HTTP 415.
    "grpc.http.content-type",
    // It serves a unary call with two request messages (the last one) instead of refusing it.
    "grpc.unary.cardinality",
  ],
};

/** Bounds on each phase, so that a slow machine fails with the phase named rather than the whole test timing out. */
const START_MS = 240_000; // a cold Go build compiles grpc-go from source
const CHECK_MS = 120_000;

function within<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const falseFailures = new Map<string, string[]>();
afterAll(() => {
  const tried = falseFailures.size;
  const wrong = [...falseFailures.values()].filter((ids) => ids.length > 0).length;
  if (tried > 0) console.log(`false failures on correct implementations: ${wrong}/${tried} (${[...falseFailures.keys()].join(", ")})`);
});

describe.each(implementations)("the $name implementation ($stack), replying $reply", (impl) => {
  it("passes every gating check, its replica included, and fails exactly its known non-gating checks", async (t) => {
    const missing = await impl.missing();
    if (missing !== undefined) {
      // In CI the toolchains are installed by .ci/run: a missing one is a broken pipeline, not a reason to skip.
      if (process.env.CI === "true") throw new Error(`${impl.name}: ${missing}`);
      t.skip(`${impl.name}: ${missing}; install it to run this proof`);
    }
    const started: RunningImplementation[] = [];
    try {
      // One at a time, so that a second start that fails still leaves the first to be stopped.
      started.push(await within(`starting ${impl.name}`, START_MS, impl.start()));
      started.push(await within(`starting a second ${impl.name}`, START_MS, impl.start()));
      const [primary, replica] = started as [RunningImplementation, RunningImplementation];
      const run = await within(`checking ${impl.name}`, CHECK_MS, checkVerdicts([
        "--grpc", primary.address,
        "--replica", replica.address,
        "--skip", contractChecks.map((c) => c.id).join(","),
        "--seed", "7",
        "--runs", "25",
      ]));
      const gating = run.report.checks.filter((c) => c.gating).map((c) => `${c.id}: ${c.message}`);
      falseFailures.set(impl.name, gating);
      expect(gating).toEqual([]);
      expect(run.code).toBe(0);
      expect(run.failed).toEqual([...(NOT_GATING[impl.name] ?? [])].sort());
      // The replica was really compared, not skipped.
      expect(run.report.checks.find((c) => c.id === "grpc.stateless.replicas")?.status).toBe("pass");
    } finally {
      await Promise.all(started.map((s) => s.close()));
    }
  }, START_MS * 2 + CHECK_MS + 30_000);
});
