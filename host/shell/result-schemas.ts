/**
 * The output schemas of the shell tools' structured results (host/shell/result.ts): what codemode scripts receive as
 * structuredContent is checked against these. Apart from the result types because these are TypeBox values that
 * only the tools' registration needs, while the types are read wherever a result is built or drawn.
 */
import { Type } from "typebox";
import type { Cleanup, ProcessStatus, StopReason, Supervision } from "./supervision.ts";
import { START_STAGES } from "../../shared/start-stage.ts";
import { UsageFieldsSchema } from "../runtime/usage-line.ts";

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const StatusSchema = Type.Union((["starting", "running", "exited", "failed", "timed_out", "stopped"] satisfies ProcessStatus[]).map((s) => Type.Literal(s)));
const OnExitSchema = Type.Union([Type.Literal("none"), Type.Literal("wake")]);
const StartStageSchema = Type.Union(START_STAGES.map((s) => Type.Literal(s)));

const PersistedSchema = Type.Object({ entry: Type.String(), started_by_pid: Type.Integer(), adopted: Type.Optional(Type.Literal(true)) });

export const SupervisionSchema = Type.Object({
  state: Type.Union(
    (["starting", "running", "stopping", "exited", "failed", "timed_out", "stopped", "log_quota", "log_failed"] satisfies Supervision["state"][]).map((s) =>
      Type.Literal(s),
    ),
  ),
  stop_reason: Nullable(
    Type.Union(
      (
        [
          "timed_out",
          "stopped",
          "session_shutdown",
          "log_quota",
          "log_failed",
          "spawn_failed",
          "actor_crashed",
          "actor_unresponsive",
          "memory_limit",
          "cpu_limit",
          "process_limit",
        ] satisfies StopReason[]
      ).map((s) => Type.Literal(s)),
    ),
  ),
  deadline_utc: Nullable(Type.String()),
  quiet_ms: Nullable(Type.Number()),
  log_bytes: Type.Number(),
  log_truncated: Type.Boolean(),
  cleanup: Type.Union((["none", "pending", "confirmed", "unconfirmed"] satisfies Cleanup[]).map((s) => Type.Literal(s))),
  stalled: Type.Boolean(),
  waiting_for_input: Type.Boolean(),
  runaway: Type.Boolean(),
});

const ReadyResultSchema = Type.Object({
  status: Type.Union(["ready", "not_ready", "exited", "timeout"].map((s) => Type.Literal(s))),
  elapsed_ms: Type.Number(),
  matched: Type.Optional(Type.String()),
  captures: Type.Optional(Type.Record(Type.String(), Type.String())),
  port: Type.Optional(Type.Integer()),
});

export const ProcessResultSchema = Type.Object({
  operation: Type.Union([Type.Literal("exec_command"), Type.Literal("write_stdin")]),
  status: StatusSchema,
  running: Type.Boolean(),
  session_id: Type.Optional(Type.Integer()),
  exit_code: Type.Optional(Nullable(Type.Integer())),
  signal: Type.Optional(Nullable(Type.String())),
  failure: Type.Optional(Nullable(Type.Object({ reason: Type.String(), message: Type.String() }))),
  output: Type.String(),
  output_bytes: Type.Integer(),
  output_omitted_bytes: Type.Integer(),
  output_folded_lines: Type.Integer(),
  output_rendered: Type.Union([Type.Literal("terminal"), Type.Literal("text")]),
  redactions: Type.Optional(Type.Integer()),
  output_replayed: Type.Boolean(),
  output_bytes_total: Type.Integer(),
  log_path: Nullable(Type.String()),
  wait_mode: Type.Union([Type.Literal("immediate"), Type.Literal("relative"), Type.Literal("absolute")]),
  wait_status: Type.Union(["snapshot", "completed", "deadline", "cancelled", "steered", "ready"].map((s) => Type.Literal(s))),
  supervision: SupervisionSchema,
  cmd: Type.String(),
  tty: Type.Boolean(),
  on_exit: OnExitSchema,
  elapsed_ms: Type.Number(),
  notes: Type.Array(Type.String()),
  ready: Type.Optional(ReadyResultSchema),
  start_stage: Type.Optional(StartStageSchema),
  usage: Type.Optional(UsageFieldsSchema),
});

const SessionEntrySchema = Type.Object({
  session_id: Type.Integer(),
  cmd: Type.String(),
  tty: Type.Boolean(),
  running: Type.Boolean(),
  status: StatusSchema,
  exit_code: Nullable(Type.Integer()),
  signal: Nullable(Type.String()),
  on_exit: OnExitSchema,
  collected: Type.Boolean(),
  output_bytes_total: Type.Integer(),
  output_pending_bytes: Type.Integer(),
  evidence_lines: Type.Integer(),
  started_utc: Type.String(),
  elapsed_ms: Type.Number(),
  log_path: Nullable(Type.String()),
  supervision: SupervisionSchema,
  listening: Type.Optional(Nullable(Type.Array(Type.Integer()))),
  start_stage: Type.Optional(StartStageSchema),
  earlier_session: Type.Optional(Type.Literal(true)),
  persisted: Type.Optional(PersistedSchema),
  usage: Type.Optional(UsageFieldsSchema),
});

export const ListResultSchema = Type.Object({
  operation: Type.Literal("list_sessions"),
  active_count: Type.Integer(),
  completed_count: Type.Integer(),
  just_exited_count: Type.Integer(),
  starting_counts: Type.Optional(Type.Object({ waiting_for_thread: Type.Integer(), booting: Type.Integer(), forking: Type.Integer() })),
  sessions: Type.Array(SessionEntrySchema),
  owned_by_another_pi: Type.Optional(
    Type.Object({
      owner_pid: Nullable(Type.Integer()),
      jobs: Type.Array(Type.Object({ cmd: Type.String(), started_utc: Type.String(), persisted: PersistedSchema })),
    }),
  ),
});

export const SetOnExitResultSchema = Type.Object({
  operation: Type.Literal("set_on_exit"),
  session_id: Type.Integer(),
  cmd: Type.String(),
  on_exit: OnExitSchema,
  previous_on_exit: OnExitSchema,
  running: Type.Boolean(),
  status: StatusSchema,
  effect: Type.Union(["armed", "disarmed", "unchanged", "already_notified"].map((s) => Type.Literal(s))),
});

export const KillResultSchema = Type.Object({
  operation: Type.Literal("kill_session"),
  session_id: Type.Integer(),
  cmd: Type.String(),
  signal: Type.String(),
  killed: Type.Boolean(),
  escalated: Type.Boolean(),
  already_exited: Type.Boolean(),
  status: StatusSchema,
  running: Type.Boolean(),
  exit_code: Nullable(Type.Integer()),
  exit_signal: Nullable(Type.String()),
  log_path: Nullable(Type.String()),
  supervision: SupervisionSchema,
  cleanup: Type.Union((["none", "pending", "confirmed", "unconfirmed"] satisfies Cleanup[]).map((s) => Type.Literal(s))),
  message: Type.String(),
});
