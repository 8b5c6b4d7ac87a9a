import { defineConfig } from "vitest/config";

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

const shared = {
  // Tests start servers and child processes; each has its own bound, this is the backstop.
  testTimeout: 60_000,
  hookTimeout: 30_000,
};

export default defineConfig({
  test: {
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
