/**
 * Reading `/proc` (Linux): one small file at a time, into buffers this thread reuses, and the one parser of a stat
 * line (`/proc/<pid>/stat`, or a thread's): split into fields, each read by its name (`statField`, `statNumber`).
 * The command name (field 2) may hold spaces and parentheses, so the fields are counted after its last ')'.
 *
 * Why not readFileSync: a `/proc` file reports size 0, so Node reads it through a fresh 64 KiB buffer each time; a stop
 * that scanned every process per check made Pi's thread spend more time collecting those buffers than reading
 * (docs/decisions/proc-scans.md). A reused buffer costs a third of the CPU per read.
 */
import { closeSync, existsSync, openSync, readSync } from "node:fs";

/** Clock ticks per second of `/proc` times: USER_HZ, 100 on every Linux architecture Node runs on. */
export const TICKS_PER_SECOND = 100;

/** Large enough for any stat line and the small files (`uptime`, `pid_max`); environments grow their own buffer. */
let small = Buffer.allocUnsafe(4096);
let large = Buffer.allocUnsafe(64 * 1024);

/**
 * Reads the whole file into `buffer`, growing it when full; the bytes read, or null when the file cannot be opened or
 * read (the process is gone, or is another user's).
 */
function readInto(path: string, buffer: () => Buffer, grow: () => void): number | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === buffer().length) grow();
      const read = readSync(fd, buffer(), length, buffer().length - length, null);
      if (read === 0) return length;
      length += read;
    }
  } catch {
    // ESRCH and the like: the process exited between the open and the read.
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A small `/proc` file as text (latin1), or null when it cannot be read. */
export function readProcText(path: string): string | null {
  const length = readInto(
    path,
    () => small,
    () => {
      small = Buffer.concat([small, Buffer.allocUnsafe(small.length)]);
    },
  );
  return length === null ? null : small.toString("latin1", 0, length);
}

/**
 * A process's environment block, or null when there is no such process (any more) or it is another user's. The
 * bytes are a view of this thread's reused buffer: valid until the next call, so a caller uses them at once.
 */
export function readEnviron(pid: number): Buffer | null {
  const length = readInto(
    `/proc/${pid}/environ`,
    () => large,
    () => {
      large = Buffer.concat([large, Buffer.allocUnsafe(large.length)]);
    },
  );
  return length === null ? null : large.subarray(0, length);
}

/**
 * Whether a process (or thread) with this id is there now. For pids probed rather than listed (those allocated since a
 * job's spawn, most of them other jobs' and gone): a failed `open` throws, and the error costs four times this check.
 */
export function pidExists(pid: number): boolean {
  return existsSync(`/proc/${pid}`);
}

/** The fields after the command name of a stat line, or null when the text has none. */
export function fieldsOfStat(stat: string): string[] | null {
  const close = stat.lastIndexOf(")");
  return close < 0 ? null : stat.slice(close + 2).split(" ");
}

/** The fields after the command name, or null when the process is gone or unreadable. */
export function statFields(pid: number | string): string[] | null {
  const stat = readProcText(`/proc/${pid}/stat`);
  return stat === null ? null : fieldsOfStat(stat);
}

/**
 * The children of a process's main thread (`/proc/<pid>/task/<pid>/children`), or null where the kernel does not list
 * them (built without it) or the process is gone. Children forked by its other threads are not in it.
 */
export function childPids(pid: number): number[] | null {
  const text = readProcText(`/proc/${pid}/task/${pid}/children`);
  if (text === null) return null;
  const pids: number[] = [];
  for (const word of text.split(" ")) if (word !== "") pids.push(Number(word));
  return pids;
}

/**
 * The stat fields this project reads, by their number in proc(5), so that no caller counts indexes: a field's index in
 * what `fieldsOfStat` returns is its number less 3.
 */
const FIELD_NUMBER = {
  state: 3,
  ppid: 4,
  pgrp: 5,
  session: 6,
  flags: 9,
  /** CPU time in clock ticks: user and system, then the same of the children the process has reaped. */
  utime: 14,
  stime: 15,
  cutime: 16,
  cstime: 17,
  /** Start time in clock ticks since boot. */
  starttime: 22,
  /** Resident set size in pages (`pageBytes()` each). */
  rss: 24,
} as const;

export type StatField = keyof typeof FIELD_NUMBER;

/** One field as text; undefined when the line is too short to have it. */
export function statField(fields: readonly string[], field: StatField): string | undefined {
  return fields[FIELD_NUMBER[field] - 3];
}

/** One field as a number; NaN when it is missing or not a number. */
export function statNumber(fields: readonly string[], field: StatField): number {
  return Number(statField(fields, field));
}

/** Field 22, the process's start time in clock ticks since boot; null when the fields have none. */
export function startTicksOf(fields: readonly string[]): number | null {
  const value = statNumber(fields, "starttime");
  return Number.isSafeInteger(value) && value >= 0 ? value : null;
}

let pageSize: number | undefined;

/**
 * Bytes per page of the `rss` field: 4 KiB on x86-64, but arm64 kernels may use 16 or 64 KiB pages. Node does not
 * say, so it is read once from this process's own figures: VmRSS (kB, from `status`) over the resident pages of
 * `statm`, rounded to a power of two (the two reads are a moment apart, never a factor of two).
 */
export function pageBytes(): number {
  if (pageSize !== undefined) return pageSize;
  const pages = Number((readProcText("/proc/self/statm") ?? "").split(" ")[1]);
  const kib = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(readProcText("/proc/self/status") ?? "")?.[1]);
  const ratio = (kib * 1024) / pages;
  pageSize = Number.isFinite(ratio) && ratio > 0 ? 2 ** Math.round(Math.log2(ratio)) : 4096;
  return pageSize;
}
