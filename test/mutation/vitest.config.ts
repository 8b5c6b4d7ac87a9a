// The vitest configuration of `npm run mutation` alone: its one file, which npm test's globs (*.test.ts) never pick up.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/mutation/catalogue.mutation.ts"],
    // The catalogue bounds each call (5 s) and each check; this is the backstop. Stryker's own timeout ends a mutant
    // that hangs the server sooner (test/mutation/stryker.config.mjs).
    testTimeout: 120_000,
    hookTimeout: 30_000,
  },
});
