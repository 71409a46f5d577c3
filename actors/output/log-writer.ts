/**
 * A job's log file, written under two quotas: the job's own `maxBytes` and a byte budget shared by every job of the
 * session. Job actors run on different worker threads, so the shared budget is one BigInt64 in a SharedArrayBuffer,
 * reserved with compare-and-swap: two writers can never both spend the same last bytes.
 *
 * Writes are synchronous (a log is written from the actor's own thread, in order, between two reads of the pipe)
 * and never throw: a full quota truncates the log, a storage failure stops it, and both are reported in `state()`.
 * Logs may hold secrets from the command's output, so the directory is 0700 and each file 0600, created exclusively.
 */
import { closeSync, constants, fchmodSync, openSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import type { LogState } from "../../mailbox/result.ts";

/** Takes up to `wanted` bytes from the shared budget and returns how many were granted. */
function reserve(budget: BigInt64Array, wanted: number): number {
  if (wanted <= 0) return 0;
  for (;;) {
    const left = Atomics.load(budget, 0);
    if (left <= 0n) return 0;
    const granted = left < BigInt(wanted) ? left : BigInt(wanted);
    if (Atomics.compareExchange(budget, 0, left, left - granted) === left) return Number(granted);
    // Another thread spent from the budget between the load and the swap: read it again.
  }
}

function giveBack(budget: BigInt64Array, bytes: number): void {
  if (bytes > 0) Atomics.add(budget, 0, BigInt(bytes));
}

export interface LogWriter {
  readonly path: string;
  /** Appends what the quotas allow; `hitQuota` is true on the one write that first found a quota full. */
  write(bytes: Uint8Array): { accepted: number; hitQuota: boolean };
  /** `path` is null if the file could not be created; `error` says why the log is incomplete, if it is. */
  state(): LogState;
  close(): void;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Creates `dir/name` (exclusively, mode 0600) and returns its writer. It does not throw: when the file cannot be
 * created, the writer reports the failure in `state().error` and accepts nothing.
 */
export function openLogWriter(options: {
  dir: string;
  name: string;
  maxBytes: number;
  budget: SharedArrayBuffer;
}): LogWriter {
  const { dir, name, maxBytes } = options;
  // These two are programming errors, not runtime conditions, so they do throw.
  if (name !== basename(name) || name === "." || name === "..") throw new RangeError(`not a file name: ${name}`);
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`maxBytes must be a byte count`);
  const budget = new BigInt64Array(options.budget);
  const path = join(dir, name);

  let fd: number | null = null;
  let created = false;
  let written = 0;
  let truncated = false;
  let error: string | null = null;
  /** No further bytes may go to the file: a quota is full, storage failed, or the writer was closed. */
  let stopped = false;

  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND, 0o600);
    created = true;
    // The mode given to open() is reduced by the umask; 0600 is what the file must be.
    fchmodSync(fd, 0o600);
  } catch (cause) {
    error = `cannot create log: ${messageOf(cause)}`;
    stopped = true;
    closeQuietly();
  }

  function closeQuietly(): void {
    if (fd === null) return;
    try {
      closeSync(fd);
    } catch {
      // Closing is best effort: the bytes already written are what they are.
    }
    fd = null;
  }

  return {
    path,

    write(bytes) {
      if (stopped || fd === null || bytes.length === 0) return { accepted: 0, hitQuota: false };
      const jobRoom = Math.min(bytes.length, maxBytes - written);
      const granted = reserve(budget, jobRoom);
      let accepted = 0;
      try {
        while (accepted < granted) accepted += writeSync(fd, bytes, accepted, granted - accepted);
      } catch (cause) {
        giveBack(budget, granted - accepted);
        written += accepted;
        error = `cannot write log: ${messageOf(cause)}`;
        stopped = true;
        closeQuietly();
        return { accepted, hitQuota: false };
      }
      written += accepted;
      if (accepted === bytes.length) return { accepted, hitQuota: false };
      truncated = true;
      stopped = true;
      // The job's own quota is named first when both are full: it is the one the user set for this job.
      error = jobRoom < bytes.length ? `job log quota of ${maxBytes} bytes reached` : "session log quota reached";
      return { accepted, hitQuota: true };
    },

    state() {
      return { path: created ? path : null, bytes: written, truncated, error };
    },

    close() {
      stopped = true;
      closeQuietly();
    },
  };
}
