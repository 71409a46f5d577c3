/**
 * Samples a job's process tree for its actor: every process carrying its tag, as the process table samples it
 * (shared/process-table/: from the `proc` backend on this thread, or from the runtime's one `ps` per sample). The figures go to the
 * job's shared cell, where the host reads them without a message; the job's limits and the watchdog judge each sample
 * (actors/watch/usage-judge.ts). A limit passed asks the actor to stop the job; a runaway sets the cell's flag and is
 * reported once per episode. It is the job's one reader of its tree: the stall watch judges idleness from the same
 * samples (`onSample`).
 */
import type { JobCellWriter, TreeUsage } from "../../mailbox/cell.ts";
import type { LimitTrip } from "../../mailbox/result.ts";
import type { ResourceLimits, WatchdogSpec } from "../../mailbox/spec.ts";
import { processTable, type MemberSample, type TreeSampler } from "../../shared/process-table/index.ts";
import { limitPassed, Watchdog, type RunawayReason } from "./usage-judge.ts";
import { UsageMeter } from "./usage-meter.ts";

/** Between samples of a job with no limit: the figures the model and the console see, and the watchdog's. */
export const USAGE_SAMPLE_MS = 1_000;
/** Between samples of a job with a limit: a runaway allocation or fork loop is caught within a few of these. */
export const LIMIT_SAMPLE_MS = 250;
/**
 * How often a job without limits probes the pids allocated anywhere for its tag (the `proc` backend's tree); its
 * members' children are read at every sample. A job with a limit probes at every sample: a fork loop whose parents
 * end at once leaves only orphans, which the probe alone finds.
 */
export const ALLOCATED_PROBE_MS = 5_000;

export interface UsageWatchOptions {
  tag: string;
  pid: number;
  spawnedAtEpoch: number;
  limits: ResourceLimits | null;
  watchdog: WatchdogSpec | null;
  cell: JobCellWriter;
  /** A limit was passed: called once. */
  limitPassed(trip: LimitTrip): void;
  /** A runaway episode began. */
  runaway(reason: RunawayReason): void;
  /** Sample at least this often (a stall watch wants several samples in its quiet window); default: the cadence above. */
  everyMs?: number;
  /** Each sample of a tree that still has members, at the monotonic time it was taken. */
  onSample?(at: number, usage: TreeUsage, cpu: SampleCpu): void;
}

/** What a sample says of its CPU figure beyond the figure: its step, and whether a member was runnable. */
export interface SampleCpu {
  stepMs: number;
  runnable: boolean;
}

export class UsageWatch {
  private readonly options: UsageWatchOptions;
  private readonly sampler: TreeSampler | null;
  private readonly meter: UsageMeter;
  private readonly watchdog: Watchdog | null;
  private tripped = false;

  constructor(options: UsageWatchOptions) {
    this.options = options;
    this.watchdog = options.watchdog === null ? null : new Watchdog(options.watchdog);
    const cadence = options.limits === null ? USAGE_SAMPLE_MS : LIMIT_SAMPLE_MS;
    this.sampler = processTable().treeSampler({
      tag: options.tag,
      leader: options.pid,
      spawnedAtEpoch: options.spawnedAtEpoch,
      everyMs: Math.min(cadence, options.everyMs ?? cadence),
      probeEveryMs: options.limits === null ? ALLOCATED_PROBE_MS : 0,
      onSample: (at, members) => this.fold(at, members),
    });
    this.meter = new UsageMeter(this.sampler?.countsReaped ?? true);
  }

  dispose(): void {
    this.sampler?.dispose();
  }

  /**
   * One sample taken now, where the table reads a tree at once (the `proc` backend: a test's or the bench's own
   * clock); elsewhere the samples come only as the runtime's sampler takes them.
   */
  sample(): void {
    const members = this.sampler?.readNow?.() ?? null;
    if (members !== null) this.fold(performance.now(), members);
  }

  /** One sample: publish its figures, judge them. */
  private fold(at: number, samples: readonly MemberSample[]): void {
    const usage = this.meter.sample(at, samples);
    this.options.cell.setUsage(usage);
    // A tree with no member left says nothing about idleness: its CPU is unknown, never zero.
    const cpu = { stepMs: this.sampler?.cpuStepMs ?? 10, runnable: samples.some((member) => member.runnable) };
    if (samples.length > 0) this.options.onSample?.(at, usage, cpu);
    const { limits } = this.options;
    if (limits !== null && !this.tripped) {
      const trip = limitPassed(limits, usage);
      if (trip !== null) {
        this.tripped = true;
        this.options.limitPassed(trip);
      }
    }
    const event = this.watchdog?.sample(at, usage) ?? null;
    if (event === null) return;
    this.options.cell.setRunaway(event.kind === "runaway");
    if (event.kind === "runaway") this.options.runaway(event.reason);
  }
}
