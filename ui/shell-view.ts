/**
 * What the shell tools' transcript rows (ui/shell-rows.ts) draw: each tool's stored result and the wake message's
 * details, as far as the rows read them. The host hands the stored `details` over as they are
 * (host/console/shell-renderers.ts, where the compiler checks that every result the tools store fits these), so a
 * restored session draws what it drew. A restored session's details may come from an older version: a field older
 * results lack is optional here, and the words the tools store (states, reasons, modes) are strings the rows print.
 */

/** Where a job is or how it ended, as the tools say it (`running`, `exited`, `timed_out`, …). */
export interface ShellEnding {
  status: string;
  exit_code?: number | null;
  signal?: string | null;
}

/** A job's supervision fields, drawn in an expanded row. */
export interface SupervisionView {
  state: string;
  stop_reason: string | null;
  deadline_utc: string | null;
  quiet_ms: number | null;
  log_bytes: number;
  log_truncated: boolean;
  cleanup: string;
  stalled: boolean;
  waiting_for_input: boolean;
}

/** An exec_command or write_stdin result. */
export interface ProcessRowView extends ShellEnding {
  running: boolean;
  /** Present while the job runs. */
  session_id?: number;
  cmd: string;
  elapsed_ms: number;
  failure?: { reason: string; message: string } | null;
  wait_mode: string;
  wait_status: string;
  on_exit: string;
  tty: boolean;
  supervision: SupervisionView;
  log_path: string | null;
  notes: readonly string[];
  output: string;
  output_bytes: number;
  output_omitted_bytes: number;
  output_replayed: boolean;
  /** Absent from results stored before output was rendered. */
  output_rendered?: string;
}

/** One session of a list_sessions result. */
export interface SessionRowView extends ShellEnding {
  session_id: number;
  cmd: string;
  tty: boolean;
  running: boolean;
  on_exit: string;
  collected: boolean;
  elapsed_ms: number;
  output_bytes_total: number;
  output_pending_bytes: number;
  supervision: SupervisionView;
  listening?: readonly number[] | null;
  log_path: string | null;
}

/** A list_sessions result. */
export interface ListRowView {
  active_count: number;
  completed_count: number;
  sessions: readonly SessionRowView[];
}

/** A set_on_exit result. */
export interface SetOnExitRowView extends ShellEnding {
  session_id: number;
  /** Absent from results stored before set_on_exit carried the command. */
  cmd?: string;
  running: boolean;
  on_exit: string;
  previous_on_exit: string;
  effect: "armed" | "disarmed" | "unchanged" | "already_notified";
}

/** A kill_session result. */
export interface KillRowView {
  session_id: number;
  /** Absent from results stored before kill_session carried the command. */
  cmd?: string;
  signal: string;
  killed: boolean;
  escalated: boolean;
  already_exited: boolean;
  message: string;
  supervision: SupervisionView;
  log_path: string | null;
}

/** The wake message: the jobs that finished, and how many more there were. */
export interface WakeView {
  sessions: readonly (ShellEnding & {
    session_id: number;
    cmd: string;
    elapsed_ms: number;
    failure: string | null;
    log_path: string | null;
    log_truncated: boolean;
  })[];
  omitted: number;
}
