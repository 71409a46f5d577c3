/**
 * Pi's event loop while many jobs are stopped at once: `JOBS` running jobs (each with a descendant that left its
 * group), then the longest blocked stretch of this thread during their shutdown, and during a shutdown in which every
 * actor reports late so that the supervisor takes each job over and looks for its tagged processes itself
 * (tests/fixtures/stop-loop.ts). Every scan of /proc on this thread is asynchronous and sliced; the target is no
 * stretch over 20 ms.
 *
 * `node bench/takeover-loop.ts` prints one run.
 */
import { fileURLToPath } from "node:url";
import { stopLoop } from "../tests/fixtures/stop-loop.ts";
import type { createJobRuntime } from "../host/runtime/runtime.ts";

const JOBS = 64;
export const TARGET_MAX_BLOCKED_MS = 20;

export interface TakeoverLoopResult {
  jobs: number;
  /** The longest stretch between two turns of this thread's event loop (wall time), during each of the two. */
  shutdownMaxBlockedMs: number;
  takeoverMaxBlockedMs: number;
  /** The most of this thread's own CPU time in such a stretch: without the waits for a core a loaded machine adds. */
  shutdownMaxBlockedCpuMs: number;
  takeoverMaxBlockedCpuMs: number;
}

/** One shutdown of `JOBS` running jobs, then one of `JOBS` jobs the supervisor takes over; `create` picks the copy. */
export async function benchTakeoverLoop(create?: typeof createJobRuntime): Promise<TakeoverLoopResult> {
  const shutdown = await stopLoop({ jobs: JOBS, takeover: false, create });
  const takeover = await stopLoop({ jobs: JOBS, takeover: true, create });
  for (const [what, run] of [["shutdown", shutdown], ["takeover", takeover]] as const) {
    if (run.survivors.length > 0) throw new Error(`${what}: ${run.survivors.length} processes survived`);
  }
  return {
    jobs: JOBS,
    shutdownMaxBlockedMs: shutdown.maxBlockedMs,
    takeoverMaxBlockedMs: takeover.maxBlockedMs,
    shutdownMaxBlockedCpuMs: shutdown.maxBlockedCpuMs,
    takeoverMaxBlockedCpuMs: takeover.maxBlockedCpuMs,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await benchTakeoverLoop();
  const round = (ms: number) => Math.round(ms * 10) / 10;
  console.log(
    `${result.jobs} jobs: longest blocked stretch ${round(result.shutdownMaxBlockedMs)} ms ` +
      `(${round(result.shutdownMaxBlockedCpuMs)} ms of it this thread's CPU) during a shutdown, ` +
      `${round(result.takeoverMaxBlockedMs)} ms (${round(result.takeoverMaxBlockedCpuMs)} ms CPU) during a takeover of ` +
      `every job (target < ${TARGET_MAX_BLOCKED_MS} ms)`,
  );
}
