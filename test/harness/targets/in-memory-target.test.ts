// Checks run against a handler function, with no socket: a correct Hello passes the checks that need no wire, and a
// handler with a defect fails the check that names it.
import { describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../../contract/message.js";
import { runConformance } from "../../../harness/api/run-conformance.js";
import { createInMemoryClient, type InMemoryHandler } from "../../../harness/targets/in-memory-client.js";
import { Status } from "../../../harness/protocols/rpc.js";
import { catalogue } from "../../../suites/index.js";

const HELLO = "/example.exampleService/Hello";

/** A correct Hello: the body echoed; what does not decode refused; other methods unimplemented. */
const echo: InMemoryHandler = ({ path, message }) => {
  if (path !== HELLO) return { code: Status.UNIMPLEMENTED, details: `no method ${path}` };
  const d = decodeMessage(message);
  if (!d.ok) return { code: /UTF-8/.test(d.reason) ? Status.INVALID_ARGUMENT : Status.INTERNAL, details: d.reason };
  return { message: encodeMessage(d.message.body) };
};

/** Every RPC check that needs no hand-built frames: what an in-memory target can judge. */
const unaryChecks = catalogue.filter((c) => c.area === "grpc" && c.protocols === undefined).map((c) => c.id);

const run = (handler: InMemoryHandler) =>
  runConformance({
    grpc: { address: "memory:hello", inMemory: createInMemoryClient(handler) },
    only: unaryChecks,
    seed: 4,
    runs: 20,
  });

describe("an in-memory target", () => {
  it("passes a correct handler on every check that needs no wire, with no socket opened", async () => {
    const report = await run(echo);
    const judged = report.checks.filter((c) => c.status !== "skip");
    expect(judged.length).toBeGreaterThanOrEqual(12);
    expect(
      report.checks.filter((c) => c.status === "fail" || c.status === "error").map((c) => [c.id, c.message]),
    ).toEqual([]);
    expect(report.target.grpc).toBe("memory:hello");
  });

  it("fails a handler that counts calls on the statelessness checks, naming the count", async () => {
    let calls = 0;
    const report = await run((call) => {
      const answer = echo(call) as { message?: Uint8Array };
      if (!answer.message) return echo(call);
      const d = decodeMessage(answer.message);
      return { message: encodeMessage(`${d.ok ? d.message.body : ""} #${++calls}`) };
    });
    const failed = report.checks.filter((c) => c.status === "fail").map((c) => c.id);
    expect(failed).toContain("grpc.stateless.history-independent");
    expect(report.checks.find((c) => c.id === "grpc.stateless.history-independent")?.message).toMatch(/counts calls/);
  });

  it("answers UNKNOWN for a handler that throws, and DEADLINE_EXCEEDED for one that never answers", async () => {
    const thrown = await createInMemoryClient(() => {
      throw new Error("boom");
    }).unary(encodeMessage("x"));
    expect([thrown.code, thrown.details]).toEqual([Status.UNKNOWN, "boom"]);
    const silent = await createInMemoryClient(() => new Promise(() => undefined)).unary(encodeMessage("x"), {
      deadlineMs: 50,
    });
    expect(silent.code).toBe(Status.DEADLINE_EXCEEDED);
  });
});
