// The gRPC catalogue as vitest tests, for vitest's own reporters:
//   EXAMPLE_TARGET=host:port npx vitest run suites/grpc
// Without EXAMPLE_TARGET it checks the built-in reference server. EXAMPLE_STRICT=1 gates SHOULD and protocol checks.
import { openSession } from "../../harness/session.js";
import { describeChecks, envSeed } from "../_internals/as-vitest.js";
import { grpcChecks } from "../index.js";

const address = process.env.EXAMPLE_TARGET;

describeChecks(
  `gRPC conformance of ${address ?? "the built-in reference server"} (seed ${envSeed()})`,
  grpcChecks,
  async () => {
    let target = address;
    let stop: (() => Promise<void>) | undefined;
    if (!target) {
      const { startReferenceServer } = await import("../../reference-server/start.js");
      const server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" });
      target = server.grpcAddress;
      stop = server.close;
    }
    const session = await openSession({
      grpc: { address: target },
      seed: envSeed(),
      runs: Number(process.env.EXAMPLE_RUNS ?? 100),
    });
    return { session, ...(stop && { stop }) };
  },
);
