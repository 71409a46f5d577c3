/**
 * wait_jobs' result as text for the model: one line per job (with its last output lines indented below it), then the
 * summary. Pure, a function of the structured result (host/wait/result.ts).
 */
import { escapeControls, escapeJson } from "../safety/escape.ts";
import { elapsed } from "../../shared/format.ts";
import type { Collected, WaitEndReason, WaitJobLine, WaitJobsResult } from "./result.ts";
import { usageLine } from "../runtime/usage-line.ts";

const WAIT_WORDS: Record<WaitEndReason, string> = {
  all_ended: "every job has ended",
  one_ended: "a job has ended",
  failed: "a job failed; the others keep running",
  nothing_to_wait_for: "no job left to collect",
  timeout: "timeout_ms passed; the jobs keep running",
  steered: "returned early for the user's new message; the jobs keep running",
  cancelled: "the call was cancelled; nothing was collected and the jobs keep running",
};

const COLLECTED_WORDS: Partial<Record<Collected, string>> = {
  earlier: "collected earlier (write_stdin replays a shell job's read once)",
  wake: "its wake was sent before this call",
  own_call: "reported by its own monitor_start call",
  none: "stopped; it reports nothing",
};

function outcome(l: WaitJobLine): string {
  if (l.verdict === "running") return "running";
  if (l.kind === "shell" && l.status === "exited") return l.exit_code !== null ? `exited ${l.exit_code}` : "exited on a signal";
  if (l.kind === "monitor" && l.exit_code !== null && l.verdict === "failure") return `${l.status} exit ${l.exit_code}`;
  return l.status;
}

export function jobLineText(l: WaitJobLine): string {
  const facts = [`${l.id} ${outcome(l)}`];
  if (l.label !== "") facts.push(l.label);
  if (l.duration_ms > 0) facts.push(elapsed(l.duration_ms));
  if (l.reason !== undefined) facts.push(`reason=${l.reason}`);
  if (l.captures !== undefined) facts.push(`captures=${escapeJson(l.captures)}`);
  if (l.result !== undefined) facts.push(`result=${escapeJson(l.result)}`);
  if (l.redactions) facts.push(`redactions=${l.redactions}`);
  if (l.usage !== undefined) facts.push(usageLine(l.usage));
  const said = COLLECTED_WORDS[l.collected];
  if (said !== undefined) facts.push(said);
  if (l.log_path !== null) facts.push(`log ${l.log_path}`);
  const lines = [facts.join(" · ")];
  if (l.evidence !== undefined) {
    lines.push("  evidence:");
    for (const line of escapeControls(l.evidence).split("\n")) lines.push(`    ${line}`);
  }
  if (l.output !== undefined) {
    if (l.output_lines_omitted) lines.push(`  … ${l.output_lines_omitted} earlier lines`);
    for (const line of escapeControls(l.output).split("\n")) lines.push(`  ${line}`);
  }
  return lines.join("\n");
}

export function waitJobsText(r: WaitJobsResult): string {
  const lines = r.jobs.map(jobLineText);
  lines.push(r.summary);
  const running = r.running.length > 0 ? ` · still running: ${r.running.join(", ")}` : "";
  lines.push(`wait: ${r.wait_status} (${WAIT_WORDS[r.wait_status]}) · waited ${elapsed(r.waited_ms)}${running}`);
  return lines.join("\n");
}
