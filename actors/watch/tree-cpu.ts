/**
 * CPU time a job's processes have used, from `/proc/<pid>/stat` (Linux). Each process counts its own user and
 * system time plus that of the children it has reaped, so work done by short-lived children is not lost when they end.
 */
import { statFields, statNumber, TICKS_PER_SECOND } from "../../shared/proc-stat.ts";

const CPU_FIELDS = ["utime", "stime", "cutime", "cstime"] as const;

/** Milliseconds of CPU (user + system, own and reaped children) of one process, or null when it is gone. */
export function processCpuMs(pid: number): number | null {
  const fields = statFields(pid);
  if (fields === null) return null;
  let ticks = 0;
  for (const field of CPU_FIELDS) ticks += statNumber(fields, field) || 0;
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/**
 * Total CPU milliseconds of the given processes (those already gone count nothing), or null when none could be read:
 * all gone, or a system without `/proc`. Null is "unknown", never zero: a zero would read as an idle tree and let the
 * stall watch call a busy job stalled.
 */
export function treeCpuMs(pids: readonly number[]): number | null {
  let total: number | null = null;
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (ms !== null) total = (total ?? 0) + ms;
  }
  return total;
}
