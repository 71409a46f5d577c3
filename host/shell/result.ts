/**
 * The shapes the tools answer with, as structured data: the tool results' details and codemode's structuredContent.
 * Their output schemas are host/shell/result-schemas.ts, and their text for the model, a function of these values,
 * is host/shell/result-text.ts.
 */
import type { Cleanup, Failure, ProcessStatus, Supervision } from "./supervision.ts";
import type { WaitMode } from "./waits.ts";
import type { OutputRendering } from "../../mailbox/constants.ts";
import type { StartStage } from "../runtime/api.ts";
import type { StartingCounts } from "../../shared/start-stage.ts";
import type { UsageFields } from "../runtime/usage-line.ts";

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
  /** Bytes left out between head and tail (their digest stands in their place): raw bytes for "text", rendered bytes for "terminal". */
  output_omitted_bytes: number;
  /** Lines of output inside folds (`⟪×N⟫` lines, see the README); 0 for a raw read. */
  output_folded_lines: number;
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
  /** How the call's wait ended (not the job's status): `completed` only when this answer reports the job's end. */
  wait_status: "snapshot" | "completed" | "deadline" | "cancelled" | "steered" | "ready";
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
  /** The job's process tree as last sampled (host/runtime/usage-line.ts); absent before the first sample. */
  usage?: UsageFields;
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
  /** Error-like lines the job has printed so far; wait_jobs and a wake show them with what belongs to each. */
  evidence_lines: number;
  started_utc: string;
  elapsed_ms: number;
  log_path: string | null;
  supervision: Supervision;
  /** TCP ports the job's processes listen on (running jobs; null where they cannot be listed). */
  listening?: number[] | null;
  /** The job's process tree as last sampled (host/runtime/usage-line.ts); absent before the first sample. */
  usage?: UsageFields;
  /** Present while the job is starting: why its process does not exist yet. */
  start_stage?: StartStage;
  /** Present when the job was started in an earlier session of this Pi (before /new, /resume or /fork). */
  earlier_session?: true;
  /** A persisted job (persist: true): its registry entry, the Pi that started it, and whether this Pi adopted it. */
  persisted?: PersistedView;
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
  /** Persisted jobs of this directory that another Pi owns: listed, never adopted nor stopped from here. */
  owned_by_another_pi?: { owner_pid: number | null; jobs: { cmd: string; started_utc: string; persisted: PersistedView }[] };
}

export interface PersistedView {
  entry: string;
  started_by_pid: number;
  adopted?: true;
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
