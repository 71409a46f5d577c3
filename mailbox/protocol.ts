/**
 * The whole wire protocol between the host actor (Pi's thread) and a job actor (a worker thread).
 *
 * A job crosses three channels:
 *   1. the task: `ActorTask` handed to the pool when the job starts (the spec plus two transferred ports);
 *   2. the data port: `ActorToHost` messages up (spawned, output batches, notices, the one exit) and
 *      `HostToActor` credit grants down;
 *   3. the control port: the human-rate `ActorControl` calls (snapshot, write, resize, stop), proxied by comlink.
 * Every message is a member of a discriminated union on `type`; a reader learns the protocol from this file alone.
 */
import type { MessagePort } from "node:worker_threads";
import { Type, type Static } from "typebox";
import { MonitorContract, MonitorOutcome } from "./monitor.ts";

const Bytes = Type.Refine(Type.Unsafe<Uint8Array>({}), (value) => value instanceof Uint8Array, () => "expected a Uint8Array");
const Words = Type.Refine(Type.Unsafe<Uint32Array>({}), (value) => value instanceof Uint32Array, () => "expected a Uint32Array");
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

// ── The job spec ────────────────────────────────────────────────────────────────────────────────────────────────

/** How the process is wired: pipes (stdin optional) or a pseudo-terminal of a given size. */
export const JobIo = Type.Union([
  Type.Object({ kind: Type.Literal("pipes"), stdin: Type.Boolean() }, { additionalProperties: false }),
  Type.Object(
    {
      kind: Type.Literal("pty"),
      cols: Type.Integer({ minimum: 1, maximum: 1000 }),
      rows: Type.Integer({ minimum: 1, maximum: 1000 }),
    },
    { additionalProperties: false },
  ),
]);
export type JobIo = Static<typeof JobIo>;

export const LogSpec = Type.Object(
  {
    /** The session's private log directory (0700); the actor creates its file there with mode 0600. */
    dir: Type.String({ minLength: 1 }),
    /** Bytes this job may write to its log. */
    maxBytes: Type.Integer({ minimum: 0 }),
    /** What a full log means: stop the job (shell jobs), or keep running with the log marked truncated (monitors). */
    onQuota: Type.Union([Type.Literal("stop"), Type.Literal("truncate")]),
  },
  { additionalProperties: false },
);
export type LogSpec = Static<typeof LogSpec>;

export const JobSpec = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    /** `<runtime>/<job>`: set as PI_JOBS_JOB in every process the job starts, so its descendants can be found. */
    tag: Type.String({ minLength: 1 }),
    command: Type.String({ minLength: 1 }),
    /** Program that runs `command` as `shell -c command`. */
    shell: Type.String({ minLength: 1 }),
    cwd: Type.String({ minLength: 1 }),
    /** Complete environment for the process; null inherits the host's. */
    env: Nullable(Type.Record(Type.String(), Type.String())),
    io: JobIo,
    /** Hard lifetime from spawn; enforced by the actor and, one second later, by the supervisor. */
    timeoutMs: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
    /** Grace between SIGTERM and SIGKILL when the group is stopped. */
    killGraceMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
    log: LogSpec,
    /** A monitor's result contract; null for a plain (shell) job. */
    contract: Nullable(MonitorContract),
    /** Fault injection for the supervisor's own tests: the actor crashes or hangs right after spawning. */
    fault: Nullable(Type.Union([Type.Literal("crash"), Type.Literal("hang")])),
  },
  { additionalProperties: false },
);
export type JobSpec = Static<typeof JobSpec>;

// ── Terminal result ─────────────────────────────────────────────────────────────────────────────────────────────

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

// ── Data port: actor → host ─────────────────────────────────────────────────────────────────────────────────────

export { INITIAL_CREDIT, MAX_WRITE_QUEUE_BYTES, SOURCE_ID, type SourceName } from "./constants.ts";

export const Spawned = Type.Object(
  {
    type: Type.Literal("spawned"),
    pid: Type.Integer({ minimum: 1 }),
    /** Process-group id; the supervisor kills `-pgid` if the actor cannot. */
    pgid: Type.Integer({ minimum: 1 }),
    startedAt: Type.Number(),
    io: Type.Union([Type.Literal("pipes"), Type.Literal("pty")]),
  },
  { additionalProperties: false },
);

