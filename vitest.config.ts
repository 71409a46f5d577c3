import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    globalSetup: ["tests/temporary-dir.ts"],
    // Integration and end-to-end tests spawn real processes, PTYs and workers; on a 2-core machine
    // they must not all run at once.
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
