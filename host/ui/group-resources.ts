/**
 * CPU and memory of a job's process group, read from /proc (Linux) for the group's live members. Sampled at most
 * every 250 ms per group and only for the job the console shows, so the cost stays at human rate. Elsewhere (macOS)
 * the figures are unknown and shown as such.
 */
import { readFileSync } from "node:fs";
import { groupMembers } from "../../shared/process-group.ts";

/** /proc reports CPU time in USER_HZ ticks, which Linux fixes at 100 for user space. */
const TICKS_PER_SECOND = 100;
export const MIN_SAMPLE_MS = 250;

export interface GroupResources {
  processes: number | null;
  cpuPercent: number | null;
  rssBytes: number | null;
}

export const UNKNOWN_RESOURCES: GroupResources = { processes: null, cpuPercent: null, rssBytes: null };

/** utime + stime in ticks from the text of /proc/<pid>/stat (the command name may hold spaces and parentheses). */
export function parseCpuTicks(stat: string): number | null {
  const close = stat.lastIndexOf(")");
  if (close < 0) return null;
  const fields = stat.slice(close + 2).split(" ");
  // Field 3 (state) is index 0 here, so utime (14) and stime (15) are 11 and 12.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : null;
}

/** VmRSS in bytes from the text of /proc/<pid>/status. */
export function parseRssBytes(status: string): number | null {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : null;
}

/** CPU percent of one core from two tick totals of the same processes. */
export function cpuPercent(previous: ReadonlyMap<number, number>, current: ReadonlyMap<number, number>, intervalMs: number): number | null {
  if (intervalMs <= 0) return null;
  let ticks = 0;
  for (const [pid, now] of current) {
    const before = previous.get(pid);
    // A member that appeared during the interval ran only within it.
    ticks += before === undefined ? now : Math.max(0, now - before);
  }
  return (ticks / TICKS_PER_SECOND / (intervalMs / 1000)) * 100;
}

interface Sample {
  at: number;
  ticks: Map<number, number>;
  result: GroupResources;
}

export interface GroupSampler {
  sample(pgid: number, nowMs?: number): GroupResources;
}

export function createGroupSampler(options: { members?: (pgid: number) => number[]; read?: (path: string) => string } = {}): GroupSampler {
  const members = options.members ?? groupMembers;
  const read = options.read ?? ((path: string) => readFileSync(path, "utf8"));
  const samples = new Map<number, Sample>();
  return {
    sample(pgid, nowMs = performance.now()) {
      const last = samples.get(pgid);
      if (last !== undefined && nowMs - last.at < MIN_SAMPLE_MS) return last.result;
      if (process.platform !== "linux" && options.members === undefined) return UNKNOWN_RESOURCES;
      let pids: number[];
      try {
        pids = members(pgid);
      } catch {
        return UNKNOWN_RESOURCES;
      }
      const ticks = new Map<number, number>();
      let rss = 0;
      for (const pid of pids) {
        try {
          const cpu = parseCpuTicks(read(`/proc/${pid}/stat`));
          if (cpu !== null) ticks.set(pid, cpu);
          rss += parseRssBytes(read(`/proc/${pid}/status`)) ?? 0;
        } catch {
          // The member exited between the listing and the read.
        }
      }
      const result: GroupResources = {
        processes: pids.length,
        cpuPercent: last === undefined ? null : cpuPercent(last.ticks, ticks, nowMs - last.at),
        rssBytes: rss,
      };
      samples.set(pgid, { at: nowMs, ticks, result });
      // Only groups still being looked at stay in the table.
      if (samples.size > 64) samples.delete(samples.keys().next().value as number);
      return result;
    },
  };
}
