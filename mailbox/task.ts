/**
 * The task that starts a job, and the map of everything that crosses between the host actor (Pi's thread) and a job
 * actor (a worker thread). A job crosses four channels:
 *   1. the task: `ActorTask` handed to the pool when the job starts (the spec, mailbox/spec.ts; two transferred
 *      ports; the job's shared cell and the session's log budget);
 *   2. the job's shared cell (mailbox/cell.ts): figures and lifecycle facts (its phase, mailbox/lifecycle.ts; pid,
 *      pgid, cancel) that the actor writes with Atomics and the host reads when it likes — no message per output chunk;
 *   3. the data port (mailbox/messages.ts): `ActorToHost` messages up (spawned, read replies, notices, the one exit,
 *      whose result is mailbox/result.ts) and `HostToActor` read requests down. Output bytes stay in the actor; they
 *      cross only as the bounded answer to a read (mailbox/output.ts);
 *   4. the control port (mailbox/control.ts): the human-rate `ActorControl` calls (write, resize, stop), proxied by
 *      comlink.
 * The texts of the errors that cross are named once, in mailbox/errors.ts.
 */
import type { MessagePort } from "node:worker_threads";
import type { EndCause } from "./result.ts";
import type { JobSpec } from "./spec.ts";

export interface ActorTask {
  spec: JobSpec;
  data: MessagePort;
  control: MessagePort;
  /** The job's shared cell (mailbox/cell.ts): written by the actor, read by the host. */
  cell: SharedArrayBuffer;
  /** Session-wide log budget shared by every actor: one BigInt64 of bytes still allowed. */
  logBudget: SharedArrayBuffer;
}

/** What the pool task of a job resolves with, after the actor sent its exit message. */
export interface ActorTaskResult {
  id: string;
  cause: EndCause;
}
