// The load loop bounds every call without a timer of its own: a driver's sweep cancels calls past their deadline.
// A server that stops answering after the calls at rest gets its calls counted as DEADLINE_EXCEEDED, and the run
// still ends by itself.
import * as grpc from "@grpc/grpc-js";
import { expect, it } from "vitest";
import { encodeMessage } from "../../contract/message.js";
import { runLoad } from "../../harness/load/run-load.js";

const pass = (b: Buffer) => b;

it("counts calls that get no answer within the timeout as DEADLINE_EXCEEDED and stops by itself", async () => {
  const server = new grpc.Server({ "grpc.enable_channelz": 0 });
  let calls = 0;
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
      // The 16 calls at rest are answered; every later call is never answered.
      Hello: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        if (++calls <= 16) callback(null, Buffer.from(encodeMessage("ok")));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  try {
    const report = await runLoad({
      address: `127.0.0.1:${port}`,
      durationMs: 400,
      concurrency: 4,
      connections: 1,
      timeoutMs: 150,
    });
    expect(report.errors["DEADLINE_EXCEEDED"]).toBeGreaterThanOrEqual(4);
    expect(report.requests).toBe(report.errors["DEADLINE_EXCEEDED"]);
    expect(report.stateless.compared).toBe(0);
  } finally {
    server.forceShutdown();
  }
});
