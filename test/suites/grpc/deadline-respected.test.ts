// grpc.deadline.respected judges the server's deadline, not how busy the machine is: a target slow to answer every
// call (a loaded machine, a slow link) cannot show a deadline's effect, and is "could not judge", never a failure;
// the server that ignores only short deadlines (fixtures/broken-servers/grpc/ignores-deadline.ts) still fails.
import { describe, expect, it } from "vitest";
import { checkVerdicts } from "../../helpers/cli.js";
import { listenSlowHello } from "../../helpers/slow-grpc.js";

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
