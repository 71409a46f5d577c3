import { defineConfig } from "vitest/config";

/**
 * Two projects: every test with the process table the machine chooses (`proc` on Linux), and the integration tests of
 * each feature that rests on the table again with the portable one forced (`PI_JOBS_PROCESS_TABLE=ps`), as macOS runs
 * it: stopping what left the group and the exit net and crash cleanup (job-tag, crash-cleanup), readiness by port,
 * listening ports and stalls of shell jobs (services), limits, the watchdog and the usage figures (resource-limits),
 * a monitor's stall_seconds (monitor-stall), and what only the portable table needs seen (portable-table).
 */
const PORTABLE = [
  "tests/integration/portable-table.test.ts",
  "tests/integration/job-tag.test.ts",
  "tests/integration/crash-cleanup.test.ts",
  "tests/integration/services.test.ts",
  "tests/integration/resource-limits.test.ts",
  "tests/integration/monitor-stall.test.ts",
];

const shared = {
  globalSetup: ["tests/temporary-dir.ts"],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: "forks" as const,
};

export default defineConfig({
  test: {
    // Integration and end-to-end tests spawn real processes, PTYs and workers; on a 2-core machine
    // they must not all run at once.
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      { test: { ...shared, name: "default", include: ["tests/**/*.test.ts"], exclude: ["tests/integration/portable-table.test.ts"] } },
      { test: { ...shared, name: "portable table", include: PORTABLE, env: { PI_JOBS_PROCESS_TABLE: "ps" } } },
    ],
  },
});
