/**
 * Samples a job's process tree on its actor's thread: every process carrying its tag (actors/watch/tree-members.ts),
 * each read from its `/proc/<pid>/stat`. The figures go to the job's shared cell, where the host reads them without a
 * message; the job's limits and the watchdog judge each sample (actors/watch/usage-judge.ts). A limit passed asks the
 * actor to stop the job; a runaway sets the cell's flag and is reported once per episode. It is the job's one reader
 * of its tree: the stall watch judges idleness from the same samples (`onSample`). Elsewhere than Linux there is
 * nothing to read: the figures stay unknown, and the host refuses limits there (host/tools/limits.ts).
 */
import type { JobCellWriter, TreeUsage } from "../../mailbox/cell.ts";
import type { LimitTrip } from "../../mailbox/result.ts";
import type { ResourceLimits, WatchdogSpec } from "../../mailbox/spec.ts";
import { pageBytes, statField, statFields, statNumber, startTicksOf, TICKS_PER_SECOND } from "../../shared/proc-stat.ts";
import { TreeMembers } from "./tree-members.ts";
import { limitPassed, Watchdog, type RunawayReason } from "./usage-judge.ts";
import { UsageMeter, type MemberSample } from "./usage-meter.ts";

/** Between samples of a job with no limit: the figures the model and the console see, and the watchdog's. */
export const USAGE_SAMPLE_MS = 1_000;
/** Between samples of a job with a limit: a runaway allocation or fork loop is caught within a few of these. */
export const LIMIT_SAMPLE_MS = 250;
/**
 * How often a job without limits probes the pids allocated anywhere for its tag (actors/watch/tree-members.ts); its
 * members' children are read at every sample. A job with a limit probes at every sample: a fork loop whose parents
 * end at once leaves only orphans, which the probe alone finds.
 */
export const ALLOCATED_PROBE_MS = 5_000;

/** When a job's first sample is taken, after its spawn (see the constructor). */
export const FIRST_SAMPLE_MS = 50;

const CPU_FIELDS = ["utime", "stime", "cutime", "cstime"] as const;

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
  onSample?(at: number, usage: TreeUsage): void;
}

export class UsageWatch {
  private readonly options: UsageWatchOptions;
  private readonly members: TreeMembers;
  private readonly meter = new UsageMeter();
  private readonly watchdog: Watchdog | null;
  /** Start time of each member when it was found: a pid whose start time changed is another process. */
  private readonly starts = new Map<number, number>();
  private readonly timer: ReturnType<typeof setInterval> | null;
  private first: ReturnType<typeof setTimeout> | null = null;
  private tripped = false;

  constructor(options: UsageWatchOptions) {
    this.options = options;
    this.members = new TreeMembers({
      tag: options.tag,
      leader: options.pid,
      spawnedAtEpoch: options.spawnedAtEpoch,
      probeEveryMs: options.limits === null ? ALLOCATED_PROBE_MS : 0,
    });
    this.watchdog = options.watchdog === null ? null : new Watchdog(options.watchdog);
    if (process.platform !== "linux") {
      this.timer = null;
      return;
    }
    const cadence = options.limits === null ? USAGE_SAMPLE_MS : LIMIT_SAMPLE_MS;
    this.timer = setInterval(() => this.sample(), Math.min(cadence, options.everyMs ?? cadence));
    this.timer.unref();
    // The first sample (a scan for the tag) waits FIRST_SAMPLE_MS: a short command (`ls`, `echo`, `git status`) is
    // over by then and never pays for it (its result then has no usage figures, as one sampled only while forking),
    // and a job that runs on has its figures almost at once (docs/benchmarks.md, "Where a short job's time goes").
    this.first = setTimeout(() => {
      this.first = null;
      this.sample();
    }, FIRST_SAMPLE_MS);
    this.first.unref();
  }

  dispose(): void {
    if (this.timer !== null) clearInterval(this.timer);
    if (this.first !== null) clearTimeout(this.first);
  }

  /** One sample: read the tree, publish its figures, judge them. */
  sample(): void {
    const at = performance.now();
    const samples = this.read();
    const usage = this.meter.sample(at, samples);
    this.options.cell.setUsage(usage);
    // A tree with no member left says nothing about idleness: its CPU is unknown, never zero.
    if (samples.length > 0) this.options.onSample?.(at, usage);
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

  private read(): MemberSample[] {
    const page = pageBytes();
    const samples: MemberSample[] = [];
    for (const pid of this.members.look()) {
      const fields = statFields(pid);
      const start = fields === null ? null : startTicksOf(fields);
      const known = this.starts.get(pid);
      if (fields === null || start === null || (known !== undefined && known !== start)) {
        this.members.drop(pid);
        this.starts.delete(pid);
        continue;
      }
      if (known === undefined) this.starts.set(pid, start);
      let ticks = 0;
      for (const field of CPU_FIELDS) ticks += statNumber(fields, field) || 0;
      samples.push({
        pid,
        ppid: statNumber(fields, "ppid"),
        cpuMs: (ticks * 1000) / TICKS_PER_SECOND,
        rssBytes: (statNumber(fields, "rss") || 0) * page,
        zombie: statField(fields, "state") === "Z",
      });
    }
    return samples;
  }
}
