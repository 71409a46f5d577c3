/**
 * The text of every wake: a shell wake (ends batched with the other shell ends, and running shell jobs that look
 * stuck or ran away) and the watchdog's wake about a running monitor. They carry ids, exit status and log paths,
 * bounded in count and in command length, and a shell wake shows a few blocks of each job's evidence (its error-like
 * lines, rendered, redacted and bounded: host/evidence-text.ts), so that a failure's cause arrives with the news of it.
 * The output itself is collected with write_stdin. A monitor's report is its own text (host/monitor/report.ts).
 */
import { COMMAND_PREVIEW_CHARS, NOTICE_MAX_SESSIONS } from "../shell/limits.ts";
import { escapeControls, escapeText, oneLine } from "../safety/escape.ts";
import { evidenceLines, LINE_EVIDENCE } from "../evidence-text.ts";
import type { CompletionInfo, StuckAlert } from "./results.ts";

/** The custom message types of wakes: a shell wake, a monitor's report, the watchdog's wake about a monitor. */
export const WAKE_MESSAGE_TYPE = "shell-jobs-wake";
export const MONITOR_MESSAGE_TYPE = "pi-jobs.monitor";
export const MONITOR_WATCHDOG_TYPE = "pi-jobs.monitor-watchdog";

export function completionPhrase(c: Pick<CompletionInfo, "status" | "exitCode" | "signal" | "failureReason">): string {
  switch (c.status) {
    case "exited":
      return c.exitCode !== null ? `exited with code ${c.exitCode}` : `exited on signal ${c.signal ?? "unknown"}`;
    case "timed_out":
      return "timed out (hard lifetime reached)";
    case "stopped":
      return "stopped";
    case "failed":
      return `failed (${c.failureReason ?? "unknown"})`;
  }
}

export interface WakeDetails {
  sessions: {
    session_id: number;
    status: CompletionInfo["status"];
    exit_code: number | null;
    signal: string | null;
    failure: string | null;
    log_path: string | null;
    log_truncated: boolean;
    elapsed_ms: number;
    cmd: string;
    /** Present when the job was started in an earlier session of this Pi (before /new, /resume or /fork). */
    earlier_session?: true;
  }[];
  omitted: number;
  /** Running jobs that appear stuck (stalled or waiting for input); absent when none. */
  stuck?: { session_id: number; kind: StuckAlert["kind"]; prompt: string | null; tty: boolean; log_path: string | null; cmd: string; figures?: string }[];
}

/** A wake as sent to Pi: its number in this Pi, by which its delivery names the completions it carried. */
export interface SentWakeDetails extends WakeDetails {
  wake: number;
}

/** Longest prompt quoted in a wake: enough to recognise it, never a stream of output. */
const PROMPT_PREVIEW_CHARS = 80;

/** One line per stuck job: what it seems to wait for and what to do about it. */
export function stuckLine(a: StuckAlert): string {
  const what =
    a.kind === "waiting_for_input"
      ? `appears to be waiting for input: \`${oneLine(a.prompt ?? "", PROMPT_PREVIEW_CHARS)}\`; answer with write_stdin or kill it` +
        (a.tty ? "" : " (pipes: a program that reads a terminal needs tty: true; otherwise answer on stdin)")
      : "appears stalled (no output and under 1 % CPU for its stall_seconds); check it with write_stdin or kill it";
  return `- session_id ${a.sessionId} ${what} · log_path: ${a.logPath ?? "none"} · cmd: ${oneLine(a.cmd, COMMAND_PREVIEW_CHARS)}`;
}

/** One line per runaway job: its figures, the watchdog's thresholds it passed, and what to do. */
export function runawayLine(a: StuckAlert): string {
  return (
    `- session_id ${a.sessionId} uses ${a.runaway?.figures ?? "more than the watchdog allows"}; it keeps running (the watchdog never stops a job): ` +
    `check it with write_stdin, or kill_session it if it ran away · log_path: ${a.logPath ?? "none"} · cmd: ${oneLine(a.cmd, COMMAND_PREVIEW_CHARS)}`
  );
}

/** Output text under a wake's job line, control characters escaped. */
const indented = (text: string, by: string): string[] => escapeControls(text).split("\n").map((line) => `${by}${line}`);

/**
 * `piSession` is the session current when the wake goes out (ShellState.piSession): a job started in an earlier one
 * (the user switched with /new, /resume or /fork while it ran) is said to be so, since this conversation never saw it
 * start.
 */
