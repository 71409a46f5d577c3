/**
 * Starting and stopping a persisted job's keeper (spawner/keeper.pl), and the command of its follower
 * (spawner/follow.pl), which a job actor runs in place of the job's own command so that the runtime serves the job
 * like any other. Pi writes the job's entry in the registry (host/persist/registry.ts) first, then starts the keeper in
 * that folder; the keeper detaches itself and records its pids and, later, the job's end there itself.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { StopSignal } from "../../mailbox/control.ts";
import type { ResourceLimits } from "../../mailbox/spec.ts";
import { persistProgramUrl } from "../../shared/entry-url.ts";
import { stopGroup } from "../../shared/process-group.ts";
import { newEntryDir, persistTag, projectDir, removeEntry, writeEntry, PERSIST_VERSION, type PersistEntry, type StartRecord } from "./registry.ts";

const KEEPER = fileURLToPath(persistProgramUrl("keeper"));
const FOLLOWER = fileURLToPath(persistProgramUrl("follow"));

/** How long a follower outlives its job's lifetime: the keeper's stop at the deadline reaches it first. */
export const FOLLOWER_MARGIN_MS = 10_000;
/** How long the keeper may take to say that the job runs. */
const START_WAIT_MS = 10_000;
/** How often a stop looks whether the keeper has recorded the end. */
const STOP_POLL_MS = 50;

export interface KeptJob {
  dir: string;
  entry: PersistEntry;
}

export interface KeepRequest {
  /** Pi's working directory: the project the job is registered under. */
  project: string;
  cwd: string;
  cmd: string;
  shell: string;
  lifetimeMs: number;
  graceMs: number;
  onExit: "none" | "wake";
  limits?: ResourceLimits | null;
  /** The registry's root (tests); the user's, under the temp directory, otherwise. */
  root?: string;
  perl?: string;
}

/** The keeper's word once the job runs: its pid, the job's and when it started the job. */
const STARTED = /^started (\d+) (\d+) (\d+)\n?$/;

const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/** The follower's command line, run by /bin/sh: it follows the job's log from `offset` on. */
export function followerCommand(dir: string, offset: number, perl = "perl"): string {
  return `exec ${quote(perl)} ${quote(FOLLOWER)} ${quote(dir)} ${offset}`;
}

/** Starts the keeper and, once the job runs, records its entry; rejects with a reason a tool can show. */
export async function startKept(request: KeepRequest): Promise<KeptJob> {
  const { dir: folder, project } = projectDir(request.project, request.root);
  const dir = newEntryDir(folder);
  const record: StartRecord = {
    version: PERSIST_VERSION,
    uid: process.getuid?.() ?? -1,
    project,
    cmd: request.cmd,
    cwd: request.cwd,
    startedAtEpochMs: Date.now(),
    lifetimeMs: request.lifetimeMs,
    startedByPid: process.pid,
    onExit: request.onExit,
    limits: request.limits ?? null,
    tag: persistTag(dir),
  };
  // Written before the job starts: a Pi that dies right after the keeper has started leaves a job that can be adopted.
  writeEntry(dir, record);
  // The tag of this Pi's runtime stays with this Pi's jobs: the keeper gives the job its own.
  const { PI_JOBS_JOB: _tag, ...env } = process.env;
  const args = [KEEPER, dir, record.tag as string, String(request.lifetimeMs / 1000), String(request.graceMs / 1000), request.shell, request.cmd];
  let word: string;
  try {
    word = await launch(request.perl ?? "perl", args, request.cwd, env);
  } catch (error) {
    removeEntry(dir);
    throw error;
  }
  const [, keeperPid, pgid, spawnedAt] = STARTED.exec(word) as RegExpExecArray;
  return { dir, entry: { ...record, keeperPid: Number(keeperPid), pgid: Number(pgid), spawnedAtEpochMs: Number(spawnedAt) } };
}

/** Runs the keeper's launcher, which ends once the keeper said the job runs; resolves with that word. */
function launch(perl: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolveWord, reject) => {
    const child = spawn(perl, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), START_WAIT_MS);
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new Error(error.code === "ENOENT" ? `persist needs perl on the PATH (the keeper is a perl program)` : `the keeper did not start: ${error.message}`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0 && STARTED.test(out)) resolveWord(out);
      else reject(new Error(`the keeper did not start the job${err.trim() === "" ? "" : `: ${err.trim().split("\n")[0]}`}`));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Stops the job through its keeper: `signal` to its group, and SIGTERM to the keeper, which escalates to SIGKILL
 * after its grace and records the end. The group and what left it carrying the job's tag are stopped as an ordinary
 * job's are (shared/process-group.ts, stopGroup). Resolves true once the end is recorded, the keeper is gone and the
 * stop of the job's tree is confirmed, false if that did not happen within `confirmMs` or cannot be known (a tree
 * whose tags cannot be read, or an entry written before jobs were tagged whose tree is only its group: then the
 * group's stop is all that is confirmed).
 */
export async function stopKept(kept: KeptJob, signal: StopSignal, timing: { graceMs: number; confirmMs: number }): Promise<boolean> {
  const { keeperPid, pgid, tag, spawnedAtEpochMs } = kept.entry;
  for (const [target, sent] of [[-pgid, signal], [keeperPid, "SIGTERM"]] as const) {
    try {
      process.kill(target, sent);
    } catch {
      // Gone already: the end, if any, is on disk.
    }
  }
  const deadline = Date.now() + timing.confirmMs;
  const tree = stopGroup(pgid, {
    signal,
    graceMs: timing.graceMs,
    confirmMs: timing.confirmMs,
    ...(tag !== null ? { tag, spawnedAt: spawnedAtEpochMs } : {}),
  }).then(
    (cleanup) => cleanup.confirmed,
    () => false,
  );
  for (;;) {
    // The end is on disk, or the entry is gone already: its follower reported the end and released it.
    const ended = existsSync(join(kept.dir, "end")) || !existsSync(kept.dir);
    if (ended && !alive(keeperPid)) return await tree;
    if (Date.now() >= deadline) return false;
    await new Promise((wake) => setTimeout(wake, STOP_POLL_MS));
  }
}

/**
 * Once the job's end is recorded, or its keeper and its group are gone without one, and its follower has reported
 * it, nothing is left to adopt: the entry goes.
 */
export function releaseEnded(kept: KeptJob): void {
  const gone = existsSync(join(kept.dir, "end")) || (!alive(kept.entry.keeperPid) && !alive(-kept.entry.pgid));
  if (gone) removeEntry(kept.dir);
}
