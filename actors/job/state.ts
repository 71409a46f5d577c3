/**
 * The job actor's state: its phase (mailbox/lifecycle.ts) with what that phase holds, so that no fact outlives its
 * phase: a stop asked for before the process exists waits with the phase that has no process, the stop under way
 * belongs to `stopping`, and "the exit message is sent" exists only once the actor has ended. The cause the monitor
 * contract settles on is derived here too. Pure types and one pure function.
 */
import type { Phase } from "../../mailbox/lifecycle.ts";
import type { StopSignal } from "../../mailbox/control.ts";
import type { EndCause } from "../../mailbox/result.ts";
import type { ProcessEnd } from "../monitor/contract.ts";
import type { ProcessIo } from "../process/io.ts";
import type { StopOutcome } from "../../shared/process-group.ts";

/** The job's process, from its spawn on. */
export interface Child {
  readonly io: ProcessIo;
  /** Resolves once the process exited. */
  readonly exited: Promise<void>;
  /** How it exited, once it has; null while it runs. */
  exit: { code: number | null; signal: string | null } | null;
}

/** A stop asked for before the process exists: the first cause wins, the last signal is sent. */
export interface PendingStop {
  cause: EndCause;
  signal: StopSignal;
}

/**
 * The actor's own state machine: what each phase of the actor's holds (the process, a stop waiting or under way, the
 * sent exit). Not the host's `JobState` (host/runtime/api.ts), which holds what the host knows of the same job: the
 * coarser phase it reads from the cell, who asked for a stop, and the terminal result.
 */
export type ActorState =
  /** Preparing, then inside spawn(): there is no process to stop yet, so a stop waits for it. */
  | { phase: Extract<Phase, "starting" | "spawning">; pendingStop: PendingStop | null }
  | { phase: Extract<Phase, "running">; child: Child }
  /** Stopping the group for `cause` (the first one asked); later requests join `stop`. */
  | { phase: Extract<Phase, "stopping">; child: Child; cause: EndCause; stop: Promise<StopOutcome> }
  /** Finishing: the result is made, then the exit message is sent; after that nothing more is posted. */
  | { phase: Extract<Phase, "ended">; child: Child | null; exitSent: boolean };

/** The process, in every phase that has one. */
export function childOf(state: ActorState): Child | null {
  return "child" in state ? state.child : null;
}

/** The stop waiting for the process, in the phases before it exists. */
export function pendingStopOf(state: ActorState): PendingStop | null {
  return "pendingStop" in state ? state.pendingStop : null;
}

/** The cause the monitor contract settles on; the supervisor's own two never reach a running actor. */
export function monitorCause(cause: EndCause): ProcessEnd["cause"] {
  return cause === "actor_crashed" || cause === "actor_unresponsive" ? "stopped" : cause;
}
