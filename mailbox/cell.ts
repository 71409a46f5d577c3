/**
 * The job's shared cell: one small SharedArrayBuffer per job that the actor writes with Atomics and the host reads
 * whenever it likes (the 250 ms sampler, a tool call, the console), so figures and lifecycle facts cross without a
 * message. The host creates it and hands it over in the task; the actor is the only writer, except for the cancel
 * word, which only the host sets. The layout is defined here once, for both sides.
 *
 * The lifecycle word holds the job's phase (mailbox/lifecycle.ts). It is also the spawn handshake: the actor moves
 * it from `starting` to `spawning` with a compare-and-swap before it spawns, and the host moves it from `starting` to
 * `cancelled` the same way; whichever swap wins decides whether a process will ever exist. The pid and pgid are stored before the word leaves
 * `spawning`, and every change of the word is notified, so the host can await it (Atomics.waitAsync).
 */
import { phaseCode, phaseOfCode, type Phase } from "./lifecycle.ts";

// Int32 words.
const STATE = 0;
/** A new cell's zeroed lifecycle word reads `starting`. */
const STARTING = phaseCode("starting");
const PID = 1;
const PGID = 2;
const CANCEL = 3;
const PAUSED = 4;
const LOG_TRUNCATED = 5;
/** Bumped by the actor a few times a second while its event loop runs: the host's evidence that it is alive. */
const HEARTBEAT = 6;
/** Bit 0: stalled; bit 1: waiting for input (actors/watch/stall.ts); bit 2: a runaway (actors/watch/usage-judge.ts). */
const STUCK = 7;
const STALLED_BIT = 1;
const WAITING_BIT = 2;
const RUNAWAY_BIT = 4;
/**
 * The actor's OS thread, written once when the actor starts: 0 until then (the job still waits for a thread), its
 * Linux thread id, or THREAD_UNKNOWN where there is none to read. The host reads that thread's CPU figures to tell a
 * starved actor from a hung one (host/runtime/heartbeat.ts).
 */
const THREAD = 8;
const THREAD_UNKNOWN = -1;
/**
 * The job's tree as last sampled by its actor (actors/watch/usage-watch.ts): live processes now and at most, and CPU
 * over the last interval in tenths of a percent of one core. USAGE_UNKNOWN in CPU_PERMILLE until two samples exist.
 */
const PROCESSES = 9;
const PEAK_PROCESSES = 10;
const CPU_PERMILLE = 11;
const USAGE_UNKNOWN = -1;
/** Error-like lines the job has printed so far (actors/output/evidence-scan.ts). */
const EVIDENCE = 12;
const INT_WORDS = 13;
/** A BigInt64Array must start on a multiple of 8 bytes. */
const BIG_OFFSET = Math.ceil((INT_WORDS * 4) / 8) * 8;
// BigInt64 words, after the Int32 ones.
const BYTES = 0;
const LINES = 1;
const LAST_OUTPUT_EPOCH_MS = 2;
const LOG_BYTES = 3;
const UNREAD_BYTES = 4;
const STARTED_EPOCH_MS = 5;
/** The tree's resident memory now and at most, and the CPU time it has used; RSS_BYTES is -1 before the first sample. */
const RSS_BYTES = 6;
const PEAK_RSS_BYTES = 7;
const CPU_MS = 8;
const BIG_WORDS = 9;

export const JOB_CELL_BYTES = BIG_OFFSET + BIG_WORDS * 8;

export function createJobCell(): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(JOB_CELL_BYTES);
  // No sample yet: zero would read as a measured, empty tree.
  new BigInt64Array(buffer, BIG_OFFSET, BIG_WORDS)[RSS_BYTES] = -1n;
  return buffer;
}

export interface CellView {
  state: Phase;
  pid: number | null;
  pgid: number | null;
  cancelled: boolean;
  paused: boolean;
  bytes: number;
  lines: number;
  lastOutputEpochMs: number | null;
  startedEpochMs: number | null;
  logBytes: number;
  logTruncated: boolean;
  /** Bytes received and not yet taken by a shell read. */
  unreadBytes: number;
  /** Error-like lines printed so far. */
  evidenceLines: number;
  heartbeat: number;
  /** Quiet past the job's stall_seconds while using under 1 % of a core. */
  stalled: boolean;
  /** The last output is a prompt-shaped unterminated line, followed by quiet. */
  waitingForInput: boolean;
  /** Over the watchdog's thresholds now (an episode under way). */
  runaway: boolean;
  /** The tree's figures; null before the actor's first sample (or where the process table cannot read it). */
  usage: TreeUsage | null;
}

