/**
 * The whole wire protocol between the host actor (Pi's thread) and a job actor (a worker thread).
 *
 * A job crosses four channels:
 *   1. the task: `ActorTask` handed to the pool when the job starts (the spec, two transferred ports, the job's
 *      shared cell and the session's log budget);
 *   2. the job's shared cell (`mailbox/cell.ts`): figures and lifecycle facts (state, pid, pgid, cancel) that the
 *      actor writes with Atomics and the host reads when it likes — no message per output chunk;
 *   3. the data port: `ActorToHost` messages up (spawned, read replies, notices, the one exit) and `HostToActor`
 *      read requests down. Output bytes stay in the actor; they cross only as the bounded answer to a read;
 *   4. the control port: the human-rate `ActorControl` calls (snapshot, write, resize, stop), proxied by comlink.
 * Every message is a member of a discriminated union on `type`; a reader learns the protocol from this file alone.
 */
import type { MessagePort } from "node:worker_threads";
import { Type, type Static } from "typebox";
import { MonitorContract, MonitorOutcome } from "./monitor.ts";

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

/** What makes a job that keeps running ready (all that are set must hold), checked by the actor. */
export const ReadySpec = Type.Object(
  {
    /** A regex (contract-pattern rules) on complete lines, or a partial line once idle. */
    pattern: Nullable(Type.String({ minLength: 1 })),
    /** A TCP port a process of the job must listen on. */
    port: Nullable(Type.Integer({ minimum: 1, maximum: 65_535 })),
    /** A URL whose GET must answer with a status below 500. */
    http: Nullable(Type.String({ minLength: 1 })),
    timeoutMs: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
  },
  { additionalProperties: false },
);
export type ReadySpec = Static<typeof ReadySpec>;

/** Watches the actor keeps on a running job: readiness, and stall detection (prompt detection is always on). */
export const WatchSpec = Type.Object(
  {
    ready: Nullable(ReadySpec),
    /** Quiet time after which a job using under 1 % of a core is stalled; null: not judged. */
    stallMs: Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  },
  { additionalProperties: false },
);
export type WatchSpec = Static<typeof WatchSpec>;

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
    /** The output window the actor retains for the console: the last `maxLines` lines within `maxBytes`. */
    retain: Type.Object(
      { maxBytes: Type.Integer({ minimum: 1 }), maxLines: Type.Integer({ minimum: 1 }) },
      { additionalProperties: false },
    ),
    /** A shell job's unread-output buffer (head and tail since the last read); null for a monitor. */
    unread: Nullable(
      Type.Object(
        { headBytes: Type.Integer({ minimum: 0 }), tailBytes: Type.Integer({ minimum: 0 }) },
        { additionalProperties: false },
      ),
    ),
    /** A monitor's result contract; null for a plain (shell) job. */
    contract: Nullable(MonitorContract),
    /** Replace secrets in what the job shows the model and the screen (off with PI_JOBS_REDACT=0); the log keeps raw bytes. */
    redact: Type.Boolean(),
    /** Readiness and stall watches; absent: prompts are still detected, nothing else is watched. */
    watch: Type.Optional(WatchSpec),
    /**
     * The Unix socket of the session's spawner (spawner/spawner.ts), which starts a pipe job's process so that the
     * fork copies a small process instead of Pi; absent, or when it does not answer, the actor spawns it itself.
     */
    spawner: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);
export type JobSpec = Static<typeof JobSpec>;

// ── Output, as a read returns it ────────────────────────────────────────────────────────────────────────────────

export const RetainedLine = Type.Object(
  { source: Type.Union([Type.Literal("stdout"), Type.Literal("stderr"), Type.Literal("pty")]), text: Type.String() },
  { additionalProperties: false },
);
export type RetainedLine = Static<typeof RetainedLine>;

