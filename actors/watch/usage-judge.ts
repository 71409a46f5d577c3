/**
 * Judges a job's tree usage, sample by sample: against the job's limits (the first one passed stops the job), and
 * against the watchdog's thresholds (a runaway episode begins once and ends when the tree is back under them). Pure.
 */
import type { TreeUsage } from "../../mailbox/cell.ts";
import type { LimitTrip } from "../../mailbox/result.ts";
import type { ResourceLimits, WatchdogSpec } from "../../mailbox/spec.ts";
import { limitPassed as limitPassedText } from "../../mailbox/errors.ts";

/** A runaway's memory must fall this far under the threshold to end its episode, so a tree hovering at it is one episode. */
const MEMORY_HYSTERESIS = 0.9;
/** CPU samples kept over the watchdog's window: one per sixteenth of it, so a ten-minute window keeps 17. */
const CPU_WINDOW_POINTS = 16;

/** The first limit the usage passes (memory, then CPU, then processes), or null. */
export function limitPassed(limits: ResourceLimits, usage: TreeUsage): LimitTrip | null {
  if (limits.memoryBytes !== null && usage.rssBytes > limits.memoryBytes) return { cause: "memory_limit", limit: limits.memoryBytes, peak: usage.rssBytes };
  if (limits.cpuMs !== null && usage.cpuMs > limits.cpuMs) return { cause: "cpu_limit", limit: limits.cpuMs, peak: usage.cpuMs };
  if (limits.processes !== null && usage.processes > limits.processes) return { cause: "process_limit", limit: limits.processes, peak: usage.processes };
  return null;
}

/** What a runaway episode is over: memory, sustained CPU, or both. */
export type RunawayReason = "memory" | "cpu" | "memory,cpu";

export type WatchdogEvent = { kind: "runaway"; reason: RunawayReason } | { kind: "calm" };

export class Watchdog {
  private readonly spec: WatchdogSpec;
  /** CPU time at moments across the window, oldest first. */
  private points: { at: number; cpuMs: number }[] = [];
  private episode = false;

  constructor(spec: WatchdogSpec) {
    this.spec = spec;
  }

  get runaway(): boolean {
    return this.episode;
  }

  /** Folds one sample in (at: monotonic ms); returns the change of episode it makes, or null. */
  sample(at: number, usage: TreeUsage): WatchdogEvent | null {
    const cpuPercent = this.windowCpu(at, usage.cpuMs);
    const memory = usage.rssBytes > this.spec.memoryBytes;
    const cpu = cpuPercent !== null && cpuPercent > this.spec.cpuPercent;
    if (!this.episode && (memory || cpu)) {
      this.episode = true;
      return { kind: "runaway", reason: memory && cpu ? "memory,cpu" : memory ? "memory" : "cpu" };
    }
    const calm = usage.rssBytes < this.spec.memoryBytes * MEMORY_HYSTERESIS && (cpuPercent === null || cpuPercent <= this.spec.cpuPercent);
    if (this.episode && calm) {
      this.episode = false;
      return { kind: "calm" };
    }
    return null;
  }

  /** CPU over the whole window in percent of one core, once samples span it; null before. */
  private windowCpu(at: number, cpuMs: number): number | null {
    const { sustainMs } = this.spec;
    const newest = this.points[this.points.length - 1];
    if (newest === undefined || at - newest.at >= sustainMs / CPU_WINDOW_POINTS) this.points.push({ at, cpuMs });
    // Keep the newest point at least a window old, as the base the window is measured from.
    while (this.points.length > 1 && at - (this.points[1] as { at: number }).at >= sustainMs) this.points.shift();
    const base = this.points[0] as { at: number; cpuMs: number };
    const span = at - base.at;
    return span >= sustainMs ? ((cpuMs - base.cpuMs) / span) * 100 : null;
  }
}

const MIB = 1024 * 1024;

/** The job's result message for a limit passed: the figure that passed it and the limit, in the limit's own unit. */
export function tripMessage(trip: LimitTrip): string {
  switch (trip.cause) {
    case "memory_limit":
      return limitPassedText("memory", `resident ${Math.round(trip.peak / MIB)} MiB`, `${Math.round(trip.limit / MIB)} MiB`);
    case "cpu_limit":
      return limitPassedText("CPU", `${(trip.peak / 1000).toFixed(1)} s of CPU`, `${trip.limit / 1000} s`);
    case "process_limit":
      return limitPassedText("process", `${trip.peak} live processes`, String(trip.limit));
  }
}
