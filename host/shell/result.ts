/**
 * The shapes the tools answer with, once as structured data (details and codemode's structuredContent, checked by the
 * output schemas below) and once as text for the model. Pure: the text is a function of the structured value.
 */
import { Type } from "typebox";
import type { Cleanup, Failure, ProcessStatus, StopReason, Supervision, SupervisionState } from "./supervision.ts";
import type { WaitMode } from "./waits.ts";
import { escapeControls, oneLine } from "../safety/escape.ts";
import { COMMAND_PREVIEW_CHARS } from "./limits.ts";
import type { OutputRendering } from "../../mailbox/constants.ts";
import type { StartStage } from "../runtime/api.ts";
import { START_STAGE_WORDS, START_STAGES, startingStatus, startingSummary, type StartingCounts } from "../../ui/start-stage.ts";

export type WaitStatus = "snapshot" | "completed" | "deadline" | "cancelled" | "steered" | "ready";

/** How an exec_command with `ready` ended its wait. */
export interface ReadyResult {
  status: "ready" | "not_ready" | "exited" | "timeout";
  /** From the spawn to the moment the condition held (or the wait ended). */
  elapsed_ms: number;
  matched?: string;
  captures?: Record<string, string>;
  port?: number;
}
export type OnExit = "none" | "wake";

export interface ProcessResult {
  operation: "exec_command" | "write_stdin";
  status: ProcessStatus;
  running: boolean;
  /** Present while the job runs. */
  session_id?: number;
  /** Present once it has ended. */
  exit_code?: number | null;
  signal?: string | null;
  failure?: Failure | null;
  output: string;
  output_bytes: number;
  /** Bytes left out between head and tail: raw bytes for "text", rendered bytes for "terminal". */
  output_omitted_bytes: number;
  /** How `output` was made from the raw bytes (which stay unchanged in the log): a terminal emulator's rendered lines
   * for a PTY, or pipe text with colours and OSC strings removed and carriage returns applied. */
  output_rendered: OutputRendering;
  /** Secrets replaced with `[redacted:NAME]` in `output`; present only when something was replaced. */
  redactions?: number;
  /** True when this is the saved final read of a completion first collected inside a codemode script. */
  output_replayed: boolean;
  output_bytes_total: number;
  log_path: string | null;
  wait_mode: WaitMode;
  wait_status: WaitStatus;
  supervision: Supervision;
  cmd: string;
  tty: boolean;
  on_exit: OnExit;
  elapsed_ms: number;
  /** Notes about this call: input written, resize applied, why output was left unread. */
  notes: string[];
  /** Present when exec_command was given `ready`. */
  ready?: ReadyResult;
  /** Present while the job is starting: why its process does not exist yet. */
  start_stage?: StartStage;
}

export interface SessionEntryView {
  session_id: number;
  cmd: string;
  tty: boolean;
  running: boolean;
  status: ProcessStatus;
  exit_code: number | null;
  signal: string | null;
  on_exit: OnExit;
  /** Whether this completion still owes the model a notification or collection. */
  collected: boolean;
  output_bytes_total: number;
  output_pending_bytes: number;
  started_utc: string;
  elapsed_ms: number;
  log_path: string | null;
  supervision: Supervision;
  /** TCP ports the job's processes listen on (running jobs; null where they cannot be listed). */
  listening?: number[] | null;
  /** Present while the job is starting: why its process does not exist yet. */
  start_stage?: StartStage;
}

export interface ListResult {
  operation: "list_sessions";
  active_count: number;
  completed_count: number;
  /** Compatibility alias of completed_count, not a count of new exits. */
  just_exited_count: number;
  /** Present when any listed job is starting: how many are in each stage (a burst's progress). */
  starting_counts?: StartingCounts;
  sessions: SessionEntryView[];
}

export interface SetOnExitResult {
  operation: "set_on_exit";
  session_id: number;
  cmd: string;
  on_exit: OnExit;
  previous_on_exit: OnExit;
  running: boolean;
  status: ProcessStatus;
  /** What changed: armed, disarmed or unchanged; "already_notified" when a wake was already handed to Pi. */
  effect: "armed" | "disarmed" | "unchanged" | "already_notified";
}

