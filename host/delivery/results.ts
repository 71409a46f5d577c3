/**
 * What the delivery machine carries to the model, for every kind of job: a shell job's end (batched with the other
 * shell ends into one wake), a running shell job that looks stuck or ran away, and a monitor's message of its own (its
 * terminal report, or the watchdog's wake about it while it runs). Every job is named as the model and the console
 * name it: `job_N` for shell session N, `monitor_N` for a monitor.
 */
import type { Evidence } from "../../mailbox/evidence.ts";
import type { MonitorTerminalResult } from "../monitor/schemas.ts";

/** A job's name as the model sees it: `job_N` (shell session N) or `monitor_N`. One namespace for both kinds. */
export type JobName = string;

export function shellJobName(sessionId: number): JobName {
  return `job_${sessionId}`;
}

export interface CompletionInfo {
  sessionId: number;
  cmd: string;
  /** The Pi session the job was started in (ResultLedger.piSession): a wake delivered in a later one says so. */
  piSession: number;
  status: "exited" | "failed" | "timed_out" | "stopped";
  exitCode: number | null;
  signal: string | null;
  failureReason: string | null;
  logPath: string | null;
  logTruncated: boolean;
  elapsedMs: number;
  endedAtEpochMs: number;
  /** What went wrong wherever the job printed it (mailbox/evidence.ts): a wake shows a few blocks of it. */
  evidence: Evidence;
  /** The last lines of its final read, folded (host/last-lines.ts); empty when it printed nothing or was read. */
  lastLines: string;
}

/** A running shell job that appears stuck: one per episode (output ends an episode; a new one may follow). */
export interface StuckAlert {
  sessionId: number;
  cmd: string;
  kind: "stalled" | "waiting_for_input" | "runaway";
  /** The prompt it shows, for waiting_for_input. */
  prompt: string | null;
  tty: boolean;
  logPath: string | null;
  /**
   * For a runaway (the watchdog's, README "Resource limits and the watchdog"): its figures when the episode was heard
   * of, and when (monotonic ms); a read of the job after that owes no wake.
   */
  runaway?: { figures: string; noticedAt: number };
}

export interface MonitorDetails {
  description: string;
  monitorId: string;
  result: MonitorTerminalResult;
}

/** What a watchdog wake carries for the transcript: which monitor, and its figures against the thresholds. */
export interface WatchdogDetails {
  description: string;
  monitorId: string;
  figures: string;
}

/** One message for the model about one monitor: its terminal report, or a watchdog wake about it while it runs. */
export type MonitorMessage = { kind: "report"; content: string; details: MonitorDetails } | { kind: "watchdog"; content: string; details: WatchdogDetails };

/** A result owed to the model once, by kind: how it travels differs (a shell end batched, a monitor's alone). */
export type DueResult = { kind: "shell"; completion: CompletionInfo } | { kind: "monitor"; report: MonitorMessage & { kind: "report" }; piSession: number };

/** A wake about a running job, owed once per episode. */
export type DueAlert = { kind: "shell"; alert: StuckAlert } | { kind: "monitor"; watchdog: MonitorMessage & { kind: "watchdog" } };

export function nameOfResult(result: DueResult): JobName {
  return result.kind === "shell" ? shellJobName(result.completion.sessionId) : result.report.details.monitorId;
}

export function nameOfAlert(alert: DueAlert): JobName {
  return alert.kind === "shell" ? shellJobName(alert.alert.sessionId) : alert.watchdog.details.monitorId;
}
