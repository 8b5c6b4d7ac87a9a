// grpc.deadline.respected judges the server's deadline, not how busy the machine is: a target slow to answer every
// call (a loaded machine, a slow link) cannot show a deadline's effect, and is "could not judge", never a failure;
// the server that ignores only short deadlines (fixtures/broken-servers/grpc/ignores-deadline.ts) still fails.
import http2 from "node:http2";
import { describe, expect, it } from "vitest";
import { listenTracked } from "../../../fixtures/_internals/listen-tracked.js";
import { checkVerdicts } from "../../helpers/cli.js";
import { answerHello, listenSlowHello } from "../../helpers/slow-grpc.js";

describe("grpc.deadline.respected on a target slow to answer anything", () => {
  it("could not judge, saying the same call without a deadline was slow too", async () => {
    // Every call answered after 2 s, past the check's 1.7 s bound, deadline or not.
    const slow = await listenSlowHello(() => 2000);
    try {
      const run = await checkVerdicts([
        "--grpc",
        slow.address,
        "--only",
        "grpc.deadline.respected",
        "--profile",
        "protocol",
      ]);
      const check = run.report.checks.find((c) => c.id === "grpc.deadline.respected");
      expect(check?.status, check?.message).toBe("skip");
      expect(check?.message).toMatch(
        /but the same call without one took \d+ ms .*too slow now to tell a deadline's effect/,
      );
    } finally {
      await slow.close();
    }
  }, 60_000);
});

describe("grpc.deadline.respected on a target that stalls for a moment", () => {
  it("passes when a later call with the deadline ends in time: a stall is no ignored deadline", async () => {
    // From the first call with a deadline until a call without one comes, calls wait 2 s, as on a machine paused for
    // a moment by load: the check's call and its guard's second try get no status in time, the call without a
    // deadline is answered at once, and so is every call after it.
    let stalled = 0;
    let pause: "before" | "on" | "over" = "before";
    const server = http2.createServer();
    server.on("stream", (stream, headers) => {
      stream.on("error", () => undefined);
      stream.resume();
      if (headers["grpc-timeout"] !== undefined && pause === "before") pause = "on";
      if (headers["grpc-timeout"] === undefined && pause === "on") pause = "over";
      const wait = pause === "on" ? 2000 : 0;
      if (pause === "on") stalled++;
      stream.on("end", () => {
        const timer = setTimeout(() => answerHello(stream), wait);
        stream.on("close", () => clearTimeout(timer));
      });
    });
    const stalling = await listenTracked(server);
    try {
      const run = await checkVerdicts([
        "--grpc",
        stalling.address,
        "--only",
        "grpc.deadline.respected",
        "--profile",
        "protocol",
      ]);
      const check = run.report.checks.find((c) => c.id === "grpc.deadline.respected");
      expect(stalled).toBeGreaterThanOrEqual(2);
      expect(check?.status, check?.message).toBe("pass");
      expect(check?.message).toMatch(/an earlier try got no status within 1700 ms/);
    } finally {
      await stalling.close();
    }
  }, 60_000);
});
