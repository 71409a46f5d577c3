/**
 * Job actor threads run a few nice steps below Pi's own thread, so that output floods read on them leave Pi's thread
 * the CPU it needs to stay smooth (docs/decisions/actor-priority.md).
 * On Linux a nice value belongs to a thread, so this lowers only the calling thread; elsewhere `setpriority` would
 * lower the whole process, Pi included, so nothing is done there.
 */
import { getPriority, setPriority } from "node:os";
import { isMainThread } from "node:worker_threads";
import { processTable } from "../../shared/process-table/index.ts";

/** How far below the host an actor thread runs: a tenth of a normal thread's share when the CPU is contended. */
export const ACTOR_NICE_STEPS = 10;
const LOWEST = 19;

/**
 * Lowers the calling thread's priority by ACTOR_NICE_STEPS (Linux only). Returns the nice value it runs at. On a
 * process's main thread it does nothing: that is Pi's own thread (or a test's) whenever an actor module is loaded
 * there, and every thread it starts afterwards would begin lowered too.
 */
export function lowerThisThread(): number {
  const current = getPriority(0);
  if (process.platform !== "linux" || isMainThread) return current;
  const lowered = Math.min(LOWEST, current + ACTOR_NICE_STEPS);
  try {
    setPriority(0, lowered);
    return lowered;
  } catch {
    // A sandbox that forbids it: the thread keeps the host's priority.
    return current;
  }
}

/**
 * The calling thread's kernel id, where the process table reads a thread's figures by it: the host reads them to tell
 * a starved actor from a hung one (host/runtime/heartbeat.ts). Null elsewhere.
 */
export function osThreadId(): number | null {
  return processTable().ownThreadId();
}
