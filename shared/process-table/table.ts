/**
 * The process table: everything pi-jobs learns about processes beyond `kill()`, behind one interface with two backends,
 * chosen once per process (index.ts). The `/proc` backend (proc-table.ts) reads Linux's files; the portable one
 * (ps-table.ts) runs `ps` and `lsof`, which macOS and Linux both ship. What each reads, and where they differ, is in
 * docs/decisions/process-table.md.
 *
 * Every read that may be slow is asynchronous and never holds the calling thread for long: the /proc backend reads a
 * slice per turn of the event loop (proc-scan.ts), the portable one waits for a child process. The synchronous reads
 * are for what cannot wait: Pi's `exit` handler (host/safety/exit-net.ts), a test's check, a thread held on purpose.
 */
import type { PidWindow, TaggedProcess, TagScan } from "./tags.ts";

export type TableKind = "proc" | "ps";

/** One process as a stop or a cleanup sees it. */
export interface ProcessEntry {
  pid: number;
  /** The state letter: `Z` for a zombie on both backends. */
  state: string;
  pgrp: number;
  /** When it started, as `startOf` gives it: equal only for the same process. */
  start: number;
}

/** One member of a job's tree in one sample. */
export interface MemberSample {
  pid: number;
  ppid: number;
  /** CPU time in ms: its own, plus (where `countsReaped`) that of the children it has reaped. */
  cpuMs: number;
  rssBytes: number;
  /** A zombie: it counts its CPU time until it is reaped, but neither memory nor a live process. */
  zombie: boolean;
  /** Running or waiting for a CPU or a disk (state R, D; U on macOS) when sampled. */
  runnable: boolean;
}

/** Samples one job's tree on the calling thread's timers, until disposed. */
export interface TreeSampler {
  /**
   * Whether a member's CPU time includes that of the children it reaped (the /proc backend: `cutime`, `cstime`) or
   * is its own only (`ps`): the usage meter counts a member that ended differently (actors/watch/usage-meter.ts).
   */
  readonly countsReaped: boolean;
  /**
   * The step a member's CPU figure grows by: 10 ms from /proc (clock ticks) and BSD `ps` (hundredths), a whole second
   * from procps `ps`. A judgement of how busy a tree is needs samples that span a few steps.
   */
  readonly cpuStepMs: number;
  /** A sample taken now, where the backend reads a tree at once (the /proc backend): a bench's or a test's own clock. */
  readNow?(): MemberSample[];
  dispose(): void;
}

export interface TreeSamplerOptions {
  tag: string;
  leader: number;
  spawnedAtEpoch: number;
  /** Between samples, at most. */
  everyMs: number;
  /** How often a /proc tree probes the pids allocated anywhere for the tag (0: at every sample). */
  probeEveryMs: number;
  /** Each sample, at the monotonic time it was taken: the members found (none once the tree is gone). */
  onSample(at: number, members: MemberSample[]): void;
}

/** One of this process's threads, as the kernel counts it (the /proc backend only). */
export interface ThreadReading {
  /** Time on a CPU, ms. */
  cpuMs: number;
  /** Time spent runnable on a run queue, waiting for a CPU, ms; a wait still going on is not in it yet. */
  queuedMs: number;
  /** Running or waiting for a CPU (state R), as opposed to asleep in a call. */
  runnable: boolean;
}

export interface ProcessTable {
  readonly kind: TableKind;

  /** The processes carrying `tag`, and those that cannot be told yet; null where environments cannot be read. */
  scanTag(tag: string, window?: PidWindow): Promise<TagScan | null>;
  /** Which of `pids`, found carrying the tag, still run (still tagged, or still exiting). */
  stillTagged(pids: readonly number[], tag: string): Promise<number[] | null>;
  /** Every process whose tag names one of `runtimeIds`. */
  processesOfRuntimes(runtimeIds: readonly string[]): Promise<TaggedProcess[] | null>;
  /** The same, at once: for the exit handler, which cannot wait. */
  processesOfRuntimesNow(runtimeIds: readonly string[]): TaggedProcess[] | null;

  /**
   * The processes of `among` (null: of every process) that are in group `pgid` (null: in any), zombies included;
   * null when the table could not be read.
   */
  groupMembers(pgid: number | null, among: readonly number[] | null): Promise<ProcessEntry[] | null>;
  groupMembersNow(pgid: number | null, among: readonly number[] | null): ProcessEntry[] | null;
  /** One process, read at once when that is cheap (the /proc backend); undefined where only a scan tells. */
  processNow(pid: number): ProcessEntry | null | undefined;
  /** Runs `work` in this thread's share of reading time (proc-scan.ts); at once where reads do not hold the thread. */
  inSlice<T>(work: () => T): Promise<T>;

  /**
   * A figure of when `pid` started, equal only for the same process: null when there is none, undefined when the table
   * could not tell (a `ps` that failed or did not answer in time). Units are the backend's.
   */
  startOf(pid: number): Promise<number | null | undefined>;
  startOfNow(pid: number): number | null | undefined;

  /** Sorted, distinct TCP ports the processes listen on; null where sockets cannot be listed. */
  listening(pids: readonly number[]): Promise<number[] | null>;

  /** Samples a job's tree; null where nothing can be sampled. */
  treeSampler(options: TreeSamplerOptions): TreeSampler | null;

  /** Whether the backend reads a thread's own CPU and run-queue figures (`readThread`). */
  readonly readsThreads: boolean;
  /** The calling thread's kernel id, where the backend can read the thread's figures by it. */
  ownThreadId(): number | null;
  /** One of this process's threads by the id `ownThreadId` gave; null when it cannot be read. */
  readThread(tid: number): Promise<ThreadReading | null>;
}
