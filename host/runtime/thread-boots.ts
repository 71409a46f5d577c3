/**
 * How many waiting starts the pool may hand to piscina now. A start either takes a thread that is loaded and idle, or
 * makes piscina boot a new one; only `limit` threads may boot at once.
 *
 * Why a limit: a new worker thread inherits the nice value of Pi's thread and lowers itself only once its entry runs
 * (actors/thread/lowered-thread.ts), so Node's own bootstrap of each thread (tens of milliseconds of CPU) runs at Pi's
 * priority. A burst of 63 starts in a checkout booted 63 threads at once, and Pi's thread then got about a 64th of the
 * CPU: the 63 start calls themselves, a few milliseconds each, took 1.5–15 s, the event loop stalled for up to 3.2 s,
 * and a quit in the middle of it waited up to 24 s. The boots of a burst take the same CPU one after another as all at
 * once (docs/decisions/thread-boots.md).
 */
export interface PoolCounts {
  /** Threads loaded and without a task (may be negative while counts catch up: treated as none). */
  free: number;
  /** Threads made and not yet through their entry module. */
  booting: number;
  /** How many threads may boot at once. */
  limit: number;
}

export function startsToAdmit(counts: PoolCounts, waiting: number): number {
  const boots = Math.max(0, counts.limit - counts.booting);
  return Math.min(waiting, Math.max(0, counts.free) + boots);
}
