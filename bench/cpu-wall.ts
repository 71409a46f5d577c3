/**
 * CPU accounting for the lifecycle benchmark: wall time and CPU of running many short tasks, counted the same way
 * for pi-jobs and for its plain-spawn baseline.
 */
import { readdirSync, readFileSync } from "node:fs";
import { round } from "./shared.ts";

export interface CpuWall {
  jobs: number;
  wallMs: number;
  /** Every thread of this process plus its children (the spawner and the jobs' processes). */
  cpuMs: number;
  /**
   * This process's own threads only (Pi's thread and the actor threads; for the plain spawns, the parent that spawns):
   * what a job costs the process it runs in, apart from the fork and the command.
   */
  ownCpuMs: number;
}

/** The fields of /proc/<pid>/stat after the command name, or null. */
function statFields(pid: string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/**
 * CPU of this process (every thread) plus its children, in ms, from /proc (Linux): the children it reaped, and the
 * ones still running with everything they reaped — the runtime's spawner, whose children are the jobs' processes.
 * Both sides of a comparison are counted the same way.
 */
export function cpuMs(): number {
  const own = process.cpuUsage();
  const self = statFields("self");
  if (self === null) return (own.user + own.system) / 1000;
  const ticks = (fields: string[], from: number, to: number) => fields.slice(from, to + 1).reduce((sum, field) => sum + Number(field), 0);
  // utime, stime, cutime, cstime are fields 14–17 of stat (11–14 after the name); clock ticks of 10 ms.
  let children = ticks(self, 13, 14);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields !== null && Number(fields[1]) === process.pid) children += ticks(fields, 11, 14);
  }
  return (own.user + own.system) / 1000 + children * 10;
}

/** Runs `count` tasks, `concurrency` at a time; wall and CPU of the whole. */
export async function cpuWall(count: number, concurrency: number, run: () => Promise<void>): Promise<CpuWall> {
  const cpuBefore = cpuMs();
  const ownBefore = process.cpuUsage();
  const began = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      await run();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const wallMs = round(performance.now() - began);
  const own = process.cpuUsage(ownBefore);
  return { jobs: count, wallMs, cpuMs: round(cpuMs() - cpuBefore), ownCpuMs: round((own.user + own.system) / 1000) };
}
