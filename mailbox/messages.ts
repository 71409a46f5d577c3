/**
 * The data port's messages: `ActorToHost` up (spawned, read replies, notices, readiness, the one exit) and
 * `HostToActor` down (reads). The port is ordered, so every read reply arrives before the exit message. Output bytes
 * stay in the actor; they cross only as the bounded answer to a read (mailbox/output.ts). Every message is a member
 * of a discriminated union on `type`; the map of all four channels a job crosses is in mailbox/task.ts.
 */
import { Type, type Static } from "typebox";
import { Nullable } from "./nullable.ts";
import { RetainedWindow, TakenOutput } from "./output.ts";
import { ActorResult } from "./result.ts";

// ── Actor → host ────────────────────────────────────────────────────────────────────────────────────────────────

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
      Type.Literal("runaway"), // the tree passed the watchdog's thresholds (once per episode): detail says by how much
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

// ── Host → actor ────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * A read of output that stays in the actor: the decoded retained window, or a shell job's unread output (its head,
 * tail and the digest of what lay between, folded unless `raw`; the read consumes it). Answered once with the reply of the same `id`, unless the job
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
      /** The head and tail as printed, with an omission marker, instead of folded with the digest in the gap. */
      raw: Type.Boolean(),
      /** The last read of a job that is ending: decode an unfinished character rather than hold it back. */
      final: Type.Boolean(),
    },
    { additionalProperties: false },
  ),
]);
export type Read = Static<typeof Read>;
export const HostToActor = Type.Union([Read]);
export type HostToActor = Static<typeof HostToActor>;
