/**
 * The warm pool with real worker threads: threads are made ahead of demand, so `warm` of them stay idle and loaded
 * beyond the jobs that run, and a job started on one of them does not wait for a thread.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime.ts";
import { runtimeFor, shellJob, waitFor } from "./helpers.ts";

let runtime: SupervisedRuntime | null = null;
afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
});

describe("actor pool", () => {
  it("keeps the warm threads idle beyond the running jobs", async () => {
    runtime = runtimeFor({ warm: 2, checkMessages: false });
    runtime.warmUp();
    await waitFor(() => runtime!.threads() >= 2, 30_000, "the two warm threads");
    const jobs = Array.from({ length: 3 }, () => runtime!.start(shellJob("sleep 30")));
    await waitFor(() => jobs.every((job) => job.phase() === "running"), 30_000, "the three jobs to run");
    // Three busy threads and two idle ones: the next two jobs find a thread that already runs.
    await waitFor(() => runtime!.threads() >= 5, 30_000, "two idle threads beyond the three jobs");
    expect(runtime.threads()).toBeLessThanOrEqual(3 + 2 + 2);
  }, 60_000);
});