export function wakeMessage(
  batch: readonly CompletionInfo[],
  every: readonly StuckAlert[] = [],
  piSession = 0,
): { content: string; details: WakeDetails } {
  const shown = batch.slice(0, NOTICE_MAX_SESSIONS);
  const runaways = every.filter((a) => a.kind === "runaway").slice(0, NOTICE_MAX_SESSIONS);
  const alerts = every.filter((a) => a.kind !== "runaway");
  const shownAlerts = [...alerts.slice(0, NOTICE_MAX_SESSIONS), ...runaways];
  const lines: string[] = [];
  if (runaways.length > 0) {
    lines.push(`[shell-jobs] ${runaways.length === 1 ? "A running job uses" : `${runaways.length} running jobs use`} more than the watchdog allows:`);
    for (const a of runaways) lines.push(runawayLine(a));
  }
  if (alerts.length > 0) {
    lines.push(`[shell-jobs] ${alerts.length === 1 ? "A running job" : `${alerts.length} running jobs`} may be stuck:`);
    for (const a of alerts.slice(0, NOTICE_MAX_SESSIONS)) lines.push(stuckLine(a));
    if (alerts.length > NOTICE_MAX_SESSIONS) lines.push(`- … and ${alerts.length - NOTICE_MAX_SESSIONS} more (see list_sessions)`);
  }
  if (batch.length === 0) {
    return { content: lines.join("\n"), details: { sessions: [], omitted: 0, stuck: stuckDetails(shownAlerts) } };
  }
  lines.push(
    `[shell-jobs] ${batch.length === 1 ? "A background job" : `${batch.length} background jobs`} armed with on_exit "wake" finished:`,
  );
  const earlier = (c: CompletionInfo): boolean => c.piSession < piSession;
  for (const c of shown) {
    lines.push(
      `- session_id ${c.sessionId}${earlier(c) ? " (started in an earlier session)" : ""}: ${completionPhrase(c)} after ${Math.round(c.elapsedMs)} ms · log_path: ${c.logPath ?? "none"}` +
        `${c.logTruncated ? " (truncated)" : ""} · cmd: ${oneLine(c.cmd, COMMAND_PREVIEW_CHARS)}`,
    );
    const evidence = evidenceLines(c.evidence, LINE_EVIDENCE);
    if (evidence.length > 0) lines.push("  evidence:", ...indented(evidence.join("\n"), "    "));
    if (c.lastLines !== "") lines.push("  last lines:", ...indented(c.lastLines, "    "));
  }
  if (batch.length > shown.length) lines.push(`- … and ${batch.length - shown.length} more (see list_sessions)`);
  lines.push(
    'Collect the final output with write_stdin {"session_id": N, "yield_time_ms": 0} (or read log_path), then continue only if the task still needs it.',
  );
  return {
    content: lines.join("\n"),
    details: {
      sessions: shown.map((c) => ({
        session_id: c.sessionId,
        status: c.status,
        exit_code: c.exitCode,
        signal: c.signal,
        failure: c.failureReason,
        log_path: c.logPath,
        log_truncated: c.logTruncated,
        elapsed_ms: Math.round(c.elapsedMs),
        cmd: oneLine(c.cmd, COMMAND_PREVIEW_CHARS),
        ...(earlier(c) ? { earlier_session: true as const } : {}),
      })),
      omitted: batch.length - shown.length,
      ...(shownAlerts.length > 0 ? { stuck: stuckDetails(shownAlerts) } : {}),
    },
  };
}

function stuckDetails(alerts: readonly StuckAlert[]): NonNullable<WakeDetails["stuck"]> {
  return alerts.map((a) => ({
    session_id: a.sessionId,
    kind: a.kind,
    prompt: a.prompt === null ? null : oneLine(a.prompt, PROMPT_PREVIEW_CHARS),
    tty: a.tty,
    log_path: a.logPath,
    cmd: oneLine(a.cmd, COMMAND_PREVIEW_CHARS),
    ...(a.runaway !== undefined ? { figures: a.runaway.figures } : {}),
  }));
}

/** The watchdog's wake about a running monitor: metadata only; its report still comes when it ends. */
export function monitorWatchdogText(monitorId: string, description: string, figures: string): string {
  return [
    `[monitor] ${monitorId} (${escapeText(description)}) uses ${figures}.`,
    `It keeps running (the watchdog never stops a job) and its report still comes when it ends; monitor_stop {"monitor_id":"${monitorId}"} stops it if it ran away.`,
  ].join("\n");
}
