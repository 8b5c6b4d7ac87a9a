// From code, as from the CLI: each result carries the replay line, and that line, run, reproduces the failure.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../contract/message.js";
import { runConformance, createInMemoryClient, replayFromOptions } from "../harness/index.js";
import { cli } from "./helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "./helpers/grpc-js-server.js";

let server: TestServer;
let calls = 0;
const SECRET = "Bearer api-replay-s3cret";

beforeAll(async () => {
  // A number in the reply counts calls: history-independent fails, whatever the seed.
  server = await startGrpcJsServer(() => Buffer.from(encodeMessage(`hello ${++calls}`)));
});
afterAll(async () => {
  await server.close();
});

describe("runConformance from code", () => {
  it("gives every result its replay line, secrets as placeholders, and the line reproduces the failure", async () => {
    const report = await runConformance({
      grpc: { address: server.address, metadata: { authorization: SECRET } },
      only: ["grpc.stateless.history-independent"],
      seed: 7,
      runs: 5,
    });
    const failed = report.checks.find((c) => c.id === "grpc.stateless.history-independent");
    expect(failed?.status).toBe("fail");
    expect(failed?.replay).toBe(
      `npx example-conformance check --grpc ${server.address} --metadata 'authorization=<METADATA_VALUE>' --runs ` +
        `5 --only grpc.stateless.history-independent --seed 7`,
    );
    expect(JSON.stringify(report)).not.toContain("s3cret");
    // The line as a user runs it, the placeholder filled in.
    const argv = (failed?.replay ?? "")
      .split(" ")
      .slice(2)
      .map((w) => (w === "'authorization=<METADATA_VALUE>'" ? `authorization=${SECRET}` : w));
    const replayed = await cli(argv);
    expect(replayed.code).toBe(1);
    expect(replayed.stdout).toMatch(/FAIL grpc\.stateless\.history-independent/);
  }, 60_000);

  it("says the HTTP key's placement and the timeout as the flags that set them", () => {
    const render = replayFromOptions({
      http: {
        baseUrl: "http://127.0.0.1:8080",
        apiKey: "k",
        apiKeyIn: { in: "header", name: "Authorization", scheme: "Bearer" },
        timeoutMs: 2000,
      },
    });
    expect(render?.({ only: "http.auth.api-key", seed: 3 })).toBe(
      "npx example-conformance check --http http://127.0.0.1:8080 --api-key '<API_KEY>' --api-key-in bearer " +
        "--timeout 2000ms --only http.auth.api-key --seed 3",
    );
  });

  it("keeps a replayCommand the caller gives, and gives none for an in-memory target no command line reaches", async () => {
    const own = await runConformance({
      grpc: { address: server.address },
      only: ["grpc.unary.single-response"],
      seed: 1,
      replayCommand: (a) => `mine ${a.only}`,
    });
    expect(own.checks.find((c) => c.id === "grpc.unary.single-response")?.replay).toBe(
      "mine grpc.unary.single-response",
    );
    const inMemory = createInMemoryClient(() => ({ message: encodeMessage("x") }));
    const report = await runConformance({
      grpc: { address: "memory:hello", inMemory },
      only: ["grpc.unary.single-response"],
      seed: 1,
    });
    expect(report.checks.find((c) => c.id === "grpc.unary.single-response")?.replay).toBeUndefined();
  }, 60_000);
});
