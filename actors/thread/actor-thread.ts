/**
 * The entry point of a job actor's thread. The pool loads it when a thread starts, and the thread reports ready
 * only once this module has loaded, so everything a job needs is loaded here, before any job is given to the
 * thread: the job actor and the monitor engine (a thread does not know which kind of job it will get, and loading
 * the engine on the first monitor would put that cost on the monitor's start instead of on an idle thread).
 */
import "./lowered-thread.ts";
import { workerData } from "node:worker_threads";
import "../monitor/engine.ts";

export { default } from "../job/actor.ts";

// The pool counts the threads that have loaded this module: ending a thread while it is still loading can abort the
// whole process (an assertion in Node's module loader), so the pool ends its threads only once every one of them is
// counted (host/runtime/pool.ts). The thread counts itself from the next turn of its event loop, not from here: piscina
// loads this module with require(), and where it is an ES module (the TypeScript source; compiled, it is CommonJS)
// Node builds require()'s view of it after evaluating it — ending the thread during that last step aborted Pi in print
// mode (seen once in a whole-suite run).
const loaded: unknown = (workerData as { loaded?: unknown } | null)?.loaded;
if (loaded instanceof SharedArrayBuffer) {
  setImmediate(() => {
    const counter = new Int32Array(loaded);
    Atomics.add(counter, 0, 1);
    // The host may be blocked in its exit handler, waiting for this.
    Atomics.notify(counter, 0);
  });
}

/** The pool's way to start a thread ahead of demand: by the time this runs, the thread is loaded. */
export function warm(): void {}
