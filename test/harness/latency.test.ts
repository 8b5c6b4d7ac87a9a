// Verdicts do not depend on latency: the same checks pass and fail through a proxy that delays every chunk as
// directly, for the reference server and for broken servers of both interfaces.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokenGrpcServers } from "../../fixtures/broken-servers/grpc/index.js";
import { brokenHttpServers } from "../../fixtures/broken-servers/http/index.js";
import { startReferenceServer, type ReferenceServer } from "../../reference-server/start.js";
import { checkVerdicts } from "../helpers/cli.js";
import { startLatencyProxy } from "../helpers/latency-proxy.js";

/** Each way: 10 ms round trips, enough to reorder anything that races, small enough for npm test. */
const DELAY_MS = 5;
const SEED = "20261123";

async function verdicts(args: string[]): Promise<string[]> {
  return (await checkVerdicts([...args, "--seed", SEED, "--skip", "contract.*", "--timeout", "10s"])).failed;
}

/** A broken server's failures, directly and through the proxy: some, and the same. */
async function failsTheSameThroughProxy(
  flag: "--grpc" | "--http",
  target: string,
  oneAtATime: string[] = [],
): Promise<void> {
  const port = Number(flag === "--grpc" ? target.split(":").at(-1) : new URL(target).port);
  const proxy = await startLatencyProxy(port, DELAY_MS);
  try {
    // A server whose defect is state shared between calls shows it in whichever checks run beside each other, at
    // any latency: its verdicts are compared one check at a time.
    const direct = await verdicts([flag, target, ...oneAtATime]);
    const slow = await verdicts([flag, flag === "--grpc" ? proxy.address : `http://${proxy.address}`, ...oneAtATime]);
    expect(direct.length).toBeGreaterThan(0);
    expect(slow).toEqual(direct);
  } finally {
    await proxy.close();
  }
}

let reference: ReferenceServer;
beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" });
});
afterAll(async () => reference?.close());

describe(`through a ${DELAY_MS} ms-each-way proxy`, () => {
  it("the reference server passes the same checks on both interfaces", async () => {
    const grpcPort = Number(reference.grpcAddress.split(":").at(-1));
    const httpPort = Number(new URL(reference.httpUrl).port);
    const [g, h] = await Promise.all([startLatencyProxy(grpcPort, DELAY_MS), startLatencyProxy(httpPort, DELAY_MS)]);
    try {
      const direct = await verdicts(["--grpc", reference.grpcAddress, "--http", reference.httpUrl]);
      const slow = await verdicts(["--grpc", g.address, "--http", `http://${h.address}`]);
      expect(direct).toEqual([]);
      expect(slow).toEqual(direct);
    } finally {
      await Promise.all([g.close(), h.close()]);
    }
  }, 180_000);

  for (const name of ["counts-calls", "echoes-earlier-metadata"]) {
    it(`the broken gRPC server ${name} fails the same checks`, async () => {
      const fixture = brokenGrpcServers.find((b) => b.name === name);
      if (!fixture) throw new Error(`no broken server ${name}`);
      const server = await fixture.start();
      try {
        await failsTheSameThroughProxy("--grpc", server.address, fixture.oneAtATime ? ["--concurrency", "1"] : []);
      } finally {
        await server.close();
      }
    }, 180_000);
  }

  it("a broken HTTP server fails the same checks", async () => {
    const fixture = brokenHttpServers.find((b) => b.name === "delete-ignored");
    if (!fixture) throw new Error("no broken server delete-ignored");
    const server = await fixture.start();
    try {
      await failsTheSameThroughProxy("--http", server.url);
    } finally {
      await server.close();
    }
  }, 180_000);
});
