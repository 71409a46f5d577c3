/**
 * The job tag read from `/proc` (the /proc backend of the process table, table.ts): a process's tag is in
 * `/proc/<pid>/environ`. What the tag is and what escapes it: tags.ts.
 */
import { pidExists, readEnviron, readProcText, startTicksOf, statField, statNumber, TICKS_PER_SECOND } from "./proc-stat.ts";
import { scan, scanNow, type ProcReads, type ProcScan } from "./proc-scan.ts";
import { TAG_VARIABLE, type PidWindow, type TaggedProcess, type TagScan } from "./tags.ts";

const IS_LINUX = process.platform === "linux";

/**
 * The fastest sustained fork rate we assume (processes per second, machine-wide). Within pid_max / this many
 * seconds of the leader's spawn the pid counter cannot have come round to the leader's pid again, so the pids
 * allocated since are exactly the cyclic range (leader, last allocated]. Later than that, the scan reads every
 * process: slower, never wrong.
 */
const MAX_FORKS_PER_SECOND = 100_000;

let pidMax: number | null | undefined;
function readPidMax(): number | null {
  if (pidMax === undefined) pidMax = readInteger("/proc/sys/kernel/pid_max");
  return pidMax;
}

function readInteger(path: string): number | null {
  const value = Number.parseInt(readProcText(path) ?? "", 10);
  return Number.isSafeInteger(value) ? value : null;
}

/** Whether `pid` may have been allocated since the window opened; true when that cannot be decided. */
function pidFilter(window: PidWindow | undefined): (pid: number) => boolean {
  const all = () => true;
  if (!window || !windowDecidable(window)) return all;
  const last = readInteger("/proc/sys/kernel/ns_last_pid");
  if (last === null) return all;
  const first = window.firstPid;
  // The counter wrapped at most once since `first`: the range is [first, max) followed by [0, last].
  return last >= first ? (pid) => pid >= first && pid <= last : (pid) => pid >= first || pid <= last;
}

/**
 * Pids of the processes that carry the tag (zombies excluded: their environment is gone with their memory);
 * null where environments cannot be read (not Linux, or no /proc). Read a slice per turn (shared/process-table/proc-scan.ts).
 */
export async function taggedProcesses(tag: string, window?: PidWindow): Promise<number[] | null> {
  return (await scanTag(tag, window))?.tagged ?? null;
}

/** The same, without yielding, for an actor's watch that needs the answer now (actors/watch/watches.ts). */
export function taggedProcessesNow(tag: string, window?: PidWindow): number[] | null {
  const found = tagScan(tag, window);
  return found === null ? null : (scanNow(found)?.tagged ?? null);
}

/**
 * taggedProcesses, and the processes that cannot be told yet (see TagScan); null where environments cannot be read.
 * Read a slice per turn; a scan of every process shares its pass over `/proc` with the other scans of this turn.
 */
export async function scanTag(tag: string, window?: PidWindow): Promise<TagScan | null> {
  const found = tagScan(tag, window);
  return found === null ? null : scan(found);
}

/**
 * Which of `pids`, found carrying the tag, are still there: one read each instead of a walk over every process (a stop
 * watches the escapees it found this way between its full scans, shared/process-group.ts). One that still carries the
 * tag counts, and so does one still exiting: once the kernel has begun to tear down a process's memory its environment
 * reads as nothing (no longer tagged, to a scan), while the process holds its descriptors and runs on until it is a
 * zombie, for tens of milliseconds with a large heap. A pid that died meanwhile, or was given to another process since,
 * is not counted. Null where environments cannot be read.
 */
export async function stillTagged(pids: readonly number[], tag: string): Promise<number[] | null> {
  if (!IS_LINUX) return null;
  const still: number[] = [];
  return scan({
    pids,
    visit(pid, reads) {
      const environ = reads.environ();
      if (environ !== null && environ.length > 0 ? tagsIn(environ).includes(tag) : exiting(reads)) still.push(pid);
    },
    result: () => still,
  });
}

/** Set in a process's stat flags once it has begun to exit. */
const PF_EXITING = 0x00000004;

/** Whether the process the walk is at has begun to exit and is not yet a zombie. */
function exiting(reads: ProcReads): boolean {
  const fields = reads.stat();
  if (fields === null) return false;
  const state = statField(fields, "state");
  const flags = statNumber(fields, "flags");
  return state !== undefined && state !== "Z" && state !== "X" && Number.isFinite(flags) && (flags & PF_EXITING) !== 0;
}

/**
 * The scan for one tag: the pids allocated since the leader when there are few (probing each costs less than listing
 * /proc, and a missing pid fails at once), otherwise every process, of which those outside the window are skipped.
 */
function tagScan(tag: string, window: PidWindow | undefined): ProcScan<TagScan> | null {
  if (!IS_LINUX) return null;
  const range = pidRange(window);
  // Read when the walk reaches its first process rather than now: a shared pass may begin a turn or more later, and
  // the pids allocated meanwhile belong in the window.
  let inWindow: ((pid: number) => boolean) | null = range === null ? null : () => true;
  const tagged: number[] = [];
  const unsettled: number[] = [];
  const startedSince = window ? startedSinceCheck(window.spawnedAt) : null;
  return {
    pids: range,
    visit(pid, reads) {
      inWindow ??= pidFilter(window);
      if (pid === process.pid || !inWindow(pid)) return;
      const environ = reads.environ();
      if (environ === null) return;
      if (tagsIn(environ).includes(tag)) tagged.push(pid);
      else if (environ.length === 0 && startedSince?.(reads)) unsettled.push(pid);
    },
    result: () => ({ tagged: tagged.sort((a, b) => a - b), unsettled: unsettled.sort((a, b) => a - b) }),
  };
}

