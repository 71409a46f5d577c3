/**
 * The entry point of a job actor's thread. The pool loads it when a thread starts, and the thread reports ready
 * only once this module has loaded, so everything a job needs is loaded here, before any job is given to the
 * thread: the job actor and the monitor engine (a thread does not know which kind of job it will get, and loading
 * the engine on the first monitor would put that cost on the monitor's start instead of on an idle thread).
 */
import { workerData } from "node:worker_threads";
import "./monitor-engine.ts";

export { default } from "./job-actor.ts";

// Everything above has been loaded and evaluated once this line runs. The pool counts it: ending a thread while it is
// still loading its modules can abort the whole process (an assertion in Node's module loader), so the pool ends its
// threads only once every one of them got here (host/pool.ts).
const loaded: unknown = (workerData as { loaded?: unknown } | null)?.loaded;
if (loaded instanceof SharedArrayBuffer) {
  const counter = new Int32Array(loaded);
  Atomics.add(counter, 0, 1);
  // The host may be blocked in its exit handler, waiting for this.
  Atomics.notify(counter, 0);
}

/** The pool's way to start a thread ahead of demand: by the time this runs, the thread is loaded. */
export function warm(): void {}
