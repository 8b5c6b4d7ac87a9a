import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Test files that flood a server, hold its memory near a bound or time a bystander against a deadline: they measure
 * the machine as much as the code, so they run after the rest, one at a time, with the machine to themselves (as
 * the reference server would be in production). Everything else runs side by side.
 */
const ALONE = [
  "test/reference-server/attacks.test.ts",
  "test/reference-server/attack-tools.test.ts",
  "test/reference-server/resilience.test.ts",
  "test/reference-server/slow-readers.test.ts",
  "test/reference-server/unread-replies.test.ts",
  "test/reference-server/held-guarantees.test.ts",
  "test/reference-server/flow-control.test.ts",
  "test/reference-server/half-sent.test.ts",
  "test/reference-server/page-bytes.test.ts",
  "test/reference-server/grpc-guard.test.ts",
  "test/harness/hostile-bombs.test.ts",
];

/**
 * Test files at once in the first group: most wait on child processes, sockets and timers, not on the two cores
 * (at 3, a run used 1.4 of 2 cores on average). EXAMPLE_CONFORMANCE_TEST_WORKERS sets another number.
 */
const SIDE_BY_SIDE = Number(process.env.EXAMPLE_CONFORMANCE_TEST_WORKERS ?? 4);

/**
 * The side-by-side files that take longest, longest first (seconds in a CI run: 222 to 31). vitest orders files by
 * the durations it cached, and a fresh clone has none: it then started small files that run long (the broken gRPC
 * servers, 143 s) last, and the run's tail waited on them alone. These start first; the rest follow in vitest's order.
 */
const SLOWEST = [
  "test/action.test.ts",
  "test/reference-server/stores.test.ts",
  "test/suites/grpc-broken-servers.test.ts",
  "test/cli/contract-commands.test.ts",
  "test/reference-server/data-dir-full.test.ts",
  "test/cli/check-image.test.ts",
  "test/reference-server/data-dir-takeover.test.ts",
  "test/contract/contracts.test.ts",
  "test/cli/check-client.test.ts",
  "test/package.test.ts",
  "test/cli/load-command.test.ts",
  "test/reference-server/data-dir-durable.test.ts",
  "test/implementations.test.ts",
  "test/fixtures/legal-servers.test.ts",
  "test/harness/latency.test.ts",
  "test/cli/exit-codes.test.ts",
  "test/reference-server/data-dir.test.ts",
  "test/cli/readme-examples.test.ts",
  "test/harness/hostile-text.test.ts",
  "test/harness/hostile-targets.test.ts",
  "test/reference-server/text-round-trip.test.ts",
  "test/reference-server/data-dir-faults.test.ts",
  "test/suites/http.test.ts",
  "test/suites/grpc/history-side-by-side.test.ts",
  "test/contract/buf.test.ts",
  "test/implementations-protocols.test.ts",
  "test/cli/serve-signals.test.ts",
  "test/cli/set-up-verdicts.test.ts",
];

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const at = SLOWEST.findIndex((s) => f.moduleId.endsWith(`/${s}`));
      return at === -1 ? SLOWEST.length : at;
    };
    // Within a group (the groups keep their order), the slowest first; Array.prototype.sort is stable.
    return sorted.sort((a, b) => a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder || rank(a) - rank(b));
  }
}

const shared = {
  // Tests start servers and child processes; each has its own bound, this is the backstop.
  testTimeout: 60_000,
  hookTimeout: 30_000,
};

export default defineConfig({
  test: {
    sequence: { sequencer: SlowestFirst },
    projects: [
      {
        test: {
          ...shared,
          name: "side-by-side",
          include: ["test/**/*.test.ts", "suites/**/*.test.ts"],
          exclude: ALONE,
          maxWorkers: SIDE_BY_SIDE,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: "alone",
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
