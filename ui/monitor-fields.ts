/**
 * A monitor's facts as labelled fields, shared by the transcript bands and the /monitor console so both say the same
 * thing the same way. Order follows what a reader needs first: the verdict and what qualifies it (exit code, reason,
 * integrity warnings), then identity and payload, then the possibly long command and configuration.
 */
import type { DetailField, Tone } from "./views.ts";
import { duration } from "../shared/format.ts";
import type { MonitorResultView, StartView } from "./monitor-view.ts";

export const DEFAULT_COMPLETION = "match";
export const DEFAULT_TIMEOUT_MS = 600_000;

export function monitorTone(status: string): Tone {
  switch (status) {
    case "success":
      return "success";
    case "stopped":
      return "stopped";
    case "starting":
    case "running":
      return "pending";
    default:
      return "error";
  }
}

/** The process ended because the monitor ended it: its exit code describes the kill, not the command. */
function killedByMonitor(result: MonitorResultView): boolean {
  return result.stoppedBy === "match" || result.status === "timeout" || result.status === "stopped";
}

/** Exit code, signal, reason, stopped-by and integrity warnings: the facts that qualify the status. */
export function monitorHeadFields(result: MonitorResultView): DetailField[] {
  const fields: DetailField[] = [];
  if (result.stoppedBy === "match") {
    fields.push({ label: "Stopped by", value: "the success contract; later steps never ran", layout: "inline" });
  }
  if (result.status !== "success" && !killedByMonitor(result)) {
    if (result.exitCode !== null) fields.push({ label: "Exit code", value: String(result.exitCode), layout: "inline" });
    if (result.signal !== null) fields.push({ label: "Signal", value: result.signal, layout: "inline" });
  }
  if (result.reason !== null) fields.push({ label: "Reason", value: result.reason, layout: "inline" });
  if (result.resultParseError !== null) {
    fields.push({ label: "Warning", value: `result did not parse: ${result.resultParseError}`, layout: "inline" });
  }
  if (result.matchedTruncated) fields.push({ label: "Warning", value: "matched text was truncated", layout: "inline" });
  if (result.capturesTruncated) fields.push({ label: "Warning", value: "captures were truncated", layout: "inline" });
  if (result.outputTruncated) fields.push({ label: "Warning", value: "output tail was truncated", layout: "inline" });
  return fields;
}

/** Completion, result, captures and the matched line or output tail: the payload. */
export function monitorPayloadFields(result: MonitorResultView): DetailField[] {
  const fields: DetailField[] = [{ label: "Completion", value: result.completion, layout: "inline" }];
  if (result.hasResult) {
    fields.push({ label: "Result", value: JSON.stringify(result.result) ?? "null", layout: "inline", previewable: true });
  }
  for (const [name, value] of Object.entries(result.captures)) {
    if (name === "json" && result.hasResult) continue;
    fields.push({ label: `Capture ${name}`, value, layout: "inline", previewable: true });
  }
  if (result.matched !== null && !result.hasResult && Object.keys(result.captures).length === 0) {
    fields.push({ label: "Matched", value: result.matched, layout: "inline", previewable: true });
  }
  if (result.status !== "success" && result.output.length > 0) {
    const tail = result.output.map((line) => {
      const count = line.count > 1 ? ` ×${line.count}` : "";
      return `[${line.source}${count}${line.clipped ? " clipped" : ""}] ${line.text}`;
    });
    fields.push({ label: "Output", value: tail.join("\n"), layout: "block" });
  }
  return fields;
}

/**
 * The start band's expanded fields: only what a default start would not already say. A non-default completion and a
 * non-default timeout each get a field; then the command (highlighted) and the conditions.
 */
export function startFields(start: StartView): DetailField[] {
  const fields: DetailField[] = [];
  if (start.completion !== DEFAULT_COMPLETION) fields.push({ label: "Completion", value: start.completion, layout: "inline" });
  if (start.timeoutMs !== DEFAULT_TIMEOUT_MS) fields.push({ label: "Timeout", value: duration(start.timeoutMs), layout: "inline" });
  fields.push({ label: "Command", value: start.command, layout: "code" });
  fields.push({ label: "Success condition", value: start.resultPattern, layout: "inline" });
  if (start.failurePattern !== null) fields.push({ label: "Failure condition", value: start.failurePattern, layout: "inline" });
  return fields;
}

/** The console's configuration block: every setting, defaults included, after the command. */
export function monitorConfigFields(start: StartView): DetailField[] {
  return [
    { label: "Command", value: start.command, layout: "code" },
    { label: "Success condition", value: start.resultPattern, layout: "inline" },
    ...(start.failurePattern !== null ? [{ label: "Failure condition", value: start.failurePattern, layout: "inline" as const }] : []),
    { label: "Completion mode", value: start.completion, layout: "inline" },
    { label: "Timeout", value: duration(start.timeoutMs), layout: "inline" },
  ];
}
