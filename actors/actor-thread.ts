/**
 * The entry point of a job actor's thread. The pool loads it when a thread starts, and the thread reports ready
 * only once this module has loaded, so everything a job needs is loaded here, before any job is given to the
 * thread: the job actor and the monitor engine (a thread does not know which kind of job it will get, and loading
 * the engine on the first monitor would put that cost on the monitor's start instead of on an idle thread).
 */
import "./monitor-engine.ts";

export { default } from "./job-actor.ts";

/** The pool's way to start a thread ahead of demand: by the time this runs, the thread is loaded. */
export function warm(): void {}
