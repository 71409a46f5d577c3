/**
 * Imported first by the actor thread's entry, for its side effect alone: the thread runs below the host before it
 * loads the rest of its modules (a burst of new threads loading at the host's priority starved Pi's thread), and so
 * does every actor of it and anything it forks itself (a PTY job's process). Pipe jobs' processes come from the
 * spawner, at the host's priority.
 */
import { lowerThisThread } from "./priority.ts";

lowerThisThread();