/** The retained window decoded into whole lines; what fell out of it is counted. */
export const RetainedWindow = Type.Object(
  {
    lines: Type.Array(RetainedLine),
    droppedLines: Type.Integer({ minimum: 0 }),
    droppedBytes: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type RetainedWindow = Static<typeof RetainedWindow>;

/** A shell read: the bounded head and tail of what arrived since the previous read. */
export const TakenOutput = Type.Object(
  {
    /** Decoded text (raw: control characters are escaped later, where the text meets the model). */
    text: Type.String(),
    /** Bytes this read covered, including the omitted ones. */
    bytes: Type.Integer({ minimum: 0 }),
    /** Bytes dropped between head and tail. */
    omittedBytes: Type.Integer({ minimum: 0 }),
    /** Secrets the actor replaced in `text` (actors/redact/output.ts). */
    redactions: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type TakenOutput = Static<typeof TakenOutput>;

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

// ── Data port: actor → host ─────────────────────────────────────────────────────────────────────────────────────

export { MAX_WRITE_QUEUE_BYTES, SOURCE_ID, type SourceName } from "./constants.ts";

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

/** The answer to one `Read`, posted on the data port, so it always arrives before the exit message. */
export const WindowReply = Type.Object(
  { type: Type.Literal("window"), id: Type.Integer({ minimum: 0 }), window: RetainedWindow },
  { additionalProperties: false },
);
export const UnreadReply = Type.Object(
  { type: Type.Literal("unread"), id: Type.Integer({ minimum: 0 }), taken: TakenOutput },
  { additionalProperties: false },
);

export const Notice = Type.Object(
  {
    type: Type.Literal("notice"),
    kind: Type.Union([
      Type.Literal("paused"), // pipes paused: the contract matcher is behind (it must see every line)
      Type.Literal("resumed"),
      Type.Literal("log_truncated"),
      Type.Literal("stalled"), // quiet for the spec's stallMs and under 1 % of a core: detail null
      Type.Literal("waiting_for_input"), // a prompt-shaped unterminated line, then quiet: detail is the prompt
    ]),
    detail: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type Notice = Static<typeof Notice>;

export const ReadyReport = Type.Object(
  {
    status: Type.Union([Type.Literal("ready"), Type.Literal("timeout")]),
    /** From the spawn. */
    elapsedMs: Type.Integer({ minimum: 0 }),
    matched: Nullable(Type.String()),
    captures: Nullable(Type.Record(Type.String(), Type.String())),
    port: Nullable(Type.Integer()),
  },
  { additionalProperties: false },
);
export type ReadyReport = Static<typeof ReadyReport>;

/** Sent at most once, when the spec's ready conditions all hold or its ready deadline passed. */
export const ReadyMessage = Type.Object({ type: Type.Literal("ready"), report: ReadyReport }, { additionalProperties: false });

/** The TCP ports the job's processes listen on; null where they cannot be listed. */
export const PortsReply = Type.Object(
  { type: Type.Literal("ports"), id: Type.Integer({ minimum: 0 }), ports: Nullable(Type.Array(Type.Integer())) },
  { additionalProperties: false },
);

/**
 * The terminal message, sent exactly once, after every read reply. It carries the final output window and, for a
 * shell job, the final read of its unread output, so both stay readable on the host after the thread is gone.
 */
export const Exit = Type.Object(
  { type: Type.Literal("exit"), result: ActorResult, window: RetainedWindow, unread: Nullable(TakenOutput) },
  { additionalProperties: false },
);

export const ActorToHost = Type.Union([Spawned, WindowReply, UnreadReply, PortsReply, Notice, ReadyMessage, Exit]);
export type ActorToHost = Static<typeof ActorToHost>;

// ── Data port: host → actor ─────────────────────────────────────────────────────────────────────────────────────

/**
 * A read of output that stays in the actor: the decoded retained window, or a shell job's unread head and tail (at
 * most `maxBytes` of text; the read consumes it). Answered once with the reply of the same `id`, unless the job
 * ends first: then the exit message carries the final window and unread output instead.
 */
export const Read = Type.Union([
  Type.Object({ type: Type.Literal("read"), id: Type.Integer({ minimum: 0 }), what: Type.Literal("window") }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal("read"), id: Type.Integer({ minimum: 0 }), what: Type.Literal("ports") }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal("read"),
      id: Type.Integer({ minimum: 0 }),
      what: Type.Literal("unread"),
      maxBytes: Type.Integer({ minimum: 0 }),
      /** The last read of a job that is ending: decode an unfinished character rather than hold it back. */
      final: Type.Boolean(),
    },
    { additionalProperties: false },
  ),
]);
export type Read = Static<typeof Read>;
export const HostToActor = Type.Union([Read]);
export type HostToActor = Static<typeof HostToActor>;


// ── Control port (comlink) ──────────────────────────────────────────────────────────────────────────────────────

export const ActorSnapshot = Type.Object(
  {
    phase: Type.Union([Type.Literal("starting"), Type.Literal("running"), Type.Literal("stopping"), Type.Literal("ended")]),
    pid: Nullable(Type.Integer()),
    paused: Type.Boolean(),
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
  /** The job's shared cell (mailbox/cell.ts): written by the actor, read by the host. */
  cell: SharedArrayBuffer;
  /** Session-wide log budget shared by every actor: one BigInt64 of bytes still allowed. */
  logBudget: SharedArrayBuffer;
  /** Development and tests: check every message against its schema at the boundary. */
  checkMessages: boolean;
}

/** What the pool task of a job resolves with, after the actor sent its exit message. */
export interface ActorTaskResult {
  id: string;
  cause: EndCause;
}

