// A check that runs out of time stops calling the target: its calls under way are cancelled and no new one is sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { encodeMessage } from "../../contract/message.js";
import type { CheckDefinition } from "../../harness/check.js";
import { runConformance } from "../../harness/runner.js";

let server: grpc.Server;
let address = "";
let received = 0;
let cancelled = 0;
beforeAll(async () => {
  // Every call takes 200 ms, so the check below is always mid-call when its time runs out.
  server = new grpc.Server();
  const pass = (b: Buffer) => b;
  server.addService(
    {
      Hello: {
        path: "/example.exampleService/Hello",
        requestStream: false,
        responseStream: false,
        requestSerialize: pass,
        requestDeserialize: pass,
        responseSerialize: pass,
        responseDeserialize: pass,
      },
    },
    {
      Hello: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        received++;
        call.on("cancelled", () => cancelled++);
        setTimeout(() => callback(null, call.request), 200);
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  address = `127.0.0.1:${port}`;
});
afterAll(() => server.forceShutdown());

/** A check whose loop would call for ever: only the runner's bound can end it. */
const endless: CheckDefinition = {
  id: "grpc.test.endless",
  title: "calls until stopped",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "-",
  async run(ctx) {
    for (;;) await ctx.grpc?.unary(encodeMessage("again"));
  },
};

describe("a check that runs out of time", () => {
  it("errors with its bound, and no call of it reaches the target afterwards", async () => {
    const report = await runConformance({ grpc: { address }, checks: [endless], checkTimeoutMs: 700 });
    expect(report.checks[0]).toMatchObject({
      id: "grpc.test.endless",
      status: "error",
      message: "did not finish within 700 ms",
    });
    // The call under way at the bound may reach the server a little later on a loaded machine (it was sent before
    // the bound): it is let land first. A call sent after the bound would not be one: the check calls for ever, so
    // any leak keeps calling and shows in the window after.
    await new Promise((r) => setTimeout(r, 300));
    const atEnd = received;
    expect(atEnd).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 600));
    expect(received).toBe(atEnd);
    // The call under way when the time ran out was cancelled, not left to finish.
    expect(cancelled).toBeGreaterThanOrEqual(1);
  });
});
