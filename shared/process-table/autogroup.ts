/**
 * The kernel's scheduling group of a session (Linux "autogroup"). Where it is on
 * (`/proc/sys/kernel/sched_autogroup_enabled`), the CPU is shared between sessions first and between the threads of a
 * session second: a session's threads together weigh what one nice-0 thread does, whatever their own nice values.
 * Pi's whole process — its thread and every actor thread — is one session; each job that starts a session of its own
 * is one more. With N busy job sessions Pi's process gets about 1/(N+1) of the CPU, and starting the next job (a
 * thread boot, ~120 ms of CPU) took seconds (docs/decisions/scheduling-group.md).
 *
 * A session's nice value is written to `/proc/<pid>/autogroup` by the process's owner; values 0…19 need no privilege,
 * in either direction. Without CAP_SYS_ADMIN the kernel takes at most one such write every 100 ms, machine-wide, and
 * answers EAGAIN to the rest: a write is retried, a few times, never awaited by a start.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { processTableForced } from "../config.ts";
import { statFields, statNumber } from "./proc-stat.ts";

/**
 * The nice value of the jobs' session (the spawner's, which every pipe job it starts shares) while Pi's process is
 * starting jobs: the jobs together then yield to it, and it boots threads as fast as on an idle machine. Otherwise the
 * session runs at nice 0 and weighs what any other session does (docs/decisions/scheduling-group.md).
 */
export const STARTING_SESSION_NICE = 10;

/**
 * Whether the running kernel shares the CPU by session, and the /proc backend is in use: with the portable process
 * table forced (`PI_JOBS_PROCESS_TABLE=ps`), Linux runs the way macOS does, every job a session of its own.
 */
export function autogroupEnabled(): boolean {
  if (process.platform !== "linux" || processTableForced(process.env)) return false;
  try {
    return readFileSync("/proc/sys/kernel/sched_autogroup_enabled", "latin1").trim() === "1";
  } catch {
    return false;
  }
}

/** The kernel's rate limit for unprivileged writers is one write per 100 ms; a few tries cover a burst of writers. */
const RETRIES = 10;
const RETRY_MS = 120;

/**
 * Sets the nice value of the session that `pid` belongs to (`self`: this process's). True once the kernel took it; false when
 * it cannot be set here (no autogroup, the process is gone, not ours, or the kernel kept refusing).
 */
export async function setSessionNice(nice: number, pid: number | "self" = "self"): Promise<boolean> {
  // Only a session leader's: a child that has not left its parent's session yet would carry the write to Pi's own.
  if (pid !== "self") {
    const fields = statFields(pid);
    if (fields === null || statNumber(fields, "session") !== pid) return false;
  }
  for (let attempt = 0; attempt <= RETRIES; attempt += 1) {
    try {
      await writeFile(`/proc/${pid}/autogroup`, String(nice));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return false;
      await sleep(RETRY_MS);
    }
  }
  return false;
}
