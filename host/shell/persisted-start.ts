/**
 * The start of an exec_command's job, and what it does differently for a persisted job (persist: true): it starts the
 * job's keeper first (host/persist/keeper.ts), and the actor runs the job's follower instead of its command. The
 * keeper enforces the lifetime; the follower's outlives it by a margin, so that the follower reports how the job ended.
 */
import type { WatchdogSpec } from "../../mailbox/spec.ts";
import { FOLLOWER_MARGIN_MS, followerCommand, startKept, stopKept, type KeptJob } from "../persist/keeper.ts";
import type { JobHandle, JobRuntime } from "../runtime/api.ts";
import { defaultShell } from "../runtime/runtime.ts";
import { startRequestOf } from "./start-request.ts";
import { KILL_CONFIRM_SLACK_MS } from "./stop.ts";
import { ToolError } from "../tools/checked.ts";
import type { ExecRequest } from "./validate.ts";
import type { PersistState } from "./state.ts";

/**
 * Starts the keeper, registered under Pi's working directory (`project`); a failure is the tool's error. Only the Pi
 * that owns the directory's persisted jobs (host/persist/owner-lock.ts) starts one: another could never adopt it.
 */
export async function keepFor(request: ExecRequest, cwd: string, project: string, graceMs: number, persisted: PersistState): Promise<KeptJob> {
  const ownership = await persisted.ownership;
  if (!ownership.owned) {
    const owner = ownership.ownerPid === null ? "another Pi" : `another Pi (pid ${ownership.ownerPid})`;
    throw new ToolError(`exec_command: persist: ${owner} owns the persisted jobs of this directory; start it there, or without persist`);
  }
  try {
    const shell = request.shell ?? defaultShell();
    return await startKept({ project, cwd, cmd: request.cmd, shell, lifetimeMs: request.timeoutMs, graceMs, onExit: request.onExit, limits: request.limits });
  } catch (error) {
    throw new ToolError(`exec_command: persist: ${(error as Error).message}`);
  }
}

/**
 * Starts the job's actor on the command, or on a persisted job's follower; a keeper nobody would serve is stopped.
 * Synchronous, as the registry's admission before it is: calls in parallel must not all pass the admission first.
 */
export function startActor(
  runtime: JobRuntime,
  job: { request: ExecRequest; cwd: string; limits: { killGraceMs: number; logMaxBytes: number }; watchdog: WatchdogSpec | null; persisted: KeptJob | null },
): JobHandle {
  const { request, persisted, limits } = job;
  try {
    if (persisted === null) return runtime.start(startRequestOf(request, job.cwd, limits, job.watchdog));
    return followKept(runtime, persisted, request, limits, 0);
  } catch (error) {
    if (persisted !== null) void stopKept(persisted, "SIGTERM", { graceMs: limits.killGraceMs, confirmMs: limits.killGraceMs + KILL_CONFIRM_SLACK_MS });
    throw new ToolError(`exec_command refused: ${(error as Error).message}`);
  }
}

/**
 * Starts an actor on the kept job's follower, which copies its log from `offset` on; it runs in the entry's folder.
 * Its watches look at the job's tree by the job's own tag (ports, usage, limits), not at the follower's.
 */
export function followKept(runtime: JobRuntime, kept: KeptJob, request: ExecRequest, limits: { killGraceMs: number; logMaxBytes: number }, offset: number): JobHandle {
  const followed = { ...request, timeoutMs: request.timeoutMs + limits.killGraceMs + FOLLOWER_MARGIN_MS };
  const { tag, pgid, spawnedAtEpochMs } = kept.entry;
  const tree = tag === null ? null : { tag, pid: pgid, spawnedAtEpoch: spawnedAtEpochMs };
  return runtime.start(startRequestOf(followed, kept.dir, limits, null, { command: followerCommand(kept.dir, offset), shell: "/bin/sh", tree }));
}
