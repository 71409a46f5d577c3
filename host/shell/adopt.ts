/**
 * Re-attaching persisted jobs at a fresh start of Pi (not after /reload or a session switch, which carry their jobs
 * themselves): the Pi takes the ownership of its working directory's persisted jobs (host/persist/owner-lock.ts) and
 * adopts every one recorded there, each as a session served by a follower that copies its log from the offset the
 * last follower reached. A job that ended while no Pi ran is reported once, as its follower ends at once with its
 * exit code and last lines, through the same result ledger as any job; its entry then goes. A Pi that does not own the
 * directory lists the owner's jobs and leaves them alone.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { JobHandle, JobRuntime } from "../runtime/api.ts";
import { takeOwnership } from "../persist/owner-lock.ts";
import { listEntries, projectDir, type RegistryEntry } from "../persist/registry.ts";
import { KILL_GRACE_MS, LOG_MAX_BYTES } from "./limits.ts";
import { followKept } from "./persisted-start.ts";
import type { ShellService } from "./service.ts";
import { createSession, logPathOf } from "./session.ts";
import { shellJobName } from "../delivery/results.ts";

/** How long list_sessions may wait for the adopted jobs' followers to run, and how often it looks. */
const FOLLOWERS_START_WAIT_MS = 5_000;
const FOLLOWERS_POLL_MS = 20;

/** Adopts what the directory's registry holds; the state's `adopted` settles once every job is adopted or listed. */
export function adoptPersisted(service: ShellService, runtime: JobRuntime, cwd: string, warn: (line: string) => void): void {
  let folder: { dir: string; project: string };
  try {
    folder = projectDir(cwd);
  } catch (error) {
    warn(`pi-jobs: persisted jobs are off in this directory: ${(error as Error).message}`);
    return;
  }
  const state = service.state.persisted;
  state.ownership = takeOwnership(folder.dir);
  state.adopted = adoptAll(service, runtime, folder, warn).catch((error: unknown) => warn(`pi-jobs: persisted jobs were not adopted: ${(error as Error).message}`));
}

async function adoptAll(service: ShellService, runtime: JobRuntime, folder: { dir: string; project: string }, warn: (line: string) => void): Promise<void> {
  const state = service.state.persisted;
  const ownership = await state.ownership;
  const entries = listEntries(folder.dir, folder.project, warn);
  if (!ownership.owned) {
    state.elsewhere = { ownerPid: ownership.ownerPid, jobs: entries };
    return;
  }
  const handles = entries.map((entry) => adoptOne(service, runtime, entry, warn)).filter((handle) => handle !== null);
  // Listed once their followers run, so that a job that runs is listed running, not starting; bounded.
  const until = performance.now() + FOLLOWERS_START_WAIT_MS;
  while (handles.some((handle) => handle.phase() === "starting") && performance.now() < until) await sleep(FOLLOWERS_POLL_MS);
}

/** Starts the job's follower and registers its session; null (and a warning) when it cannot be adopted. */
function adoptOne(service: ShellService, runtime: JobRuntime, recorded: RegistryEntry, warn: (line: string) => void): JobHandle | null {
  const { entry, dir } = recorded;
  const { registry, ledger } = service.state;
  const admission = registry.admit(logPathOf);
  if (!admission.ok) {
    warn(`pi-jobs: the persisted job ${dir} was not adopted: ${admission.error}`);
    return null;
  }
  for (const id of admission.evicted) ledger.forget(shellJobName(id));
  const kept = { dir, entry };
  // What the keeper still allows; the follower outlives it by its margin.
  const timeoutMs = Math.max(1, entry.startedAtEpochMs + entry.lifetimeMs - Date.now());
  const request = {
    cmd: entry.cmd,
    workdir: null,
    tty: false,
    yieldTimeMs: undefined,
    timeoutMs,
    onExit: entry.onExit,
    shell: null,
    ready: null,
    stallMs: null,
    onStall: "none" as const,
    // Its limits go on over its tree (its own tag); readiness was the starting call's wait, over with it.
    limits: entry.limits,
    persist: true,
    raw: false,
  };
  let handle;
  try {
    handle = followKept(runtime, kept, request, { killGraceMs: KILL_GRACE_MS, logMaxBytes: LOG_MAX_BYTES }, offsetOf(dir));
  } catch (error) {
    warn(`pi-jobs: the persisted job ${dir} was not adopted: ${(error as Error).message}`);
    return null;
  }
  service.register(
    createSession({
      id: handle.number,
      handle,
      cmd: entry.cmd,
      tty: false,
      cwd: entry.cwd,
      timeoutMs: entry.lifetimeMs,
      // Started before this Pi: its answers and its wake say it was started in an earlier session.
      piSession: -1,
      persisted: kept,
      adopted: true,
      startedEpochMs: entry.startedAtEpochMs,
      onExit: entry.onExit,
    }),
  );
  return handle;
}

/** How far the last follower copied the log: output printed after it (while no Pi ran, too) is read from there. */
function offsetOf(dir: string): number {
  try {
    const offset = Number(readFileSync(join(dir, "read"), "utf8").trim());
    return Number.isSafeInteger(offset) && offset >= 0 ? offset : 0;
  } catch {
    return 0;
  }
}
