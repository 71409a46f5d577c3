/**
 * Shared bits of the runtime's integration tests: a runtime per test that is always shut down, polling waits with
 * deadlines (never fixed sleeps alone), and the cleanup of what a test left running.
 */
import { readFileSync } from "node:fs";
import { afterEach } from "vitest";
import { groupMembers } from "../../shared/process-group.ts";
import { createJobRuntime, type RuntimeOptions, type SupervisedRuntime } from "../../host/runtime/runtime.ts";
import type { StartRequest } from "../../host/runtime/api.ts";
import { jobRequest, MONITOR_LOG_BYTES } from "../fixtures/jobs.ts";

export function runtimeFor(options: RuntimeOptions = {}): SupervisedRuntime {
  return createJobRuntime({ warm: 1, checkMessages: true, ...options });
}

/** The plain shell job of the fixtures, with a shorter deadline and a log quota that stops the job rather than truncating. */
export function shellJob(command: string, overrides: Partial<StartRequest> = {}): StartRequest {
  return jobRequest(command, { timeoutMs: 60_000, log: { maxBytes: MONITOR_LOG_BYTES, onQuota: "stop" }, ...overrides });
}

export async function waitFor<T>(probe: () => T | Promise<T>, timeoutMs = 30_000, what = "condition"): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** True when no live (non-zombie) process of the group remains, as the product's own scan reads the group. */
export async function groupGone(pgid: number): Promise<boolean> {
  return (await groupMembers(pgid)).length === 0;
}

/** Whether the pid names a process at all, a zombie included: false once its parent has reaped it. */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie is dead for our purposes.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * A list for the pids a test file starts itself: each is killed, with its process group, after every test, whether it
 * passed or not.
 */
export function killedAfterEach(): number[] {
  const leftovers: number[] = [];
  afterEach(() => killLeftovers(leftovers, { groups: true }));
  return leftovers;
}

/** Kills what a test left behind, each pid (and, with `groups`, its process group too); one already gone is fine. */
export function killLeftovers(pids: number[], options: { groups?: boolean } = {}): void {
  for (const pid of pids.splice(0)) {
    for (const target of options.groups ? [-pid, pid] : [pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // Already gone: the test did its job.
      }
    }
  }
}
