/**
 * A job's terminal result: why it ended (`EndCause`), what its log holds and what it printed, and for a monitor the
 * contract's outcome. The actor reports it in its one exit message (mailbox/messages.ts); the supervisor makes one
 * itself when the actor cannot (host/runtime/supervisor.ts).
 */
import { Type, type Static } from "typebox";
import { Evidence } from "./evidence.ts";
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
  Type.Literal("memory_limit"), // the tree's resident memory passed the job's limit
  Type.Literal("cpu_limit"), // the tree's CPU time passed the job's limit
  Type.Literal("process_limit"), // the tree had more live processes than the job's limit
  Type.Literal("actor_crashed"),
  Type.Literal("actor_unresponsive"),
]);
export type EndCause = Static<typeof EndCause>;

/** The causes a resource limit ends a job with (mailbox/spec.ts, ResourceLimits). */
export const LimitCause = Type.Union([Type.Literal("memory_limit"), Type.Literal("cpu_limit"), Type.Literal("process_limit")]);
export type LimitCause = Static<typeof LimitCause>;

/**
 * The limit that stopped a job and the figure that passed it, in the limit's unit: bytes of resident memory, ms of CPU
 * or processes. `peak` is the sample that tripped it (the tree's highest, since the job is stopped at once).
 */
export const LimitTrip = Type.Object(
  { cause: LimitCause, limit: Type.Number({ minimum: 0 }), peak: Type.Number({ minimum: 0 }) },
  { additionalProperties: false },
);
export type LimitTrip = Static<typeof LimitTrip>;

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
    /** The error-like lines of the whole run (a monitor's: those not in its report's tail, unless it passed). */
    evidence: Evidence,
    monitor: Nullable(MonitorOutcome),
    /** Present exactly when `cause` is a limit's: which one, and what passed it. */
    limit: Type.Optional(LimitTrip),
  },
  { additionalProperties: false },
);
export type ActorResult = Static<typeof ActorResult>;