/** Kernel threads have no environment either; they are never a job's. */
const PF_KTHREAD = 0x00200000;
/** The boot time estimated from the uptime is off by far less than this; a process this much older still counts as new. */
const STARTED_SINCE_SLACK_MS = 1000;

/**
 * Whether the process the walk is at is a live user process started since `sinceEpochMs` (less the slack); null when
 * that cannot be read.
 */
function startedSinceCheck(sinceEpochMs: number): ((reads: ProcReads) => boolean) | null {
  const uptimeSeconds = Number.parseFloat(readProcText("/proc/uptime") ?? "");
  if (!Number.isFinite(uptimeSeconds)) return null;
  const bootEpochMs = Date.now() - uptimeSeconds * 1000;
  return (reads) => {
    const fields = reads.stat();
    if (fields === null) return false;
    const state = statField(fields, "state");
    const flags = statNumber(fields, "flags");
    const startTicks = startTicksOf(fields);
    if (state === undefined || state === "Z" || state === "X" || !Number.isFinite(flags) || startTicks === null) return false;
    if ((flags & PF_KTHREAD) !== 0) return false;
    return bootEpochMs + (startTicks / TICKS_PER_SECOND) * 1000 >= sinceEpochMs - STARTED_SINCE_SLACK_MS;
  };
}

/** Up to this many pids allocated since the leader are probed one by one instead of listing /proc. */
const PROBE_LIMIT = 64;

/** The pids allocated since the window opened, when there are at most PROBE_LIMIT of them and that is decidable. */
function pidRange(window: PidWindow | undefined): number[] | null {
  if (!window || !windowDecidable(window)) return null;
  const last = readInteger("/proc/sys/kernel/ns_last_pid");
  if (last === null || last < window.firstPid || last - window.firstPid >= PROBE_LIMIT) return null;
  return Array.from({ length: last - window.firstPid + 1 }, (_, i) => window.firstPid + i);
}

function windowDecidable(window: PidWindow): boolean {
  const max = readPidMax();
  return max !== null && Date.now() - window.spawnedAt < (max / MAX_FORKS_PER_SECOND) * 1000;
}

const TAG_ENTRY = Buffer.from(`${TAG_VARIABLE}=`, "latin1");

/** The environment block tagsIn read last, and what it found there. */
let lastBlock: Buffer | null = null;
let lastTags: string[] = [];

/**
 * The values of the block's tag entries (one, as a rule): whole entries only, at the start of the block or right after
 * a NUL, each up to the next NUL. Found once per block however many scans look at it: a pass that serves 64 takeovers
 * hands each process's block to 64 tag scans, and 64 searches of every block were most of such a pass's time.
 */
function tagsIn(environ: Buffer): string[] {
  if (environ === lastBlock) return lastTags;
  const tags: string[] = [];
  for (let at = environ.indexOf(TAG_ENTRY); at >= 0; at = environ.indexOf(TAG_ENTRY, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue;
    const start = at + TAG_ENTRY.length;
    const end = environ.indexOf(0, start);
    tags.push(environ.toString("latin1", start, end < 0 ? environ.length : end));
  }
  lastBlock = environ;
  lastTags = tags;
  return tags;
}

/**
 * Every process whose tag names one of `runtimeIds` (the part before the slash), found in one pass over /proc; null
 * where environments cannot be read. This reaches a job whose pid was never published (it was inside spawn) and a
 * runtime whose jobs are not known one by one (a crashed session's), at the cost of reading every process: a slice
 * per turn, in the pass the other scans of this turn share.
 */
export async function processesOfRuntimes(runtimeIds: readonly string[]): Promise<TaggedProcess[] | null> {
  if (!IS_LINUX) return null;
  return runtimeIds.length === 0 ? [] : scan(runtimesScan(runtimeIds));
}

/** The same, at once: for the exit handler (host/safety/exit-net.ts), which cannot wait. */
export function processesOfRuntimesNow(runtimeIds: readonly string[]): TaggedProcess[] | null {
  if (!IS_LINUX) return null;
  return runtimeIds.length === 0 ? [] : scanNow(runtimesScan(runtimeIds));
}

function runtimesScan(runtimeIds: readonly string[]): ProcScan<TaggedProcess[]> {
  const wanted = new Set(runtimeIds);
  const found: TaggedProcess[] = [];
  return {
    pids: null,
    visit(pid, reads) {
      if (pid === process.pid) return;
      const environ = reads.environ();
      if (environ === null) return;
      const tag = tagsIn(environ)[0];
      if (tag === undefined) return;
      const slash = tag.indexOf("/");
      if (slash > 0 && wanted.has(tag.slice(0, slash))) found.push({ pid, tag });
    },
    result: () => found.sort((a, b) => a.pid - b.pid),
  };
}

/** The kernel's last allocated pid (`ns_last_pid`), or null where it cannot be read. */
export function lastAllocatedPid(): number | null {
  return readInteger("/proc/sys/kernel/ns_last_pid");
}

/** The largest pid the kernel allocates, or null where it cannot be read. */
export function maxPid(): number | null {
  return readPidMax();
}

/**
 * Whether one process carries the tag: `tagged`, `other`, `empty` (no environment: in the middle of an exec, a kernel
 * thread, or one that cleared it) or null when it is gone or another user's.
 */
export function tagOf(pid: number, tag: string): "tagged" | "other" | "empty" | null {
  const environ = pidExists(pid) ? readEnviron(pid) : null;
  if (environ === null) return null;
  if (environ.length === 0) return "empty";
  return tagsIn(environ).includes(tag) ? "tagged" : "other";
}
