/**
 * A job's terminal result: why it ended (`EndCause`), what its log holds and what it printed, and for a monitor the
 * contract's outcome. The actor reports it in its one exit message (mailbox/messages.ts); the supervisor makes one
 * itself when the actor cannot (host/runtime/supervisor.ts).
 */
import { Type, type Static } from "typebox";
import { MonitorOutcome } from "./monitor.ts";
import { Nullable } from "./nullable.ts";

/**
 * What ended the job. The last two are the supervisor's, except that an actor owning a PTY contains its own crash
 * and reports actor_crashed itself (its thread must not die while the terminal lives).
 */
export const EndCause = Type.Union([
  Type.Literal("exit"), // the process exited on its own (or on a signal nobody here sent)
  Type.Literal("contract"), // the monitor contract decided and stopped the group
  Type.Literal("timeout"), // timeoutMs elapsed
  Type.Literal("stopped"), // stop() from the host
  Type.Literal("spawn_failed"),
  Type.Literal("log_quota"), // the log hit its quota and the spec says stop
  Type.Literal("log_failed"), // the log could not be written
  Type.Literal("stalled"), // a monitor with a stall time went quiet and idle
  Type.Literal("waiting_for_input"), // a monitor with a stall time sat at a prompt it can never be answered at
  Type.Literal("actor_crashed"),
  Type.Literal("actor_unresponsive"),
]);
export type EndCause = Static<typeof EndCause>;

export const LogState = Type.Object(
  {
    path: Nullable(Type.String()),
    bytes: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean(),
    error: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type LogState = Static<typeof LogState>;

export const ActorResult = Type.Object(
  {
    cause: EndCause,
    exitCode: Nullable(Type.Integer()),
    signal: Nullable(Type.String()),
    /** Human detail for causes that need one (spawn errors, crashes). */
    message: Nullable(Type.String()),
    /** Epoch milliseconds; null when nothing was spawned. */
    startedAt: Nullable(Type.Number()),
    endedAt: Type.Number(),
    /** Monotonic milliseconds from spawn (or from the start request when nothing spawned) to the end. */
    elapsedMs: Type.Number({ minimum: 0 }),
    /** "confirmed" once kill(-pgid, 0) answered ESRCH (or only zombies remain). */
    cleanup: Type.Union([Type.Literal("confirmed"), Type.Literal("unconfirmed")]),
    /** SIGKILL was needed after the grace period. */
    escalated: Type.Boolean(),
    log: LogState,
    totals: Type.Object({ bytes: Type.Integer({ minimum: 0 }), lines: Type.Integer({ minimum: 0 }) }),
    monitor: Nullable(MonitorOutcome),
  },
  { additionalProperties: false },
);
export type ActorResult = Static<typeof ActorResult>;