/**
 * Raw output as it came from the process, in arrival order, one message per batch (never per line).
 * `payload` holds the bytes; `spans` is [sourceId, length, sourceId, length, …] over it. Both buffers are transferred.
 * `lines` counts newline bytes, so the host keeps figures without decoding anything.
 */
export const OutputBatch = Type.Object(
  {
    type: Type.Literal("output"),
    seq: Type.Integer({ minimum: 0 }),
    payload: Bytes,
    spans: Words,
    bytes: Type.Integer({ minimum: 0 }),
    lines: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type OutputBatch = Static<typeof OutputBatch>;

export const Notice = Type.Object(
  {
    type: Type.Literal("notice"),
    kind: Type.Union([
      Type.Literal("paused"), // pipes paused: the host or the matcher is behind
      Type.Literal("resumed"),
      Type.Literal("log_truncated"),
    ]),
    detail: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type Notice = Static<typeof Notice>;

/** The terminal message. Sent exactly once, after every output batch. */
export const Exit = Type.Object({ type: Type.Literal("exit"), result: ActorResult }, { additionalProperties: false });

export const ActorToHost = Type.Union([Spawned, OutputBatch, Notice, Exit]);
export type ActorToHost = Static<typeof ActorToHost>;

// ── Data port: host → actor ─────────────────────────────────────────────────────────────────────────────────────

/** Permission to send `batches` more output batches. Without credit the actor buffers, then pauses the pipes. */
export const Credit = Type.Object(
  { type: Type.Literal("credit"), batches: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);
export const HostToActor = Type.Union([Credit]);
export type HostToActor = Static<typeof HostToActor>;


// ── Control port (comlink) ──────────────────────────────────────────────────────────────────────────────────────

export const ActorSnapshot = Type.Object(
  {
    phase: Type.Union([Type.Literal("starting"), Type.Literal("running"), Type.Literal("stopping"), Type.Literal("ended")]),
    pid: Nullable(Type.Integer()),
    paused: Type.Boolean(),
    /** Bytes waiting for credit inside the actor. */
    queuedBytes: Type.Integer({ minimum: 0 }),
    /** Records waiting for (or in) contract evaluation. */
    pendingMatchLines: Type.Integer({ minimum: 0 }),
    totals: Type.Object({ bytes: Type.Integer({ minimum: 0 }), lines: Type.Integer({ minimum: 0 }) }),
    log: LogState,
    writeQueueBytes: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type ActorSnapshot = Static<typeof ActorSnapshot>;

export const WriteAck = Type.Union([
  Type.Object({ ok: Type.Literal(true), queuedBytes: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
  Type.Object({ ok: Type.Literal(false), error: Type.String() }, { additionalProperties: false }),
]);
export type WriteAck = Static<typeof WriteAck>;

export const StopSignal = Type.Union([
  Type.Literal("SIGTERM"),
  Type.Literal("SIGKILL"),
  Type.Literal("SIGINT"),
  Type.Literal("SIGHUP"),
  Type.Literal("SIGQUIT"),
]);
export type StopSignal = Static<typeof StopSignal>;

/** The human-rate calls one actor answers on its control port. Never used for output. */
export interface ActorControl {
  snapshot(): ActorSnapshot;
  /** Queue bytes for stdin (pipes) or the terminal (PTY); refused over the 1 MiB outstanding bound. */
  write(bytes: Uint8Array): WriteAck;
  /** Close stdin (pipes only). */
  endStdin(): WriteAck;
  resize(cols: number, rows: number): WriteAck;
  /** Ask the actor to stop the group (signal first, SIGKILL after the grace); resolves once it is asked, not done. */
  stop(signal: StopSignal): void;
}


// ── The task handed to the pool ─────────────────────────────────────────────────────────────────────────────────

export interface ActorTask {
  spec: JobSpec;
  data: MessagePort;
  control: MessagePort;
  /** Session-wide log budget shared by every actor: one BigInt64 of bytes still allowed. */
  logBudget: SharedArrayBuffer;
  /** Development and tests: check every message against its schema at the boundary. */
  checkMessages: boolean;
}
