/**
 * Whether an actor whose heartbeat stands still is hung or only starved. The actor bumps a counter in its cell a few
 * times a second while its event loop turns (actors/job/actor.ts); this side sees only the counter, so it dates a
 * change from the first look that found it. A counter that stands still says only that the loop has not turned, and on
 * a busy machine a thread at nice 10 inside Pi's process can wait many seconds for a CPU: that is no reason to kill its
 * job. So the verdict rests on the thread's own figures from the kernel (its CPU and run-queue times, read by the
 * process table under the tid published in the cell), compared with those of the first look that found the counter
 * at its value:
 *
 * - hung: the counter stood still for STALLED_ACTOR_MS and meanwhile the thread ran for HUNG_CPU_MS (a loop that does
 *   not yield: a turning one would have beaten many times over), or it is asleep now and waited for a CPU for less than
 *   half of that time (blocked in a call that does not return);
 * - starved: it stood still as long, but the thread is waiting for a CPU now, or spent most of the time waiting for one.
 *   A starved actor is never taken over for standing still; once the CPU comes, it beats again.
 *
 * Where the process table reads no thread's figures (the portable backend), the machine's load stands in: a thread
 * waits for a CPU only while runnable threads outnumber the CPUs, so a counter that stood still while the load per CPU
 * was under 1 is a hang, and one that stood still while it was 1 or more may be starvation and is waited for
 * (docs/decisions/process-table.md). Where neither can be read (the thread is gone), a counter
 * that stood still STALLED_ACTOR_MS is taken for a hang, as the counter alone can tell no more. Everything here but
 * `readActorThread` is pure: the clock and the readings are injected (tests/unit/heartbeat.test.ts).
 */
