/**
 * CPU time a job's processes have used, from `/proc/<pid>/stat` (Linux). Each process counts its own user and
 * system time plus that of the children it has reaped, so work done by short-lived children is not lost when they end.
 */
import { statFields, TICKS_PER_SECOND } from "../../shared/proc-stat.ts";

/** Milliseconds of CPU (user + system, own and reaped children) of one process, or null when it is gone. */
export function processCpuMs(pid: number): number | null {
  const fields = statFields(pid);
  if (fields === null) return null;
  // utime (14), stime (15), cutime (16), cstime (17) are at 11..14 here.
  let ticks = 0;
  for (let index = 11; index <= 14; index++) ticks += Number(fields[index]) || 0;
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** Total CPU milliseconds of the given processes (those already gone count nothing). */
export function treeCpuMs(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) total += processCpuMs(pid) ?? 0;
  return total;
}
