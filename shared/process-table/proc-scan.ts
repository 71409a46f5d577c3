/**
 * Walks over processes in `/proc` (Linux) that never hold the thread that runs them: a scan reads a process at a time,
 * and all the scans of one thread together get at most SLICE_MS of each turn of its event loop before they yield to
 * the next one (setImmediate). Scans that want every process share one pass: 64 jobs taken over at once each look for
 * their tagged processes and for their group's members on every check, and each used to read all of `/proc` itself,
 * synchronously, on Pi's thread — seconds without a turn of its event loop
 * (docs/decisions/proc-scans.md).
 *
 * A scan is a visitor: the walk hands it each pid, with reads that happen at most once per pid and pass however many
 * scans look at it. The synchronous driver (`scanNow`) is for what must have its answer at once: Pi's process `exit`
 * handler, which cannot wait (host/safety/exit-net.ts), an actor's watch on its own thread (actors/watch/watches.ts), and a test's
 * check or a thread held on purpose (a test fixture).
 */
import { readdirSync } from "node:fs";
import { pidExists, readEnviron, statFields } from "./proc-stat.ts";

/** What a scan may read of the process the walk is at; each is read at most once per pid and pass. */
export interface ProcReads {
  /** `/proc/<pid>/stat` split into fields (proc-stat.ts); null when the process is gone. */
  stat(): string[] | null;
  /** `/proc/<pid>/environ`; null when gone or another user's. Valid only during the visit. */
  environ(): Buffer | null;
}

export interface ProcScan<T> {
  /** The pids to look at; null for every process in `/proc` (the walk then shares one pass with other such scans). */
  readonly pids: readonly number[] | null;
  visit(pid: number, reads: ProcReads): void;
  /** What the scan found, once every pid was visited. */
  result(): T;
}

/** How long the scans of one thread may read per turn of its event loop. */
const SLICE_MS = 2;

/** When the current slice of reading ends (performance.now()); a slice opens only when the walk got a turn of its own. */
let sliceEnds = Number.NEGATIVE_INFINITY;
let nextSlice: Promise<void> | null = null;

/**
 * Resolves at the next turn of the event loop, which opens a slice. Every walk waiting for it goes on in that turn,
 * and each stops again once the slice is used up: the bound holds for all of them together.
 */
function slice(): Promise<void> {
  nextSlice ??= new Promise((resolve) =>
    setImmediate(() => {
      nextSlice = null;
      sliceEnds = performance.now() + SLICE_MS;
      resolve();
    }),
  );
  return nextSlice;
}

/**
 * Runs `work` in this thread's slice: at once while the slice lasts, else in the next one. For a small piece of a stop
 * that is not a walk (a group's `kill(0)` and its leader's stat, the signals after a check), of which 64 jobs' come due
 * in the same turn. The work runs right after the check that let it, so that however many wait for a slice, those
 * that go on in it stop once it is used up.
 */
export async function inSlice<T>(work: () => T): Promise<T> {
  while (performance.now() >= sliceEnds) await slice();
  return work();
}

/** Every pid in `/proc`; null when it cannot be listed (not Linux, or no /proc). */
export function listPids(): number[] | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const pids: number[] = [];
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first >= 48 && first <= 57) pids.push(Number(entry));
  }
  return pids;
}

/** Reads of one pid, made once, whichever scan asks first. */
function readsOf(pid: number): ProcReads {
  let stat: string[] | null | undefined;
  let environ: Buffer | null | undefined;
  return {
    stat: () => (stat === undefined ? (stat = statFields(pid)) : stat),
    environ: () => (environ === undefined ? (environ = readEnviron(pid)) : environ),
  };
}

function visitAll(pid: number, scans: readonly ProcScan<unknown>[]): void {
  const reads = readsOf(pid);
  for (const scan of scans) scan.visit(pid, reads);
}

/**
 * Visits `pids` with every scan, yielding whenever the slice is used up. Pids a scan names (`probed`) are skipped when
 * gone, which every scan reads as absent anyway: many of them are, and a read of a gone pid costs a thrown error.
 */
async function walk(pids: readonly number[], scans: readonly ProcScan<unknown>[], probed: boolean): Promise<void> {
  for (const pid of pids) {
    while (performance.now() >= sliceEnds) await slice();
    if (!probed || pidExists(pid)) visitAll(pid, scans);
  }
}

interface Waiting {
  scan: ProcScan<unknown>;
  done(listed: boolean): void;
  failed(error: unknown): void;
}

/** Scans of every process waiting for the next pass; a pass under way serves only those that were waiting when it began. */
let waiting: Waiting[] = [];
let passing = false;

/**
 * Passes over all of `/proc`, one after the other while scans wait. A pass begins at the next slice, so every scan asked
 * for in this turn (64 takeovers fired by one timer phase) shares it; one asked for during a pass waits for the next,
 * since the pass listed `/proc` before it was asked and may have missed a process started since.
 */
async function passes(): Promise<void> {
  passing = true;
  try {
    while (waiting.length > 0) {
      await slice();
      const batch = waiting;
      waiting = [];
      try {
        const pids = listPids();
        if (pids !== null) await walk(pids, batch.map((entry) => entry.scan), false);
        for (const entry of batch) entry.done(pids !== null);
      } catch (error) {
        for (const entry of batch) entry.failed(error);
      }
    }
  } finally {
    passing = false;
  }
}

/** Runs the scan a slice per turn; null when it wants every process and `/proc` cannot be listed. */
export async function scan<T>(procScan: ProcScan<T>): Promise<T | null> {
  if (procScan.pids !== null) {
    await walk(procScan.pids, [procScan], true);
    return procScan.result();
  }
  const listed = await new Promise<boolean>((resolve, reject) => {
    waiting.push({ scan: procScan, done: resolve, failed: reject });
    if (!passing) void passes();
  });
  return listed ? procScan.result() : null;
}

/** The same, at once and without yielding: only where the thread cannot wait (an exit handler) or is held anyway. */
export function scanNow<T>(procScan: ProcScan<T>): T | null {
  const probed = procScan.pids !== null;
  const pids = procScan.pids ?? listPids();
  if (pids === null) return null;
  for (const pid of pids) if (!probed || pidExists(pid)) visitAll(pid, [procScan]);
  return procScan.result();
}
