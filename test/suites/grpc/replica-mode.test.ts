// --replica judges statelessness across instances by default; byte-equal replies only with --replica-mode equal.
import { afterEach, describe, expect, it } from "vitest";
import { startGrpcJsBase } from "../../../fixtures/broken-servers/grpc/_base/grpc-js.js";
import type { StartedServer } from "../../../fixtures/broken-servers/grpc/types.js";
import { runConformance } from "../../../harness/api/run-conformance.js";
import { checkVerdicts } from "../../helpers/cli.js";

let servers: StartedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

/** Two stateless instances whose replies name the instance: legal, since the reply's meaning is open. */
async function namedInstances(): Promise<[StartedServer, StartedServer]> {
  const a = await startGrpcJsBase({ hello: ({ message }) => `${message?.body ?? ""} from a` });
  const b = await startGrpcJsBase({ hello: ({ message }) => `${message?.body ?? ""} from b` });
  servers = [a, b];
  return [a, b];
}

describe("grpc.stateless.replicas", () => {
  it("passes instances that name themselves by default: no history crosses between them", async () => {
    const [a, b] = await namedInstances();
    const report = await runConformance({
      grpc: { address: a.address },
      replicas: [b.address],
      only: ["grpc.stateless.replicas"],
      seed: 1,
    });
    expect(report.checks[0]).toMatchObject({
      status: "pass",
      message: expect.stringMatching(/changed no other's replies/),
    });
  });

  it("fails them with --replica-mode equal, naming both replies, and the replay line keeps the mode", async () => {
    const [a, b] = await namedInstances();
    const report = await runConformance({
      grpc: { address: a.address },
      replicas: [b.address],
      replicaMode: "equal",
      only: ["grpc.stateless.replicas"],
      seed: 1,
    });
    expect(report.checks[0]).toMatchObject({ status: "fail", message: expect.stringMatching(/from a.*from b/) });
    // Replay lines are the user's own invocation, rendered by the CLI.
    const run = await checkVerdicts([
      "--grpc",
      a.address,
      "--replica",
      b.address,
      "--replica-mode",
      "equal",
      "--only",
      "grpc.stateless.replicas",
      "--seed",
      "1",
    ]);
    expect(run.failed).toEqual(["grpc.stateless.replicas"]);
    expect(run.report.checks[0]?.replay).toMatch(/--replica-mode equal/);
  });
});
