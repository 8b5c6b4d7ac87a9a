import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "suites/**/*.test.ts"],
    // Tests start servers and child processes; each has its own bound, this is the backstop.
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