/** A job's process tree as its actor last sampled it: what the tools and the console show of its resource use. */
export interface TreeUsage {
  rssBytes: number;
  peakRssBytes: number;
  /** CPU over the last sample interval, in percent of one core; null until two samples exist. */
  cpuPercent: number | null;
  /** CPU time the tree has used since the spawn. */
  cpuMs: number;
  processes: number;
  peakProcesses: number;
}

function views(buffer: SharedArrayBuffer): { ints: Int32Array; bigs: BigInt64Array } {
  if (buffer.byteLength !== JOB_CELL_BYTES) throw new RangeError(`a job cell has ${JOB_CELL_BYTES} bytes, got ${buffer.byteLength}`);
  return { ints: new Int32Array(buffer, 0, INT_WORDS), bigs: new BigInt64Array(buffer, BIG_OFFSET, BIG_WORDS) };
}

/** The actor's thread as its cell names it: not started yet, or started with its Linux thread id (null: none known). */
export type ActorThread = { started: false } | { started: true; tid: number | null };

/** Node 22 has it; the TypeScript lib this project targets does not declare it yet. */
interface AtomicsWaitAsync {
  waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): { async: false; value: string } | { async: true; value: Promise<string> };
}

/** The actor's side. */
export class JobCellWriter {
  private readonly ints: Int32Array;
  private readonly bigs: BigInt64Array;

  constructor(buffer: SharedArrayBuffer) {
    ({ ints: this.ints, bigs: this.bigs } = views(buffer));
  }

  /** Claims the spawn; false when the host cancelled first (then nothing may be spawned). */
  claimSpawn(): boolean {
    const won = Atomics.compareExchange(this.ints, STATE, STARTING, phaseCode("spawning")) === STARTING;
    if (won) Atomics.notify(this.ints, STATE);
    return won;
  }

  /** Right after spawn, before any message: from now on the host can kill what the job started. */
  publishSpawn(pid: number, pgid: number, startedEpochMs: number): void {
    Atomics.store(this.ints, PID, pid);
    Atomics.store(this.ints, PGID, pgid);
    Atomics.store(this.bigs, STARTED_EPOCH_MS, BigInt(startedEpochMs));
    this.setState("running");
  }

  /** The actor moves through every phase but `cancelled`, which only the host writes (the spawn handshake). */
  setState(state: Exclude<Phase, "cancelled">): void {
    Atomics.store(this.ints, STATE, phaseCode(state));
    Atomics.notify(this.ints, STATE);
  }

  cancelRequested(): boolean {
    return Atomics.load(this.ints, CANCEL) !== 0;
  }

  addOutput(bytes: number, lines: number, nowEpochMs: number): void {
    Atomics.add(this.bigs, BYTES, BigInt(bytes));
    if (lines > 0) Atomics.add(this.bigs, LINES, BigInt(lines));
    Atomics.store(this.bigs, LAST_OUTPUT_EPOCH_MS, BigInt(nowEpochMs));
  }

  setPaused(paused: boolean): void {
    Atomics.store(this.ints, PAUSED, paused ? 1 : 0);
  }

  setLog(bytes: number, truncated: boolean): void {
    Atomics.store(this.bigs, LOG_BYTES, BigInt(bytes));
    Atomics.store(this.ints, LOG_TRUNCATED, truncated ? 1 : 0);
  }

  setUnread(bytes: number): void {
    Atomics.store(this.bigs, UNREAD_BYTES, BigInt(bytes));
  }

  setEvidence(lines: number): void {
    Atomics.store(this.ints, EVIDENCE, lines);
  }

  beat(): void {
    Atomics.add(this.ints, HEARTBEAT, 1);
  }

  /** Once, when the actor starts on its thread: `tid` is the thread's Linux id, null where it has none. */
  publishThread(tid: number | null): void {
    Atomics.store(this.ints, THREAD, tid !== null && tid > 0 ? tid : THREAD_UNKNOWN);
  }

  setStuck(flags: { stalled: boolean; waitingForInput: boolean }): void {
    // The runaway bit is the usage watch's: kept as it is.
    const runaway = Atomics.load(this.ints, STUCK) & RUNAWAY_BIT;
    Atomics.store(this.ints, STUCK, (flags.stalled ? STALLED_BIT : 0) | (flags.waitingForInput ? WAITING_BIT : 0) | runaway);
  }

  setRunaway(runaway: boolean): void {
    if (runaway) Atomics.or(this.ints, STUCK, RUNAWAY_BIT);
    else Atomics.and(this.ints, STUCK, ~RUNAWAY_BIT);
  }

