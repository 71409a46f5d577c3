/**
 * The job spec: everything an actor needs to run one job, handed over in its task (mailbox/task.ts). The host builds
 * it (host/runtime/runtime.ts) and checks it against this schema before the job starts where checks are on.
 */
import { Type, type Static } from "typebox";
import { MonitorContract } from "./monitor.ts";
import { Nullable } from "./nullable.ts";

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

/**
 * A job's resource limits, over its whole tree (every process carrying its tag): past one the actor stops the job with
 * the limit's cause (mailbox/result.ts). Each is null when not set.
 */
export const ResourceLimits = Type.Object(
  {
    /** Resident memory of the tree, summed over its processes. */
    memoryBytes: Nullable(Type.Integer({ minimum: 1 })),
    /** CPU time (user + system) the tree has used since the spawn, its reaped children's included. */
    cpuMs: Nullable(Type.Integer({ minimum: 1 })),
    /** Live processes in the tree at once. */
    processes: Nullable(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export type ResourceLimits = Static<typeof ResourceLimits>;

/**
 * The watchdog's thresholds (host/config.ts reads them): a tree above `memoryBytes`, or above `cpuPercent` of one core
 * on average over `sustainMs`, is a runaway. It is flagged and reported once per episode, never stopped.
 */
export const WatchdogSpec = Type.Object(
  {
    memoryBytes: Type.Integer({ minimum: 1 }),
    cpuPercent: Type.Number({ exclusiveMinimum: 0 }),
    sustainMs: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
  },
  { additionalProperties: false },
);
export type WatchdogSpec = Static<typeof WatchdogSpec>;

/** A process tree by its tag (shared/process-table/tags.ts), its first process and when that was spawned. */
export const WatchedTree = Type.Object(
  {
    tag: Type.String({ minLength: 1 }),
    /** The tree's first process, the leader of its group. */
    pid: Type.Integer({ minimum: 2 }),
    spawnedAtEpoch: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type WatchedTree = Static<typeof WatchedTree>;

/**
 * Watches the actor keeps on a running job: readiness, stall detection (prompt detection is always on), and its
 * tree's resource use against its limits and the watchdog (the figures are sampled for every job).
 */
export const WatchSpec = Type.Object(
  {
    ready: Nullable(ReadySpec),
    /** Quiet time after which a job using under 1 % of a core is stalled; null: not judged. */
    stallMs: Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    /** Absent: no limit. */
    limits: Type.Optional(ResourceLimits),
    /** Absent: the watchdog is off for this job. */
    watchdog: Type.Optional(WatchdogSpec),
    /**
     * The tree every watch but the output's looks at (ports, usage, limits, the watchdog), when it is not the job's
     * own: a persisted job's, whose follower is what this actor runs (host/persist/keeper.ts). Absent: the job's own.
     */
    tree: Type.Optional(WatchedTree),
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
