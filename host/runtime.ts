/**
 * The job runtime: the supervisor of every job actor in this Pi process. It owns the warm pool, the session's log
 * directory and log budget, and the capacity bound; the tool layers (monitors, shell jobs) build on its API
 * (host/runtime-api.ts) and never see a worker or a port.
 */
import { randomBytes } from "node:crypto";
import { createLogBudget, createSessionLogDir } from "../actors/log-writer.ts";
import { protocolCheckers } from "../mailbox/check.ts";
import type { JobSpec } from "../mailbox/protocol.ts";
import { Job } from "./job.ts";
import { createActorPool, type ActorPool } from "./pool.ts";
import type { JobHandle, JobRuntime, StartRequest } from "./runtime-api.ts";

export interface RuntimeOptions {
  /** Jobs that may be alive at once. */
  capacity?: number;
  /** Idle worker threads kept ready. */
  warm?: number;
  /** Bytes of logs all jobs of this runtime may write together. */
  logBudgetBytes?: number;
  /** Output the host keeps per job for the console and reports. */
  retain?: { maxBytes: number; maxLines: number };
  /** Check every mailbox message against its schema (development and tests). */
  checkMessages?: boolean;
}

export const DEFAULT_CAPACITY = 64;
export const DEFAULT_LOG_BUDGET = 256 * 1024 * 1024;

export class CapacityError extends Error {
  constructor(capacity: number) {
    super(`job capacity reached: ${capacity} jobs are already running; stop or collect one before starting another`);
    this.name = "CapacityError";
  }
}

export interface SupervisedRuntime extends JobRuntime {
  /** Worker threads alive now (for tests and the console). */
  threads(): number;
  /** Output of every job of this runtime so far (for rates). */
  totals(): { bytes: number; lines: number };
  /** Starts the warm threads now (session_start), so the first job does not pay for a thread start. */
  warmUp(): void;
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
  let counter = 0;
  /** Names this runtime in every job's tag (actors/job-tag.ts), so two Pi sessions never claim each other's processes. */
  const runtimeId = randomBytes(6).toString("hex");
  const counters = { bytes: 0, lines: 0 };
  let closed = false;
  /** Hung threads that own a terminal: never terminated (platform.md), so the pool must not be destroyed under them. */
  let strandedPtyThreads = 0;

  const ensurePool = (): ActorPool => (pool ??= createActorPool({ capacity, warm: options.warm ?? 2 }));

  function start(request: StartRequest): JobHandle {
    if (closed) throw new Error("the job runtime has shut down");
    if (live.size >= capacity) throw new CapacityError(capacity);
    const dir = (logDir ??= createSessionLogDir());
    counter += 1;
    const id = `${request.kind === "monitor" ? "monitor" : "job"}_${counter}`;
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
      contract: request.contract ?? null,
      fault: request.fault ?? null,
    };
    // The actor threads do not check messages (host/pool.ts): the spec is checked here, where a bad one is refused.
    const invalid = checkMessages ? protocolCheckers().jobSpec(spec) : null;
    if (invalid) throw new Error(`pi-jobs: invalid job spec: ${invalid}`);
    const job = new Job({
      spec,
      kind: request.kind,
      label: request.label,
      pool: ensurePool(),
      logBudget,
      checkMessages,
      retain,
      counters,
      onEnded: (ended) => {
        live.delete(ended.id);
        const result = ended.result();
        if (result?.cause === "actor_unresponsive" && ended.spec.io.kind === "pty") strandedPtyThreads += 1;
      },
    });
    live.set(job.id, job);
    return job;
  }

  async function stopAll(): Promise<void> {
    await Promise.all([...live.values()].map((job) => job.stop()));
  }

  return {
    start,
    get: (id) => live.get(id),
    list: () => [...live.values()],
    stopAll,
    async shutdown() {
      closed = true;
      await stopAll();
      const current = pool;
      pool = null;
      if (strandedPtyThreads === 0) await current?.destroy();
    },
    threads: () => pool?.threads() ?? 0,
    totals: () => ({ ...counters }),
    warmUp() {
      if (!closed) ensurePool();
    },
    /** Created with the first job; empty until then. */
    get logDir() {
      return logDir ?? "";
    },
  };
}

export function defaultShell(): string {
  return process.env.SHELL && process.env.SHELL.length > 0 ? process.env.SHELL : "/bin/sh";
}

function defaultCheckMessages(): boolean {
  if (process.env.PI_JOBS_CHECK_MESSAGES === "1") return true;
  if (process.env.PI_JOBS_CHECK_MESSAGES === "0") return false;
  return !new URL(import.meta.url).pathname.split("/").includes("node_modules");
}