  /** One sample of the tree; RSS last, since the host takes a non-negative RSS to mean a sample exists. */
  setUsage(usage: TreeUsage): void {
    Atomics.store(this.ints, PROCESSES, usage.processes);
    Atomics.store(this.ints, PEAK_PROCESSES, usage.peakProcesses);
    Atomics.store(this.ints, CPU_PERMILLE, usage.cpuPercent === null ? USAGE_UNKNOWN : Math.round(usage.cpuPercent * 10));
    Atomics.store(this.bigs, CPU_MS, BigInt(Math.round(usage.cpuMs)));
    Atomics.store(this.bigs, PEAK_RSS_BYTES, BigInt(usage.peakRssBytes));
    Atomics.store(this.bigs, RSS_BYTES, BigInt(usage.rssBytes));
  }
}

/** The host's side: reads, plus the one word it owns (cancel). */
export class JobCellReader {
  private readonly ints: Int32Array;
  private readonly bigs: BigInt64Array;

  constructor(buffer: SharedArrayBuffer) {
    ({ ints: this.ints, bigs: this.bigs } = views(buffer));
  }

  state(): Phase {
    return phaseOfCode(Atomics.load(this.ints, STATE));
  }

  /** The published process-group id, or null before the spawn is published. */
  pgid(): number | null {
    return Atomics.load(this.ints, PGID) || null;
  }

  heartbeat(): number {
    return Atomics.load(this.ints, HEARTBEAT);
  }

  thread(): ActorThread {
    const word = Atomics.load(this.ints, THREAD);
    if (word === 0) return { started: false };
    return { started: true, tid: word === THREAD_UNKNOWN ? null : word };
  }

  /**
   * Asks the job to stop before or while it starts. Returns true when this cancelled it before the spawn was claimed:
   * then no process was or will ever be started. Otherwise the actor sees the flag once its spawn is published.
   */
  cancel(): boolean {
    Atomics.store(this.ints, CANCEL, 1);
    const won = Atomics.compareExchange(this.ints, STATE, STARTING, phaseCode("cancelled")) === STARTING;
    if (won) Atomics.notify(this.ints, STATE);
    return won;
  }

  /** Resolves once the lifecycle word is no longer `from`, or after `timeoutMs`; never blocks the thread. */
  async changed(from: Phase, timeoutMs: number): Promise<Phase> {
    const waited = (Atomics as unknown as AtomicsWaitAsync).waitAsync(this.ints, STATE, phaseCode(from), timeoutMs);
    if (waited.async) await waited.value;
    return this.state();
  }

  read(): CellView {
    const { ints, bigs } = this;
    const number = (index: number) => Number(Atomics.load(bigs, index));
    const last = number(LAST_OUTPUT_EPOCH_MS);
    const started = number(STARTED_EPOCH_MS);
    return {
      state: this.state(),
      pid: Atomics.load(ints, PID) || null,
      pgid: this.pgid(),
      cancelled: Atomics.load(ints, CANCEL) !== 0,
      paused: Atomics.load(ints, PAUSED) !== 0,
      bytes: number(BYTES),
      lines: number(LINES),
      lastOutputEpochMs: last === 0 ? null : last,
      startedEpochMs: started === 0 ? null : started,
      logBytes: number(LOG_BYTES),
      logTruncated: Atomics.load(ints, LOG_TRUNCATED) !== 0,
      unreadBytes: number(UNREAD_BYTES),
      evidenceLines: Atomics.load(ints, EVIDENCE),
      heartbeat: this.heartbeat(),
      stalled: (Atomics.load(ints, STUCK) & STALLED_BIT) !== 0,
      waitingForInput: (Atomics.load(ints, STUCK) & WAITING_BIT) !== 0,
      runaway: (Atomics.load(ints, STUCK) & RUNAWAY_BIT) !== 0,
      usage: this.usage(),
    };
  }

  /** The tree's last sample, or null before the first (a sample may be read while the actor writes the next). */
  usage(): TreeUsage | null {
    const { ints, bigs } = this;
    const rss = Number(Atomics.load(bigs, RSS_BYTES));
    if (rss < 0) return null;
    const permille = Atomics.load(ints, CPU_PERMILLE);
    return {
      rssBytes: rss,
      peakRssBytes: Math.max(rss, Number(Atomics.load(bigs, PEAK_RSS_BYTES))),
      cpuPercent: permille === USAGE_UNKNOWN ? null : permille / 10,
      cpuMs: Number(Atomics.load(bigs, CPU_MS)),
      processes: Atomics.load(ints, PROCESSES),
      peakProcesses: Atomics.load(ints, PEAK_PROCESSES),
    };
  }
}
