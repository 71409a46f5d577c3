/**
 * Metadata-only texts about completions: the wake message and the codemode receipt. Neither carries raw output —
 * only ids, exit status and log paths, bounded in count and in command length.
 */
import { COMMAND_PREVIEW_CHARS, NOTICE_MAX_SESSIONS } from "./limits.ts";
import { oneLine } from "./text-safety.ts";
import type { CompletionInfo } from "./wake-ledger.ts";

export const WAKE_MESSAGE_TYPE = "shell-jobs-wake";
export const RECEIPT_HEADER = "[shell-jobs results]";

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
  }[];
  omitted: number;
}

export function wakeMessage(batch: readonly CompletionInfo[]): { content: string; details: WakeDetails } {
  const shown = batch.slice(0, NOTICE_MAX_SESSIONS);
  const lines = [
    `[shell-jobs] ${batch.length === 1 ? "A background job" : `${batch.length} background jobs`} armed with on_exit "wake" finished:`,
  ];
  for (const c of shown) {
    lines.push(
      `- session_id ${c.sessionId}: ${completionPhrase(c)} after ${Math.round(c.elapsedMs)} ms · log_path: ${c.logPath ?? "none"}` +
        `${c.logTruncated ? " (truncated)" : ""} · cmd: ${oneLine(c.cmd, COMMAND_PREVIEW_CHARS)}`,
    );
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
      })),
      omitted: batch.length - shown.length,
    },
  };
}

export interface ReceiptLine {
  sessionId: number;
  /** "running", or a completion phrase. */
  state: string;
  running: boolean;
  logPath: string | null;
  /** The final output was collected in the script and can be read once more. */
  replayable: boolean;
  /** The session is no longer registered (stopped, evicted). */
  gone: boolean;
}

/** The receipt appended to the outermost tool result of a script that used shell jobs. */
export function receiptText(lines: readonly ReceiptLine[]): string {
  const shown = [...lines].sort((a, b) => a.sessionId - b.sessionId).slice(0, NOTICE_MAX_SESSIONS);
  const out = [RECEIPT_HEADER];
  for (const l of shown) {
    const how = l.running
      ? `running · poll with write_stdin {"session_id": ${l.sessionId}, "yield_time_ms": 0}`
      : l.replayable
        ? `${l.state} · final output replayable once with write_stdin {"session_id": ${l.sessionId}, "yield_time_ms": 0}`
        : l.gone
          ? `${l.state} · no longer registered; use log_path`
          : `${l.state} · collect with write_stdin {"session_id": ${l.sessionId}, "yield_time_ms": 0}`;
    out.push(`- session_id ${l.sessionId}: ${how} · log_path: ${l.logPath ?? "none"}`);
  }
  if (lines.length > shown.length) out.push(`- … and ${lines.length - shown.length} more (see list_sessions)`);
  return out.join("\n");
}
