/**
 * The job tag: every process a job starts carries `PI_JOBS_JOB=<runtime>/<job>` in its environment, and its
 * descendants inherit it. A descendant that leaves the job's process group (`setsid`, `setpgid`) is out of reach of
 * `kill(-pgid)`, but it still carries the tag, so the process table (table.ts) finds it by its environment.
 *
 * A persisted job's processes carry a tag their keeper gives them, `p<hex>/<entry folder>` (host/persist/registry.ts):
 * its runtime part is never a Pi's (those are hex only), so the exit net and the crash cleanup of a Pi, which look for
 * their own runtime's tags, never take them for theirs, while the actor that follows the job watches them by it.
 *
 * What still escapes: a process that clears or rewrites its environment before exec (`env -i`, a daemon that
 * re-executes itself with a fresh environment), and processes of another user, whose environment no backend can read.
 */

/** The variable that names a process's job. */
export const TAG_VARIABLE = "PI_JOBS_JOB";

/** Where a scan may look: only pids allocated since the job's first process, when that is still decidable. */
export interface PidWindow {
  /** The job's first pid (the group leader): every tagged process was forked after it. */
  firstPid: number;
  /** Epoch milliseconds when that process was spawned. */
  spawnedAt: number;
}

/** What one scan for a tag found. */
export interface TagScan {
  /** The processes that carry the tag, sorted. */
  tagged: number[];
  /**
   * Processes started since the job (given a window) whose environment reads empty: a process in the middle of an
   * exec shows none for a moment (the kernel fills in the new one last), so it may be the job's and must be looked
   * at again. A process that cleared its environment for good stays here; the caller decides how long to wait.
   */
  unsettled: number[];
}

/** A process carrying some job tag, and that tag. */
export interface TaggedProcess {
  pid: number;
  tag: string;
}

/** The runtime part of a tag (before the slash); null for a malformed one. */
export function runtimeOfTag(tag: string): string | null {
  const slash = tag.indexOf("/");
  return slash > 0 ? tag.slice(0, slash) : null;
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
