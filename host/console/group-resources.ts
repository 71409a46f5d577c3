/**
 * CPU and memory of a job's process group, read from /proc (Linux) for the group's live members. Sampled at most
 * every 250 ms per group and only for the job the console shows, so the cost stays at human rate. Elsewhere (macOS)
 * the figures are unknown and shown as such.
 *
 * A reading runs in the background, a slice per turn of Pi's event loop (shared/proc-scan.ts): finding the members
 * means looking at every process. A render shows the last reading that finished, at most one sample interval old.
 */
import { scan } from "../../shared/proc-scan.ts";
import { fieldsOfStat, readProcText, statNumber, TICKS_PER_SECOND } from "../../shared/proc-stat.ts";
import { groupMembers } from "../../shared/process-group.ts";

export const MIN_SAMPLE_MS = 250;

export interface GroupResources {
  processes: number | null;
  cpuPercent: number | null;
  rssBytes: number | null;
}

export const UNKNOWN_RESOURCES: GroupResources = { processes: null, cpuPercent: null, rssBytes: null };

/** utime + stime in ticks from the text of /proc/<pid>/stat (the command name may hold spaces and parentheses). */
export function parseCpuTicks(stat: string): number | null {
  const fields = fieldsOfStat(stat);
  if (fields === null) return null;
  const utime = statNumber(fields, "utime");
  const stime = statNumber(fields, "stime");
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
  /** The group's last finished reading (unknown before the first); starts the next one once this one is due. */
  sample(pgid: number, nowMs?: number): GroupResources;
  /** Resolves once no reading is under way. */
  settled(): Promise<void>;
}

export function createGroupSampler(
  options: { members?: (pgid: number) => Promise<number[]>; read?: (path: string) => string } = {},
): GroupSampler {
  const members = options.members ?? groupMembers;
  // A member that exited between the listing and the read reads as nothing.
  const read = options.read ?? ((path: string) => readProcText(path) ?? "");
  const samples = new Map<number, Sample>();
  const readings = new Map<number, Promise<void>>();

  async function measure(pgid: number, at: number): Promise<void> {
    let pids: number[];
    try {
      pids = await members(pgid);
    } catch {
      return;
    }
    const ticks = new Map<number, number>();
    let rss = 0;
    await scan({
      pids,
      visit(pid) {
        try {
          const cpu = parseCpuTicks(read(`/proc/${pid}/stat`));
          if (cpu !== null) ticks.set(pid, cpu);
          rss += parseRssBytes(read(`/proc/${pid}/status`)) ?? 0;
        } catch {
          // The member exited between the listing and the read.
        }
      },
      result: () => null,
    });
    const last = samples.get(pgid);
    const result: GroupResources = {
      processes: pids.length,
      cpuPercent: last === undefined ? null : cpuPercent(last.ticks, ticks, at - last.at),
      rssBytes: rss,
    };
    samples.set(pgid, { at, ticks, result });
    // Only groups still being looked at stay in the table.
    if (samples.size > 64) samples.delete(samples.keys().next().value as number);
  }

  return {
    sample(pgid, nowMs = performance.now()) {
      if (process.platform !== "linux" && options.members === undefined) return UNKNOWN_RESOURCES;
      const last = samples.get(pgid);
      const due = last === undefined || nowMs - last.at >= MIN_SAMPLE_MS;
      if (due && !readings.has(pgid)) {
        const reading = measure(pgid, nowMs)
          .catch(() => {})
          .finally(() => readings.delete(pgid));
        readings.set(pgid, reading);
      }
      return last?.result ?? UNKNOWN_RESOURCES;
    },
    settled: async () => {
      await Promise.all(readings.values());
    },
  };
}
