/**
 * The warm pool job actors run in. A job is one long piscina task that holds its mailbox ports, so a new job
 * starts on a thread that is already running instead of paying a worker start (55–119 ms, platform.md).
 */
import { Piscina } from "piscina";
import type { ActorTaskResult } from "../actors/job-actor.ts";
import { workerUrl } from "../actors/entry-url.ts";
import type { ActorTask } from "../mailbox/protocol.ts";

export interface ActorPool {
  run(task: ActorTask, signal: AbortSignal): Promise<ActorTaskResult>;
  /** The last error of a worker that had no job to report it to. */
  lastError(): Error | null;
  /** Worker threads currently alive (busy or idle). */
  threads(): number;
  /** Ends every worker; only called once no job is running. */
  destroy(): Promise<void>;
}

export function createActorPool(options: { capacity: number; warm: number }): ActorPool {
  const pool = new Piscina<ActorTask, ActorTaskResult>({
    filename: workerUrl("job-actor").href,
    minThreads: options.warm,
    // One thread per job, plus room so that the warm threads are not the last ones.
    maxThreads: options.capacity + options.warm,
    concurrentTasksPerWorker: 1,
    // Between tasks a worker must keep its event loop turning (not block in Atomics.wait), so that anything a
    // finished job left behind, such as a PTY's last callbacks, completes before the thread is reused.
    atomics: "disabled",
    idleTimeout: 30_000,
  });
  // An idle worker that fails (e.g. its module cannot load) has no task to fail with, so piscina emits the error
  // on the pool; unheard, that would throw on Pi's thread. Jobs started on such a pool fail with the same error.
  let lastError: Error | null = null;
  pool.on("error", (error: Error) => {
    lastError = error;
  });
  return {
    lastError: () => lastError,
    run(task, signal) {
      return pool.run(task, { transferList: [task.data, task.control], signal });
    },
    threads: () => pool.threads.length,
    destroy: () => pool.destroy(),
  };
}
