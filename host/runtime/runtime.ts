/**
 * The job runtime: the supervisor of every job actor in this Pi process. It owns the warm pool, the session's log
 * directory and log budget, and the capacity bound; the tool layers (monitors, shell jobs) build on its API
 * (host/runtime/api.ts) and never see a worker or a port.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { appendFileSync, rmdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createLogBudget, createSessionLogDir } from "../../shared/log-budget.ts";
import { protocolCheckers } from "../../mailbox/check.ts";
import { capacityReached, invalidJobSpec, runtimeShutDown } from "../../mailbox/errors.ts";
import type { JobSpec } from "../../mailbox/spec.ts";
import { checkMessagesForced, crashCleanupEnabled, redactionEnabled, spawnerEnabled } from "../config.ts";
import { createRegistryRecorder, type RegistryRecorder } from "../safety/crash-cleanup.ts";
import { installExitNet } from "../safety/exit-net.ts";
import { Job } from "./job.ts";
import { createActorPool, type ActorPool } from "./pool.ts";
import { createSpawner, type Spawner, type SpawnerProgram } from "./spawner.ts";
import type { JobHandle, JobRuntime, StartRequest } from "./api.ts";

export interface RuntimeOptions {
  /** Jobs that may be alive at once. */
  capacity?: number;
  /** Idle worker threads kept ready. */
  warm?: number;
  /** Bytes of logs all jobs of this runtime may write together. */
  logBudgetBytes?: number;
  /** Output each actor retains for the console and `/jobs`. */
  retain?: { maxBytes: number; maxLines: number };
  /** Check every mailbox message against its schema (development and tests). */
  checkMessages?: boolean;
  /** The actor threads' entry module; tests wrap the real one (actors/thread/actor-thread.ts) to inject faults. */
  actorEntry?: URL;
  /** Where a compiled copy's actor threads share V8's code for their entry (mailbox/code-cache.ts); a new one if unset. */
  codeCache?: SharedArrayBuffer;
  /**
   * Start pipe jobs' processes from the session's small spawner process (host/runtime/spawner.ts) rather than from the actor
   * threads inside Pi. Default: on, unless PI_JOBS_SPAWNER=0.
   */
  spawner?: boolean;
  /** Which spawner program to try first (host/runtime/spawner.ts); default perl, with Node where perl cannot serve. */
  spawnerProgram?: SpawnerProgram;
}

export const DEFAULT_CAPACITY = 64;
/** Shutdown returns within the jobs' kill grace and this; what is not done by then finishes in the background. */
const SHUTDOWN_SLACK_MS = 1000;
export const DEFAULT_LOG_BUDGET = 256 * 1024 * 1024;

export class CapacityError extends Error {
  constructor(capacity: number) {
    super(capacityReached(capacity));
    this.name = "CapacityError";
  }
}

export interface SupervisedRuntime extends JobRuntime {
  /** Worker threads alive now (for tests and the console). */
  threads(): number;
  /** Threads that compiled the actor's entry from the shared code cache (host/runtime/pool.ts); 0 before the first job. */
  codeCacheUses(): number;
  /** Output of every job of this runtime so far (for rates). */
  totals(): { bytes: number; lines: number };
  /** Starts the warm threads and the spawner now (session_start), so the first job pays for neither. */
  warmUp(): void;
  /** Resolves true once the spawner listens (false: none runs, and actors spawn their processes themselves). */
  spawnerReady(): Promise<boolean>;
  readonly logDir: string;
}

