/**
 * The shell tools' results as text for the model. Pure: the text is a function of the structured value
 * (host/shell/result.ts), so the model reads what codemode scripts receive. Apart from the result types and their
 * schemas because the wording is its own concern: every line here is what the model reads.
 */
import type { Failure, ProcessStatus, Supervision } from "./supervision.ts";
import { escapeControls, oneLine } from "../safety/escape.ts";
import { COMMAND_PREVIEW_CHARS } from "./limits.ts";
import type { StartStage } from "../runtime/api.ts";
import { START_STAGE_WORDS, startingStatus, startingSummary } from "../../shared/start-stage.ts";
import type { KillResult, ListResult, ProcessResult, ReadyResult, SetOnExitResult } from "./result.ts";
import { usageLine } from "../runtime/usage-line.ts";

export function supervisionLine(s: Supervision): string {
  return (
    `supervision: state=${s.state} stop_reason=${s.stop_reason ?? "none"} deadline_utc=${s.deadline_utc ?? "none"} ` +
    `quiet_ms=${s.quiet_ms ?? "none"} log_bytes=${s.log_bytes} log_truncated=${s.log_truncated} cleanup=${s.cleanup}` +
    (s.stalled ? " stalled=true" : "") +
    (s.waiting_for_input ? " waiting_for_input=true" : "") +
    (s.runaway ? " runaway=true" : "")
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

const WAIT_WORDS: Record<ProcessResult["wait_status"], string> = {
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
    ...(r.usage ? [usageLine(r.usage)] : []),
    `log_path: ${r.log_path ?? "none"}`,
    `elapsed_ms: ${Math.round(r.elapsed_ms)} · on_exit: ${r.on_exit} · output_bytes_total: ${r.output_bytes_total}`,
  ];
  for (const note of r.notes) lines.push(`note: ${note}`);
  const omitted = r.output_omitted_bytes > 0 ? `, omitted_bytes: ${r.output_omitted_bytes}` : "";
  const folded = r.output_folded_lines > 0 ? `, folded_lines: ${r.output_folded_lines}` : "";
  const replay = r.output_replayed ? " (output_replayed: saved final read from a codemode script)" : "";
  const redacted = r.redactions ? `, redactions: ${r.redactions}` : "";
  lines.push(`output (${r.output_bytes} bytes${omitted}${folded}, output_rendered: ${r.output_rendered}${redacted})${replay}:`);
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
        `output_bytes_total=${s.output_bytes_total} (unread ${s.output_pending_bytes}) · ` +
        `${s.evidence_lines > 0 ? `evidence_lines=${s.evidence_lines} · ` : ""}elapsed_ms=${Math.round(s.elapsed_ms)} · ` +
        `${s.running || s.status === "starting" ? "" : s.collected ? "collected · " : "not collected · "}cmd: ${oneLine(s.cmd, COMMAND_PREVIEW_CHARS)}`,
      `  ${supervisionLine(s.supervision)}`,
      ...(s.usage ? [`  ${usageLine(s.usage)}`] : []),
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
