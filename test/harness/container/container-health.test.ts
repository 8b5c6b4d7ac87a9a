// The readiness probe of an image's gRPC port: grpc.health.v1 replies decoded by the generated HealthCheckResponse.
import * as grpc from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { healthStatus } from "../../../harness/container/start-container.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";

const servers: grpc.Server[] = [];
let noHealth: TestServer;

async function serve(setup: (server: grpc.Server) => void): Promise<string> {
  const server = new grpc.Server({ "grpc.enable_channelz": 0 });
  setup(server);
  servers.push(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return `127.0.0.1:${port}`;
}

beforeAll(async () => {
  noHealth = await startGrpcJsServer(() => Buffer.alloc(0));
});
afterAll(async () => {
  await noHealth.close();
  for (const s of servers) s.forceShutdown();
});

describe("healthStatus", () => {
  it.each(["SERVING", "NOT_SERVING"] as const)("reads %s from grpc-health-check's reply", async (status) => {
    const address = await serve((server) => new HealthImplementation({ "": status }).addToServer(server));
    expect(await healthStatus(address)).toBe(status);
  });

  it("says UNIMPLEMENTED for a server without the health service", async () => {
    expect(await healthStatus(noHealth.address)).toBe("UNIMPLEMENTED");
  });

  it("says the reply is malformed when its bytes are no HealthCheckResponse", async () => {
    const pass = (b: Buffer) => b;
    const address = await serve((server) =>
      server.addService(
        {
          Check: {
            path: "/grpc.health.v1.Health/Check",
            requestStream: false,
            responseStream: false,
            requestSerialize: pass,
            requestDeserialize: pass,
            responseSerialize: pass,
            responseDeserialize: pass,
          },
        },
        // Field 1 as a varint that never ends.
        {
          Check: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
            callback(null, Buffer.from([0x08, 0x80])),
        },
      ),
    );
    expect(await healthStatus(address)).toBe("a malformed HealthCheckResponse");
  });
});
