/**
 * The warm pool job actors run in. A job is one long piscina task that holds its mailbox ports, so a new job
 * starts on a thread that is already running instead of paying a worker start (docs/decisions/warm-pool.md).
 *
 * Threads are made ahead of demand: whenever a job takes a thread, the pool starts enough new ones that `warm`
 * threads stay idle, each loaded with the actor's whole module graph (actors/thread/actor-thread.ts) before a job is
 * given to it. After a burst the threads it needed stay for `idleTimeout`, so the next burst of the
 * same size starts on loaded threads too; an idle pool shrinks back to `warm`.
 *
 * Starts that would boot a thread wait here while as many threads as there are cores are booting (host/runtime/thread-boots.ts),
 * so a burst never boots all its threads at once at Pi's priority. A job stopped while it waits is dropped within
 * ADMIT_POLL_MS, without a thread.
 */
import { availableParallelism } from "node:os";
import type { MessagePort, Worker } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { Piscina } from "piscina";
import { workerUrl } from "../../shared/entry-url.ts";
import { JobCellReader } from "../../mailbox/cell.ts";
import { codeCacheUses, createCodeCache } from "../../mailbox/code-cache.ts";
import { poolClosedBeforeThread } from "../../mailbox/errors.ts";
import type { ActorTask, ActorTaskResult } from "../../mailbox/task.ts";
import { startsToAdmit } from "./thread-boots.ts";

export interface ActorPool {
  run(task: ActorTask, signal: AbortSignal): Promise<ActorTaskResult>;
  /**
   * Whether the start of the job with this id still waits here for a loaded thread or room to boot one (not yet handed
   * to piscina); false once it was handed over, or dropped because its job was stopped.
   */
  waits(jobId: string): boolean;
  /** The last error of a worker that had no job to report it to. */
  lastError(): Error | null;
  /** Worker threads currently alive (busy or idle). */
  threads(): number;
  /** Threads that compiled their entry from the shared code cache, V8 having accepted it (mailbox/code-cache.ts). */
  codeCacheUses(): number;
  /**
   * Ends every worker; only called once no job is running. Threads still loading their modules cannot be ended yet:
   * it waits for them up to `waitMs`, and past that returns and ends the pool in the background once they have.
   */
  destroy(waitMs?: number): Promise<void>;
}

/** How long a thread above the warm ones may stay idle: the "recent" in "as many threads as the recent peak". */
const IDLE_TIMEOUT_MS = 30_000;
/** The young generation of an actor thread's heap, in MiB. */
const ACTOR_YOUNG_GENERATION_MB = 2;
/** How long after a job took a thread the pool starts the threads that keep `warm` idle (see scheduleTopUp). */
const TOP_UP_DELAY_MS = 25;
/** How long `destroy` waits for threads still loading their modules before it leaves them to end with the process. */
const LOAD_WAIT_MS = 10_000;
const LOAD_POLL_MS = 10;
/** How long the process's exit may be held for threads still loading their modules (see onExit). */
const EXIT_LOAD_WAIT_MS = 5_000;
/** How many threads may boot at once (host/runtime/thread-boots.ts). */
const BOOT_LIMIT = Math.max(1, availableParallelism());
/** How often waiting starts look again for a loaded thread or room to boot one, while any waits. */
const ADMIT_POLL_MS = 10;

/** A start not yet handed to piscina: a job's task, or a warm task (`task: null`). */
interface WaitingStart {
  task: ActorTask | null;
  options: { transferList?: readonly MessagePort[]; signal?: AbortSignal; name?: string };
  /** True once the start is no longer wanted: its job was stopped before it got a thread. */
  dropped(): boolean;
  settle(outcome: { run: Promise<ActorTaskResult | undefined> } | { error: Error } | { skipped: true }): void;
}

