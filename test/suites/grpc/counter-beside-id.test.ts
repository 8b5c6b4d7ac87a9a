// A count of calls is found whatever stands beside it: here a short id whose digits come in 0, 1 or 2 groups from
// one reply to the next, which no uuid or token pattern masks.
import { afterEach, describe, expect, it } from "vitest";
import { startGrpcJsBase } from "../../../fixtures/broken-servers/grpc/_base/grpc-js.js";
import type { StartedServer } from "../../../fixtures/broken-servers/grpc/types.js";
import { runConformance } from "../../../harness/api/run-conformance.js";

let server: StartedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("a reply with a short id beside a count of calls", () => {
  it("fails grpc.stateless.history-independent, naming the count", async () => {
    const ids = ["x", "a1", "b2c3"];
    let calls = 0;
    server = await startGrpcJsBase({
      hello: ({ message }) => {
        calls++;
        return `Hello, ${message?.body ?? ""} [id=${ids[calls % ids.length]} #${calls}]`;
      },
    });
    const report = await runConformance({
      grpc: { address: server.address },
      only: ["grpc.stateless.history-independent"],
      seed: 2,
      runs: 10,
      concurrency: 1,
    });
    expect(report.checks[0]).toMatchObject({ status: "fail", message: expect.stringMatching(/it counts calls/) });
  });
});
