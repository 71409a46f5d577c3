/**
 * This process's own threads in `/proc` (Linux): the id of the calling thread, and a thread's CPU and run-queue times,
 * which tell the supervisor a starved actor from a hung one (host/runtime/heartbeat.ts).
 */
import { readlinkSync } from "node:fs";
import { fieldsOfStat, readProcText, statField } from "./proc-stat.ts";
import type { ThreadReading } from "./table.ts";

/** This thread's id, read once: a module is loaded once per thread. */
let ownId: number | null | undefined;

/** The calling thread's Linux thread id (`/proc/thread-self` links to `<pid>/task/<tid>`); null where it cannot be read. */
export function procThreadId(): number | null {
  if (ownId !== undefined) return ownId;
  ownId = null;
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    if (Number.isInteger(tid) && tid > 0) ownId = tid;
  } catch {
    // No /proc here after all: the host judges the actor without the thread's figures.
  }
  return ownId;
}

/**
 * Reads one of this process's threads: its CPU and run-queue times (`schedstat`: ns on a CPU, ns waiting on a run
 * queue, timeslices) and its state (`stat`). Null when the thread is gone. Two small files of a thread of this very
 * process, read into proc-stat.ts's reused buffer: tens of microseconds, and nothing to wait for (no other process's
 * memory is read). Through fs.promises' readFile each cost several trips through libuv's thread pool and a fresh 64 KiB
 * buffer: about a millisecond of Pi's thread per job in a burst of starts, where every spawn dates its heartbeat with a
 * reading.
 */
export function readProcThread(tid: number): ThreadReading | null {
  const schedstat = readProcText(`/proc/self/task/${tid}/schedstat`);
  const stat = readProcText(`/proc/self/task/${tid}/stat`);
  if (schedstat === null || stat === null) return null;
  const [cpuNs, queuedNs] = schedstat.trim().split(" ").map(Number);
  const fields = fieldsOfStat(stat);
  const state = fields === null ? undefined : statField(fields, "state");
  if (!Number.isFinite(cpuNs) || !Number.isFinite(queuedNs) || state === undefined || !/^[RSDItTPW]$/.test(state)) return null;
  return { cpuMs: cpuNs! / 1e6, queuedMs: queuedNs! / 1e6, runnable: state === "R" };
}