export function createActorPool(options: {
  capacity: number;
  warm: number;
  entry?: URL | undefined;
  /** Where compiled threads share V8's code for their entry (mailbox/code-cache.ts); a new one if unset. */
  codeCache?: SharedArrayBuffer | undefined;
}): ActorPool {
  const maxThreads = options.capacity + options.warm;
  /** Threads whose entry module has finished loading; each thread adds one (actors/thread/actor-thread.ts). */
  const loaded = new Int32Array(new SharedArrayBuffer(4));
  const codeCache = options.codeCache ?? createCodeCache();
  const pool = new Piscina<ActorTask | null, ActorTaskResult | undefined>({
    filename: (options.entry ?? workerUrl("thread/actor-thread")).href,
    // Only a compiled copy's threads use the code cache (actors/thread/cached-entry.ts); a thread that runs the
    // TypeScript source loads its entry as modules, without it.
    workerData: { loaded: loaded.buffer, codeCache },
    minThreads: options.warm,
    // One thread per job, plus room so that the warm threads are not the last ones.
    maxThreads,
    concurrentTasksPerWorker: 1,
    // Between tasks a worker must keep its event loop turning (not block in Atomics.wait), so that anything a
    // finished job left behind, such as a PTY's last callbacks, completes before the thread is reused.
    atomics: "disabled",
    idleTimeout: IDLE_TIMEOUT_MS,
    // An actor reading a flood allocates a buffer per read; with V8's default young generation each thread grew its
    // nursery to tens of MiB under 8 floods. A small one keeps the process ~60 MiB smaller then, and measured faster
    // too (docs/decisions/young-generation.md).
    resourceLimits: { maxYoungGenerationSizeMb: ACTOR_YOUNG_GENERATION_MB },
  });
  // An idle worker that fails (e.g. its module cannot load) has no task to fail with, so piscina emits the error
  // on the pool; unheard, that would throw on Pi's thread. Jobs started on such a pool fail with the same error.
  let lastError: Error | null = null;
  pool.on("error", (error: Error) => {
    lastError = error;
  });

  /** Threads piscina has ended (idle timeout, a failed load); together with the live ones, every thread ever made. */
  let ended = 0;
  pool.on("workerDestroy", () => {
    ended += 1;
  });
  /**
   * Threads piscina has called ready for a task, until they exit: a start boots a new thread exactly when none of the
   * ready ones in piscina's list is idle. (piscina calls the threads it makes with the pool ready at once, and queues
   * their first tasks.) piscina lets a thread go at once when it ends it (a task aborted by the supervisor, an idle
   * timeout), but the thread exits later, and a starved one much later. When that exit arrives piscina makes new
   * threads up to `minThreads` — unless it is destroying the pool at that very moment. An exit that arrived after
   * `destroy()` had finished made two idle threads that nothing ended (seen in a loaded run of the shutdown test). So
   * the pool is destroyed only once every thread let go of has exited (see destroy).
   */
  const ready = new Set<Worker>();
  pool.on("workerCreate", (worker: { id: number }) => {
    const thread = pool.threads.find((candidate) => candidate.threadId === worker.id);
    if (thread !== undefined && !ready.has(thread)) {
      ready.add(thread);
      thread.once("exit", () => ready.delete(thread));
    }
    // After piscina has handed the thread what it had queued for it.
    queueMicrotask(admit);
  });
  const readyThreads = () => {
    let count = 0;
    for (const thread of pool.threads) if (ready.has(thread)) count += 1;
    return count;
  };
  /** Threads made and not yet through their entry module. */
  const loading = () => pool.threads.length + ended - Atomics.load(loaded, 0);
  /** Threads piscina has let go of that have not exited yet. */
  const exiting = () => {
    const kept = new Set(pool.threads);
    let count = 0;
    for (const thread of ready) if (!kept.has(thread)) count += 1;
    return count;
  };
  /**
   * Process exit ends every thread, and one still loading its modules would abort the process instead of letting it
   * exit (see destroy) — as when Pi in print mode answers and exits while its warm threads are starting. Exit handlers
   * cannot wait asynchronously, so this blocks until each thread has loaded (they load on their own threads meanwhile),
   * for a few seconds at most.
   */
  const onExit = () => {
    const deadline = performance.now() + EXIT_LOAD_WAIT_MS;
    for (;;) {
      const seen = Atomics.load(loaded, 0);
      const left = deadline - performance.now();
      if (loading() <= 0 || left <= 0) return;
      Atomics.wait(loaded, 0, seen, Math.min(left, 50));
    }
  };
  process.on("exit", onExit);

  let jobs = 0;
  let warming = 0;
  /** A warm task that failed (its thread could not load, or the pool is being destroyed) stops the warming. */
  let warmFailed = false;
  /** Tasks handed to piscina and not settled, jobs and warm ones alike. */
  let submitted = 0;
  /** Starts waiting for a loaded thread or room to boot one: jobs first, in order, then warm tasks. */
  const waiting: WaitingStart[] = [];
  let admitTimer: ReturnType<typeof setTimeout> | null = null;

  const submit = (start: WaitingStart) => {
    submitted += 1;
    const run = pool.run(start.task, start.options);
    const done = () => {
      submitted -= 1;
      admit();
    };
    run.then(done, done);
    start.settle({ run });
  };
  /** Hands piscina every waiting start it can take now without booting more than BOOT_LIMIT threads at once. */
  const admit = () => {
    for (let i = waiting.length - 1; i >= 0; i -= 1) {
      if (waiting[i]!.dropped()) waiting.splice(i, 1)[0]!.settle({ skipped: true });
    }
    // Ready threads less one per task piscina holds (running or queued for a thread) are idle; the rest are booting.
    const readyCount = readyThreads();
    const counts = { free: readyCount - submitted, booting: pool.threads.length - readyCount, limit: BOOT_LIMIT };
    const admitted = startsToAdmit(counts, waiting.length);
    // piscina adds a new thread synchronously, so the counts stay true from one start to the next.
    for (const start of waiting.splice(0, admitted)) submit(start);
    if (waiting.length > 0 && admitTimer === null) {
      admitTimer = setTimeout(() => {
        admitTimer = null;
        admit();
      }, ADMIT_POLL_MS);
      admitTimer.unref();
    }
  };
  const enqueue = (start: WaitingStart) => {
    const firstWarm = waiting.findIndex((waiter) => waiter.task === null);
    if (start.task !== null && firstWarm >= 0) waiting.splice(firstWarm, 0, start);
    else waiting.push(start);
    admit();
  };
  const startWarm = (): Promise<unknown> =>
    new Promise((resolve, reject) =>
      enqueue({
        task: null,
        options: { name: "warm" },
        dropped: () => false,
        settle: (outcome) => ("run" in outcome ? resolve(outcome.run) : reject(new Error("the actor pool closed"))),
      }),
    );
  const startJob = (task: ActorTask, signal: AbortSignal): Promise<ActorTaskResult> =>
    new Promise((resolve, reject) => {
      const cell = new JobCellReader(task.cell);
      const onAbort = () => {
        const at = waiting.indexOf(start);
        if (at < 0) return;
        waiting.splice(at, 1);
        reject(signal.reason);
      };
      const start: WaitingStart = {
        task,
        options: { transferList: [task.data, task.control], signal },
        // The job was stopped before its actor claimed the spawn: nothing of it runs, and no thread is needed.
        dropped: () => cell.state() === "cancelled",
        settle: (outcome) => {
          signal.removeEventListener("abort", onAbort);
          if ("run" in outcome) resolve(outcome.run as Promise<ActorTaskResult>);
          else if ("error" in outcome) reject(outcome.error);
          else resolve({ id: task.spec.id, cause: "stopped" });
        },
      };
      if (signal.aborted) return reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      enqueue(start);
    });

  /**
   * Keeps `warm` threads idle beyond the running jobs. A warm task (which does nothing) is queued like a job: it
   * takes an idle thread if there is one, and otherwise makes piscina start a thread for it, which loads the actor
   * module, runs the task and is then idle, ready for the next job. So when fewer than `warm` threads are idle,
   * `warm` warm tasks in flight cover the idle ones and start the missing threads.
   */
  const topUp = () => {
    if (warmFailed) return;
    if (waiting.some((start) => start.task !== null) || loading() > 0) return scheduleTopUp();
    const idle = pool.threads.length - jobs - warming;
    if (idle >= options.warm) return;
    const missing = Math.min(options.warm, maxThreads - jobs) - warming;
    for (let i = 0; i < missing && !warmFailed; i += 1) {
      warming += 1;
      startWarm()
        .catch(() => {
          warmFailed = true;
        })
        .finally(() => {
          warming -= 1;
        });
    }
  };
  /**
   * A new thread's start costs tens of milliseconds of CPU (docs/decisions/thread-boots.md); on two cores, started in
   * the same
   * moment as the job that took the last idle thread, it competes with that job's own start. So the top-up waits
   * until the job has had time to spawn, and the starts of one burst share one top-up, which waits on until no job
   * waits for a thread and none is loading: booted in the middle of a burst, the warm threads' boots would share the
   * cores with its last jobs'.
   */
  let topUpTimer: ReturnType<typeof setTimeout> | null = null;
  const scheduleTopUp = () => {
    if (topUpTimer) return;
    topUpTimer = setTimeout(() => {
      topUpTimer = null;
      topUp();
    }, TOP_UP_DELAY_MS);
    topUpTimer.unref();
  };

  return {
    lastError: () => lastError,
    run(task, signal) {
      jobs += 1;
      const running = startJob(task, signal);
      scheduleTopUp();
      return running.finally(() => {
        jobs -= 1;
      });
    },
    // A linear look: at most the capacity's jobs and `warm` warm tasks wait, and it is asked at human rate.
    waits: (jobId) => waiting.some((start) => start.task?.spec.id === jobId && !start.dropped()),
    threads: () => pool.threads.length,
    codeCacheUses: () => codeCacheUses(codeCache),
    async destroy(waitMs = LOAD_WAIT_MS) {
      warmFailed = true;
      if (topUpTimer) clearTimeout(topUpTimer);
      if (admitTimer) clearTimeout(admitTimer);
      // Only jobs that were stopped can still wait (destroy comes once no job runs); a job that somehow still wanted a
      // thread fails with a reason rather than staying "starting" for good.
      for (const start of waiting.splice(0)) {
        start.settle(start.dropped() || start.task === null ? { skipped: true } : { error: new Error(poolClosedBeforeThread()) });
      }
      // Ending a thread in the middle of loading its modules can abort the whole process (Node's module loader asserts
      // "IsGraphAsync must be used on an instantiated module"; seen when a session quit during a burst of starts). So
      // the threads are ended only once none is loading; one that never finishes loading is left to end with the
      // process (piscina's threads do not keep it alive).
      // And only once every thread piscina let go of has exited: one whose exit came after the destroy would be
      // replaced by new threads (see `ready`). Such an exit may itself bring new threads, which then load first.
      const settled = () => loading() === 0 && exiting() === 0;
      const loaded = async (ms: number) => {
        const deadline = performance.now() + ms;
        while ((!settled() || warming > 0) && performance.now() < deadline) await sleep(LOAD_POLL_MS);
        return settled();
      };
      const end = async () => {
        // One thread at a time: 64 threads ended at once kept Pi's thread from its loop for 120–160 ms (their teardowns
        // contend with it for the process's locks and cores); one by one, no turn waited over ~10 ms, in about the same
        // total time (docs/decisions/thread-ends.md). A thread ended here leaves piscina's list
        // at its exit, and piscina makes a new one only below `minThreads`: so the last `warm` are left to its destroy.
        for (const thread of pool.threads.slice(options.warm)) await thread.terminate();
        await pool.destroy();
        process.off("exit", onExit);
      };
      if (await loaded(Math.min(waitMs, LOAD_WAIT_MS))) return end();
      void loaded(LOAD_WAIT_MS).then((done) => (done ? end() : undefined));
    },
  };
}