import { availableParallelism, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import type { ActorThread } from "../../mailbox/cell.ts";
import { processTable, type ThreadReading } from "../../shared/process-table/index.ts";

export type { ThreadReading };

/** How long a heartbeat must stand still before the verdict is considered at all. */
export const STALLED_ACTOR_MS = 15_000;
/**
 * CPU time a thread may spend without its loop turning before it counts as hung. A turn of an actor's loop takes
 * milliseconds (an output batch, a read, a stop's process scan: at most a few hundred on a crowded machine), so a second
 * of CPU with no beat is a loop that does not yield, however little CPU the machine gave it.
 */
export const HUNG_CPU_MS = 1000;

/**
 * The machine's run queue per CPU (the one-minute load average over the CPUs): what stands in for a thread's figures
 * where the process table reads none.
 */
export interface MachineLoad {
  loadPerCpu: number;
}

/** A reading and when it was taken (monotonic ms); `thread` is null where nothing can be read. */
export interface ThreadSample {
  at: number;
  thread: ThreadReading | MachineLoad | null;
}

const isLoad = (reading: ThreadReading | MachineLoad): reading is MachineLoad => "loadPerCpu" in reading;

export type HeartbeatVerdict =
  /** Not started yet, beating, or not still for long enough to judge. */
  | { kind: "live" }
  | { kind: "starved"; stillMs: number }
  | { kind: "hung"; stillMs: number; evidence: string };

const LIVE: HeartbeatVerdict = { kind: "live" };

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Whether the thread spent most of the time between two readings waiting for a CPU. One that is runnable at the second
 * reading is waiting now (or running), and a wait still going on is not counted yet: it is starved unless it ran for
 * most of the time. One that is asleep was starved only if its finished waits fill most of it. Without figures: no.
 */
export function starvedBetween(from: ThreadSample, to: ThreadSample): boolean {
  if (from.thread === null || to.thread === null) return false;
  if (isLoad(to.thread) || isLoad(from.thread)) return isLoad(to.thread) && to.thread.loadPerCpu >= 1;
  const span = to.at - from.at;
  if (to.thread.runnable) return to.thread.cpuMs - from.thread.cpuMs < span / 2;
  return to.thread.queuedMs - from.thread.queuedMs >= span / 2;
}

/** The verdict on a heartbeat that has stood still for `stillMs`, from the thread's readings at its start and now. */
export function judgeStill(stillMs: number, from: ThreadSample, to: ThreadSample): HeartbeatVerdict {
  if (stillMs < STALLED_ACTOR_MS) return LIVE;
  const still = `its heartbeat stood still for ${seconds(stillMs)}`;
  if (from.thread === null || to.thread === null) return { kind: "hung", stillMs, evidence: still };
  if (isLoad(to.thread) || isLoad(from.thread)) {
    if (starvedBetween(from, to)) return { kind: "starved", stillMs };
    const load = isLoad(to.thread) ? to.thread.loadPerCpu : 0;
    return { kind: "hung", stillMs, evidence: `${still} while the machine had a CPU to spare (load ${load.toFixed(2)} per CPU)` };
  }
  const ran = to.thread.cpuMs - from.thread.cpuMs;
  if (ran >= HUNG_CPU_MS) return { kind: "hung", stillMs, evidence: `${still} while its thread ran ${seconds(ran)} on a CPU` };
  if (!starvedBetween(from, to)) {
    const waited = to.thread.queuedMs - from.thread.queuedMs;
    return { kind: "hung", stillMs, evidence: `${still} while its thread slept (it waited ${seconds(waited)} for a CPU)` };
  }
  return { kind: "starved", stillMs };
}

/**
 * An actor's heartbeat as the supervisor sees it. `counter` is null until the actor has started on a thread: a job that
 * still waits for one has nothing to judge, and its still time starts with the actor. `readThread` reads the actor's
 * thread (null when it cannot).
 */
export class Heartbeat {
  private readonly counter: () => number | null;
  private readonly readThread: () => Promise<ThreadReading | MachineLoad | null>;
  private readonly now: () => number;
  /** The counter's value, when a look first found it, and the thread's figures from then. */
  private episode: { value: number; since: number; start: Promise<ThreadSample> } | null = null;

  constructor(counter: () => number | null, readThread: () => Promise<ThreadReading | MachineLoad | null>, now: () => number = () => performance.now()) {
    this.counter = counter;
    this.readThread = readThread;
    this.now = now;
    this.stillFor();
  }

  /**
   * Milliseconds since the counter was first seen at its current value: never more than it really stood still. A look
   * that finds a new value reads the thread's figures, the start of the span a later verdict judges.
   */
  stillFor(): number {
    const value = this.counter();
    const now = this.now();
    if (value === null) {
      this.episode = null;
      return 0;
    }
    if (this.episode === null || this.episode.value !== value) this.episode = { value, since: now, start: this.sample() };
    return now - this.episode.since;
  }

  /**
   * The verdict now. Beyond the reading at the start of each still span (stillFor), it reads the thread's figures only
   * once the counter has stood still for STALLED_ACTOR_MS.
   */
  async look(): Promise<HeartbeatVerdict> {
    const episode = this.stillFor() < STALLED_ACTOR_MS ? null : this.episode;
    if (episode === null) return LIVE;
    const [from, to] = await Promise.all([episode.start, this.sample()]);
    // A beat while the figures were read: the loop turned, there is nothing to judge.
    const stillMs = this.stillFor();
    if (this.episode !== episode) return LIVE;
    return judgeStill(stillMs, from, to);
  }

  async sample(): Promise<ThreadSample> {
    const thread = await this.readThread();
    return { at: this.now(), thread };
  }
}

/**
 * The time a late actor has had to finish: the time since it was first found late, less every span between two looks in
 * which its thread mostly waited for a CPU (`starvedBetween`). Without the thread's figures, all of it.
 */
export class OwnClock {
  private readonly sample: () => Promise<ThreadSample>;
  private last: ThreadSample | null = null;
  private own = 0;

  constructor(sample: () => Promise<ThreadSample>) {
    this.sample = sample;
  }

  /** Takes a reading and returns the own time so far: 0 at the first call. Calls must not overlap. */
  async elapsed(): Promise<number> {
    const next = await this.sample();
    if (this.last !== null && !starvedBetween(this.last, next)) this.own += next.at - this.last.at;
    this.last = next;
    return this.own;
  }
}

/**
 * What a verdict reads of an actor's thread: nothing before it has started, its own figures where the process table
 * reads a thread's (null when it cannot), else the machine's load.
 */
export function readActorThread(thread: ActorThread): Promise<ThreadReading | MachineLoad | null> {
  if (!thread.started) return Promise.resolve(null);
  if (!processTable().readsThreads) return Promise.resolve(machineLoad());
  return thread.tid !== null ? processTable().readThread(thread.tid) : Promise.resolve(null);
}

/** The machine's load per CPU now. */
function machineLoad(): MachineLoad {
  return { loadPerCpu: (loadavg()[0] ?? 0) / Math.max(1, availableParallelism()) };
}
