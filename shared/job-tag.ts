/**
 * The job tag: every process a job starts carries `PI_JOBS_JOB=<runtime>/<job>` in its environment, and its
 * descendants inherit it. A descendant that leaves the job's process group (`setsid`, `setpgid`) is out of reach of
 * `kill(-pgid)`, but it still carries the tag, so on Linux `/proc/<pid>/environ` finds it.
 *
 * What still escapes: a process that clears or rewrites its environment before exec (`env -i`, a daemon that
 * re-executes itself with a fresh environment), and processes of another user. Elsewhere than Linux no
 * environment of another process can be read, and the scan says so (null) rather than "none".
 */
import { readdirSync, readFileSync } from "node:fs";
import { statFields, TICKS_PER_SECOND } from "./proc-stat.ts";

/** The variable that names a process's job. */
export const TAG_VARIABLE = "PI_JOBS_JOB";

const IS_LINUX = process.platform === "linux";

/** Where the scan may look: only pids allocated since the job's first process, when that is still decidable. */
export interface PidWindow {
  /** The job's first pid (the group leader): every tagged process was forked after it. */
  firstPid: number;
  /** Epoch milliseconds when that process was spawned. */
  spawnedAt: number;
}

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
  try {
    const value = Number.parseInt(readFileSync(path, "latin1"), 10);
    return Number.isSafeInteger(value) ? value : null;
  } catch {
    return null;
  }
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
 * null where environments cannot be read (not Linux, or no /proc).
 */
export function taggedProcesses(tag: string, window?: PidWindow): number[] | null {
  return scanTag(tag, window)?.tagged ?? null;
}

/** What one scan found. */
export interface TagScan {
  /** The processes that carry the tag. */
  tagged: number[];
  /**
   * Processes started since the job (given a window) whose environment reads empty: a process in the middle of an
   * exec shows none for a moment (the kernel fills in the new one last), so it may be the job's and must be looked
   * at again. A process that cleared its environment for good stays here; the caller decides how long to wait.
   */
  unsettled: number[];
}

/** taggedProcesses, and the processes that cannot be told yet (see TagScan); null where environments cannot be read. */
export function scanTag(tag: string, window?: PidWindow): TagScan | null {
  if (!IS_LINUX) return null;
  const range = pidRange(window);
  let candidates: number[];
  if (range && range.length <= PROBE_LIMIT) {
    // Few pids allocated since the leader: probing each costs less than listing /proc (a missing pid fails at once).
    candidates = range;
  } else {
    let entries: string[];
    try {
      entries = readdirSync("/proc");
    } catch {
      return null;
    }
    const inWindow = pidFilter(window);
    candidates = [];
    for (const entry of entries) {
      const first = entry.charCodeAt(0);
      if (first < 48 || first > 57) continue;
      const pid = Number(entry);
      if (inWindow(pid)) candidates.push(pid);
    }
  }
  const needle = Buffer.from(`${TAG_VARIABLE}=${tag}\0`, "latin1");
  const tagged: number[] = [];
  const unsettled: number[] = [];
  const startedSince = window ? startedSinceCheck(window.spawnedAt) : null;
  for (const pid of candidates) {
    if (pid === process.pid) continue;
    const environ = environOf(pid);
    if (environ === null) continue;
    if (carries(environ, needle)) tagged.push(pid);
    else if (environ.length === 0 && startedSince?.(pid)) unsettled.push(pid);
  }
  return { tagged: tagged.sort((a, b) => a - b), unsettled: unsettled.sort((a, b) => a - b) };
}

/** Kernel threads have no environment either; they are never a job's. */
const PF_KTHREAD = 0x00200000;
/** The boot time estimated from the uptime is off by far less than this; a process this much older still counts as new. */
const STARTED_SINCE_SLACK_MS = 1000;

/** Whether a pid is a live user process started since `sinceEpochMs` (less the slack); null when that cannot be read. */
function startedSinceCheck(sinceEpochMs: number): ((pid: number) => boolean) | null {
  let uptimeSeconds: number;
  try {
    uptimeSeconds = Number.parseFloat(readFileSync("/proc/uptime", "latin1"));
  } catch {
    return null;
  }
  if (!Number.isFinite(uptimeSeconds)) return null;
  const bootEpochMs = Date.now() - uptimeSeconds * 1000;
  return (pid) => {
    const fields = statFields(pid);
    if (fields === null) return false;
    // state (3), flags (9), starttime (22).
    const state = fields[0];
    const flags = Number(fields[6]);
    const startTicks = Number(fields[19]);
    if (state === undefined || state === "Z" || state === "X" || !Number.isFinite(flags) || !Number.isFinite(startTicks)) return false;
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

/** The needle must be a whole entry: at the start of the block or right after a NUL. */
function carries(environ: Buffer, needle: Buffer): boolean {
  for (let at = environ.indexOf(needle); at >= 0; at = environ.indexOf(needle, at + 1)) {
    if (at === 0 || environ[at - 1] === 0) return true;
  }
  return false;
}

/** Signals every tagged process; returns how many were signalled. */
export function signalTagged(pids: readonly number[], signal: NodeJS.Signals): number {
  let signalled = 0;
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
      signalled += 1;
    } catch {
      // ESRCH: it exited meanwhile. EPERM: it is no longer ours (its pid was reused by another user).
    }
  }
  return signalled;
}

/** A process carrying some job tag, and that tag. */
export interface TaggedProcess {
  pid: number;
  tag: string;
}

/**
 * Every process whose tag names one of `runtimeIds` (the part before the slash), found in one pass over /proc; null
 * where environments cannot be read. This reaches a job whose pid was never published (it was inside spawn) and a
 * runtime whose jobs are not known one by one (a crashed session's), at the cost of reading every process.
 */
export function processesOfRuntimes(runtimeIds: readonly string[]): TaggedProcess[] | null {
  if (!IS_LINUX) return null;
  if (runtimeIds.length === 0) return [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const wanted = new Set(runtimeIds);
  const needle = Buffer.from(`${TAG_VARIABLE}=`, "latin1");
  const found: TaggedProcess[] = [];
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const environ = environOf(pid);
    if (environ === null) continue;
    const tag = tagIn(environ, needle);
    if (tag === null) continue;
    const slash = tag.indexOf("/");
    if (slash > 0 && wanted.has(tag.slice(0, slash))) found.push({ pid, tag });
  }
  return found.sort((a, b) => a.pid - b.pid);
}

/** The value of the tag entry in an environment block, if it has one. */
function tagIn(environ: Buffer, needle: Buffer): string | null {
  for (let at = environ.indexOf(needle); at >= 0; at = environ.indexOf(needle, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue;
    const start = at + needle.length;
    const end = environ.indexOf(0, start);
    return environ.toString("latin1", start, end < 0 ? environ.length : end);
  }
  return null;
}

/** A process's environment block, or null when there is no such process (any more) or it is another user's. */
function environOf(pid: number): Buffer | null {
  try {
    return readFileSync(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
}
