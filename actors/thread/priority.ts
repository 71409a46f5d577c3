/**
 * Job actor threads run a few nice steps below Pi's own thread, so that output floods read on them leave Pi's thread
 * the CPU it needs to stay smooth (docs/decisions/actor-priority.md).
 * On Linux a nice value belongs to a thread, so this lowers only the calling thread; elsewhere `setpriority` would
 * lower the whole process, Pi included, so nothing is done there.
 */
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { isMainThread } from "node:worker_threads";

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

/** This thread's id, read once: a module is loaded once per thread. */
let ownId: number | null | undefined;

/**
 * The calling thread's Linux thread id (`/proc/thread-self` links to `<pid>/task/<tid>`): the host reads the thread's
 * CPU figures under it to tell a starved actor from a hung one (host/runtime/heartbeat.ts). Null elsewhere.
 */
export function osThreadId(): number | null {
  if (ownId !== undefined) return ownId;
  ownId = null;
  if (process.platform !== "linux") return ownId;
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    if (Number.isInteger(tid) && tid > 0) ownId = tid;
  } catch {
    // No /proc here: the host judges the actor by its heartbeat alone.
  }
  return ownId;
}