export function createJobRuntime(options: RuntimeOptions = {}): SupervisedRuntime {
  const capacity = options.capacity ?? DEFAULT_CAPACITY;
  const checkMessages = options.checkMessages ?? defaultCheckMessages();
  const retain = options.retain ?? { maxBytes: 256 * 1024, maxLines: 2000 };
  const logBudget = createLogBudget(options.logBudgetBytes ?? DEFAULT_LOG_BUDGET);
  let logDir: string | null = null;
  let pool: ActorPool | null = null;
  const live = new Map<string, Job>();
  /** Pool tasks not settled yet, of live and ended jobs alike. */
  const tasks = new Set<Promise<void>>();
  /** Jobs started so far, per kind: a job's number within its kind is its id's number. */
  const started: Record<StartRequest["kind"], number> = { monitor: 0, shell: 0 };
  /** Output of the jobs that have ended; a live job's own figures are read from its cell. */
  const endedTotals = { bytes: 0, lines: 0 };
  /** Names this runtime in every job's tag (shared/process-table/tags.ts), so two Pi sessions never claim each other's processes. */
  const runtimeId = randomBytes(6).toString("hex");
  let closed = false;
  /**
   * Threads the supervisor could not end: a hung one that owns a terminal (docs/decisions/never-terminate.md) or one
   * still inside spawn.
   * The pool must not be destroyed under them.
   */
  let strandedThreads = 0;

  // Registered before the pool exists, and ahead of every other exit listener: the jobs die before the process waits
  // for loading threads (host/runtime/pool.ts).
  const removeExitNet = installExitNet({
    runtimeId,
    startedAny: () => started.monitor + started.shell > 0,
    liveGroups: () => [...live.values()].map((job) => job.pgid()),
  });
  /** What a later session needs if this Pi dies without a shutdown (host/safety/crash-cleanup.ts); made with the log dir. */
  let registry: RegistryRecorder | null = null;

  const ensurePool = (): ActorPool => (pool ??= createActorPool({ capacity, warm: options.warm ?? 2, entry: options.actorEntry, codeCache: options.codeCache }));
  const ensureLogDir = (): string => {
    if (logDir === null) {
      logDir = createSessionLogDir();
      if (crashCleanupEnabled(process.env)) registry = createRegistryRecorder(logDir, runtimeId);
    }
    return logDir;
  };
  const useSpawner = options.spawner ?? spawnerEnabled(process.env);
  /** The spawner listens in the session's log directory, which is private to this user. */
  let spawner: Spawner | null = null;
  const ensureSpawner = (): Spawner | null => (useSpawner && !closed ? (spawner ??= createSpawner(ensureLogDir(), { program: options.spawnerProgram })) : spawner);

  /**
   * Jobs whose process does not exist yet. While there are any, the jobs' session yields to Pi's process, which is
   * busy booting their threads (host/runtime/spawner.ts, setStarting).
   */
  const starting = new Set<string>();
  const startOver = (id: string) => {
    if (starting.delete(id) && starting.size === 0) spawner?.setStarting(false);
  };

  function start(request: StartRequest): JobHandle {
    if (closed) throw new Error(runtimeShutDown());
    if (live.size >= capacity) throw new CapacityError(capacity);
    const dir = ensureLogDir();
    const spawnerPath = request.io.kind === "pipes" ? ensureSpawner()?.socketPath() : null;
    // One id per job wherever a user sees it: the tools' `monitor_N` and shell session N (`job_N`), the log file and
    // the console all name the job by its number within its kind.
    const number = started[request.kind] + 1;
    const id = `${request.kind === "monitor" ? "monitor" : "job"}_${number}`;
    const spec: JobSpec = {
      id,
      tag: `${runtimeId}/${id}`,
      command: request.command,
      shell: request.shell ?? defaultShell(),
      cwd: request.cwd,
      env: request.env ?? null,
      io: request.io,
      timeoutMs: request.timeoutMs,
      killGraceMs: request.killGraceMs,
      log: { dir, maxBytes: request.log.maxBytes, onQuota: request.log.onQuota },
      retain,
      unread: request.unread ?? null,
      contract: request.contract ?? null,
      // Read per job, so a test (or a future toggle) that changes the variable applies to the next job.
      redact: redactionEnabled(process.env),
      ...(request.watch ? { watch: request.watch } : {}),
      ...(spawnerPath ? { spawner: spawnerPath } : {}),
    };
    // The actor threads do not check messages (actors/job/actor.ts): the spec is checked here, where a bad one is refused.
    const invalid = checkMessages ? protocolCheckers().jobSpec(spec) : null;
    if (invalid) throw new Error(invalidJobSpec(invalid));
    started[request.kind] = number;
    const job = new Job({
      spec,
      number,
      kind: request.kind,
      label: request.label,
      pool: ensurePool(),
      logBudget,
      checkMessages,
      onSpawned: (spawned, { pid, pgid, startedAt }) => {
        startOver(spawned.id);
        registry?.add({ tag: spawned.spec.tag, pid, pgid, startedAt, label: spawned.label });
      },
      onEnded: (ended) => {
        startOver(ended.id);
        live.delete(ended.id);
        registry?.remove(ended.spec.tag);
        const figures = ended.figures();
        endedTotals.bytes += figures.bytes;
        endedTotals.lines += figures.lines;
        if (ended.threadLeftAlone) strandedThreads += 1;
      },
    });
    live.set(job.id, job);
    if (starting.size === 0) ensureSpawner()?.setStarting(true);
    starting.add(job.id);
    tasks.add(job.taskSettled);
    void job.taskSettled.then(() => tasks.delete(job.taskSettled));
    return job;
  }

  /**
   * Stops every job at once. Bounded: each settles within its grace plus a second even if its actor is slow or still
   * starting (the supervisor then kills the published group itself); a job cancelled before it spawned ends at once.
   */
  async function stopAll(): Promise<void> {
    const jobs = [...live.values()];
    const results = await Promise.all(jobs.map((job) => job.stop("SIGTERM", { bounded: true, by: "session_shutdown" })));
    const unconfirmed = jobs.filter((_, index) => results[index]!.cleanup !== "confirmed");
    if (unconfirmed.length > 0 && logDir !== null) {
      // Nobody may be left to tell at shutdown; the session's log directory keeps the record.
      const lines = unconfirmed.map((job) => `${new Date().toISOString()} ${job.id} (pgid ${job.pgid() ?? "never published"}): stop not confirmed\n`);
      try {
        appendFileSync(join(logDir, "stop-unconfirmed.log"), lines.join(""), { mode: 0o600 });
      } catch {
        // Best effort: the jobs' results say "unconfirmed" either way.
      }
    }
  }

  function removeLogDirIfEmpty(): void {
    if (logDir === null) return;
    try {
      rmdirSync(logDir);
    } catch {
      // Not empty (a log, an unconfirmed stop's record, a spawner's socket left by a kill): it stays.
    }
  }

  return {
    start,
    get: (id) => live.get(id),
    list: () => [...live.values()],
    stopAll,
    async shutdown() {
      closed = true;
      // Bounded: the jobs' grace and a second. Every job is stopped at once; past its grace the supervisor kills what
      // the actor has not (host/runtime/supervisor.ts), so each has settled by then, its group gone or recorded as unconfirmed.
      const deadline = performance.now() + [...live.values()].reduce((grace, job) => Math.max(grace, job.spec.killGraceMs), 0) + SHUTDOWN_SLACK_MS;
      const remaining = () => Math.max(0, deadline - performance.now());
      await stopAll();
      // Every job is gone (or recorded as unconfirmed): the exit net has nothing left to do for this runtime, and no
      // job will be spawned again.
      removeExitNet();
      await Promise.all([spawner?.stop(remaining()), registry?.flushed()]);
      const current = pool;
      pool = null;
      // A session that kept no log (no job ran, only the spawner's socket lived there) leaves no directory behind;
      // one with logs keeps them for the user, as temporary files. Only once no actor can still open a file there.
      const idle = Promise.all([...tasks]).then(removeLogDirIfEmpty);
      // Every process is gone by now. The threads are ended only once each has finished its task: a job cancelled
      // while its thread was still booting ends at once, and terminating a thread in the middle of loading its
      // modules can abort the whole process (an assertion in Node's module loader, seen under a burst-then-quit).
      // Threads the supervisor had to leave alone are never terminated, so the pool is not destroyed under them.
      // Threads that need longer than the bound are ended in the background as soon as they can be.
      if (current === null || strandedThreads > 0) return;
      const settled = await Promise.race([
        idle.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), remaining()).unref()),
      ]);
      if (settled) await current.destroy(remaining());
      else void idle.then(() => current.destroy());
    },
    threads: () => pool?.threads() ?? 0,
    codeCacheUses: () => pool?.codeCacheUses() ?? 0,
    totals: () => {
      const totals = { ...endedTotals };
      for (const job of live.values()) {
        const figures = job.figures();
        totals.bytes += figures.bytes;
        totals.lines += figures.lines;
      }
      return totals;
    },
    warmUp() {
      if (closed) return;
      ensurePool();
      ensureSpawner();
    },
    spawnerReady: () => ensureSpawner()?.ready() ?? Promise.resolve(false),
    /** Created with the first job; empty until then. */
    get logDir() {
      return logDir ?? "";
    },
  };
}

export function defaultShell(): string {
  return process.env.SHELL && process.env.SHELL.length > 0 ? process.env.SHELL : "/bin/sh";
}

/**
 * On in a development checkout only: not under node_modules, and TypeBox resolvable from here with Node's own
 * resolver. The checks run in the workers, which see no module aliasing of Pi's; a git install is not under
 * node_modules either, but has no devDependencies, so TypeBox (a peer Pi keeps to its own thread) is absent there.
 */
function defaultCheckMessages(): boolean {
  const forced = checkMessagesForced(process.env);
  if (forced !== null) return forced;
  if (new URL(import.meta.url).pathname.split("/").includes("node_modules")) return false;
  try {
    createRequire(import.meta.url).resolve("typebox");
    return true;
  } catch {
    return false;
  }
}