export interface KillResult {
  operation: "kill_session";
  session_id: number;
  cmd: string;
  signal: string;
  killed: boolean;
  escalated: boolean;
  /** The job had already ended before the kill. */
  already_exited: boolean;
  status: ProcessStatus;
  running: boolean;
  exit_code: number | null;
  exit_signal: string | null;
  log_path: string | null;
  supervision: Supervision;
  cleanup: Cleanup;
  message: string;
}

// ── Output schemas (what codemode scripts receive) ──────────────────────────────────────────────────────────────

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const StatusSchema = Type.Union((["starting", "running", "exited", "failed", "timed_out", "stopped"] satisfies ProcessStatus[]).map((s) => Type.Literal(s)));
const OnExitSchema = Type.Union([Type.Literal("none"), Type.Literal("wake")]);
const StartStageSchema = Type.Union(START_STAGES.map((s) => Type.Literal(s)));

export const SupervisionSchema = Type.Object({
  state: Type.Union(
    (["starting", "running", "stopping", "exited", "failed", "timed_out", "stopped", "log_quota", "log_failed"] satisfies SupervisionState[]).map((s) =>
      Type.Literal(s),
    ),
  ),
  stop_reason: Nullable(
    Type.Union(
      (
        ["timed_out", "stopped", "session_shutdown", "log_quota", "log_failed", "spawn_failed", "actor_crashed", "actor_unresponsive"] satisfies StopReason[]
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
  started_utc: Type.String(),
  elapsed_ms: Type.Number(),
  log_path: Nullable(Type.String()),
  supervision: SupervisionSchema,
  listening: Type.Optional(Nullable(Type.Array(Type.Integer()))),
  start_stage: Type.Optional(StartStageSchema),
});

export const ListResultSchema = Type.Object({
  operation: Type.Literal("list_sessions"),
  active_count: Type.Integer(),
  completed_count: Type.Integer(),
  just_exited_count: Type.Integer(),
  starting_counts: Type.Optional(Type.Object({ waiting_for_thread: Type.Integer(), booting: Type.Integer(), forking: Type.Integer() })),
  sessions: Type.Array(SessionEntrySchema),
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

// ── Text for the model ──────────────────────────────────────────────────────────────────────────────────────────

export function supervisionLine(s: Supervision): string {
  return (
    `supervision: state=${s.state} stop_reason=${s.stop_reason ?? "none"} deadline_utc=${s.deadline_utc ?? "none"} ` +
    `quiet_ms=${s.quiet_ms ?? "none"} log_bytes=${s.log_bytes} log_truncated=${s.log_truncated} cleanup=${s.cleanup}` +
    (s.stalled ? " stalled=true" : "") +
    (s.waiting_for_input ? " waiting_for_input=true" : "")
  );
}

export function endingPhrase(r: {
  status: ProcessStatus;
  exit_code?: number | null;
  signal?: string | null;
  failure?: Failure | null;
  start_stage?: StartStage;
}): string {
  switch (r.status) {
    case "starting":
      return `${r.start_stage ? startingStatus(r.start_stage) : "starting"} (its process does not exist yet)`;
    case "running":
      return "running";
    case "exited":
      return r.exit_code !== null && r.exit_code !== undefined ? `exited with code ${r.exit_code}` : `exited on signal ${r.signal ?? "unknown"}`;
    case "stopped":
      return `stopped${r.signal ? ` (${r.signal})` : ""}`;
    case "timed_out":
      return `timed out: ${r.failure?.message ?? "hard lifetime elapsed"}`;
    case "failed":
      return `failed (${r.failure?.reason ?? "unknown"}): ${r.failure?.message ?? ""}`;
  }
}

const WAIT_WORDS: Record<WaitStatus, string> = {
  snapshot: "immediate read of unread output",
  completed: "the process has ended",
  deadline: "the tool wait ended; this is not a process timeout, the job keeps running",
  cancelled: "the call was cancelled; the job keeps running",
  steered: "returned early for the user's new message; the job keeps running",
  ready: "returned when the job became ready; it keeps running",
};

export function readyLine(r: ReadyResult): string {
  const parts = [`ready: status=${r.status} elapsed_ms=${Math.round(r.elapsed_ms)}`];
  if (r.port !== undefined) parts.push(`port=${r.port}`);
  if (r.matched !== undefined) parts.push(`matched=${JSON.stringify(oneLine(r.matched, 200))}`);
  if (r.captures !== undefined) parts.push(`captures=${JSON.stringify(r.captures)}`);
  return parts.join(" ");
}

export function processResultText(r: ProcessResult): string {
  const head = r.running
    ? `Process running with session_id ${r.session_id} (${r.operation}).`
    : r.status === "starting"
      ? `Process starting with session_id ${r.session_id} (${r.operation}): it does not exist yet${r.start_stage ? ` (stage: ${START_STAGE_WORDS[r.start_stage]})` : ""}.`
      : `Process ${endingPhrase(r)} (${r.operation}).`;
  const lines = [
    head,
    `wait: mode=${r.wait_mode} status=${r.wait_status} — ${WAIT_WORDS[r.wait_status]}`,
    ...(r.ready ? [readyLine(r.ready)] : []),
    supervisionLine(r.supervision),
    `log_path: ${r.log_path ?? "none"}`,
    `elapsed_ms: ${Math.round(r.elapsed_ms)} · on_exit: ${r.on_exit} · output_bytes_total: ${r.output_bytes_total}`,
  ];
  for (const note of r.notes) lines.push(`note: ${note}`);
  const omitted = r.output_omitted_bytes > 0 ? `, ${r.output_omitted_bytes} omitted` : "";
  const replay = r.output_replayed ? " (output_replayed: saved final read from a codemode script)" : "";
  const redacted = r.redactions ? `, redactions: ${r.redactions}` : "";
  lines.push(`output (${r.output_bytes} bytes${omitted}, output_rendered: ${r.output_rendered}${redacted})${replay}:`);
  return `${lines.join("\n")}\n${escapeControls(r.output)}`;
}

export function listText(r: ListResult): string {
  const lines = [`active_count: ${r.active_count} · completed_count: ${r.completed_count} (just_exited_count: ${r.just_exited_count})`];
  const starting = r.starting_counts ? startingSummary(r.starting_counts) : null;
  if (starting !== null) lines.push(starting);
  if (r.sessions.length === 0) lines.push("No shell sessions.");
  for (const s of r.sessions) {
    lines.push(
      `session_id ${s.session_id}: ${endingPhrase(s)} · ${s.tty ? "pty" : "pipes"} · on_exit=${s.on_exit} · ` +
        `output_bytes_total=${s.output_bytes_total} (unread ${s.output_pending_bytes}) · elapsed_ms=${Math.round(s.elapsed_ms)} · ` +
        `${s.running || s.status === "starting" ? "" : s.collected ? "collected · " : "not collected · "}cmd: ${oneLine(s.cmd, COMMAND_PREVIEW_CHARS)}`,
      `  ${supervisionLine(s.supervision)}`,
      ...(s.listening !== undefined && s.running ? [`  listening: ${s.listening === null ? "unknown" : `[${s.listening.join(", ")}]`}`] : []),
      `  log_path: ${s.log_path ?? "none"}`,
    );
  }
  return lines.join("\n");
}

export function setOnExitText(r: SetOnExitResult): string {
  const words: Record<SetOnExitResult["effect"], string> = {
    armed: "a follow-up notification will be sent when it ends unobserved",
    disarmed: "no notification will be sent",
    unchanged: "nothing changed",
    already_notified: "a notification was already handed to Pi and cannot be recalled",
  };
  return `session_id ${r.session_id}: on_exit=${r.on_exit} (was ${r.previous_on_exit}); ${words[r.effect]}. The job is ${r.running ? "still running" : endingPhrase(r)}.`;
}

export function killText(r: KillResult): string {
  return [
    `kill_session ${r.session_id} (${r.signal}): killed=${r.killed} escalated=${r.escalated}${r.already_exited ? " already_exited=true" : ""}. ${r.message}`,
    supervisionLine(r.supervision),
    `log_path: ${r.log_path ?? "none"}`,
  ].join("\n");
}
