/**
 * The model-facing terminal report of a monitor: compact `key=value` lines, one fact per line, every value escaped.
 *
 * Line order (each line only when it carries something):
 *   Monitor: <description>   monitor_id=   status=   elapsed=          identity and verdict
 *   matched=   completion=   stopped_by=                               what decided, and what the status proves
 *   result_parse_error=   matched_truncated=   captures_truncated=   captures_redacted=   output_truncated=
 *                                                                      integrity warnings, before the data they qualify
 *   result=   capture.NAME=   capture_alias.OTHER=FIRST                the payload (or payload_encoding/payload_rle)
 *   expected=   exit_code=   signal=   reason=   timeout_ms=           why it did not pass
 *   evidence=[…]                                                       error-like lines of the whole run not in the tail
 *   output=[…]                                                         the tail's newest 40 lines, folded exactly
 *   next=                                                              the one next move, for runs that did not pass
 *
 * Choices the spec leaves to reading:
 * - The spec's five worked cases predate two later rules it states: "every result names the completion mode that
 *   produced it" and "a run that did not pass ends with one next= line". Reports follow the later rules, so case 1
 *   gains `completion=exit`, cases 2–4 gain `completion=` and `next=`, and default reports carry `monitor_id=`.
 * - `exit_code=0` is not repeated on a default exit-mode success: `completion=exit` already says the process exited 0.
 * - A compact direct success whose data is intact (`compact=true`) drops the label, the id, the elapsed time, the
 *   completion line and `matched=` (the model wrote the pattern; Pi's tool-call id correlates the reply). It keeps
 *   `status=success`, then the proof of what the status means — `stopped_by=match` when the contract cut the run
 *   short, else `exit_code=0` — then the payload. Everything dropped stays in the structured result.
 * - Exit codes and signals the monitor caused itself (contract match, timeout, stop) are omitted: they describe the
 *   kill, not the command.
 * - `matched=` is evidence only when nothing more specific is shown: a result or captures already say what matched.
 * - The output tail is oldest first, as the actor records it. Case 2's stderr line comes first because Python flushes
 *   its piped stdout only at exit, after the unbuffered stderr line.
 * - The tail is folded (shared/fold.ts) only where a fold decodes to exactly the lines it replaces: the tail is the
 *   model's only copy of them. Evidence, the matched line and the last lines stay verbatim; the structured result
 *   keeps every line as recorded.
 * - `evidence=` holds what went wrong wherever the run printed it (make's first error near the start, a traceback in
 *   the middle of a log): the error-like lines the tail does not show, each `N: text` with N its line in the log
 *   (host/evidence-text.ts). It is there for every status, a success included, and only when there is some, so a
 *   clean success does not grow; `next=` then names the first of them.
 */
import type { MonitorOutcome } from "../../mailbox/monitor.ts";
import { NO_EVIDENCE, type Evidence } from "../../mailbox/evidence.ts";
import { reportTail } from "../../shared/report-tail.ts";
import { evidenceLines, firstError, REPORT_EVIDENCE } from "../evidence-text.ts";
import type { LimitTrip } from "../../mailbox/result.ts";
import { elapsed } from "../../shared/format.ts";
import { escapeJson, escapeText } from "../safety/escape.ts";
import { compactPayloadLines } from "./rle.ts";
import type { MonitorStartOutput, MonitorTerminalResult } from "./schemas.ts";

export interface ReportInput {
  monitorId: string;
  description: string;
  outcome: MonitorOutcome;
  elapsedMs: number;
  timeoutMs: number;
  /** The caller asked for `compact=true`. */
  compact: boolean;
  /** The report is the tool call's own result, not an asynchronous wake message. */
  direct: boolean;
  /** The result pattern, shown when the command finished without printing it. */
  expected: string;
  /** What went wrong wherever the run printed it (the actor's evidence, without the lines of the tail). */
  evidence: Evidence;
  /** The limit that stopped the run, if one did: the report says the peak that passed it. */
  limit?: LimitTrip | null;
  /** Where the whole run is, for a `next=` step when no line of it looked like an error. */
  logPath?: string | null;
}

const MIB = 1024 * 1024;

/** `peak_rss_mb=231 limit=memory_mb:200`: the figure that passed the limit, beside the limit as the model set it. */
export function limitLine(trip: LimitTrip): string {
  switch (trip.cause) {
    case "memory_limit":
      return `peak_rss_mb=${Math.round(trip.peak / MIB)} limit=memory_mb:${Math.round(trip.limit / MIB)}`;
    case "cpu_limit":
      return `cpu_seconds_used=${(trip.peak / 1000).toFixed(1)} limit=cpu_seconds:${trip.limit / 1000}`;
    case "process_limit":
      return `peak_processes=${trip.peak} limit=processes:${trip.limit}`;
  }
}

/** `33ms` under a second, `8.4s` under a minute, then `2m05s`, `1h02m03s`: the same figures the UI shows. */
export const formatElapsed: (elapsedMs: number) => string = elapsed;

/**
 * A success whose data can be used as is: nothing failed to parse and no capture was clipped. The diagnostic tail
 * does not count: a passing run carries its evidence (result, captures, match), not a tail, so a noisy success whose
 * tail overflowed is still complete.
 */
export function isValidSuccess(outcome: MonitorOutcome): boolean {
  return outcome.status === "success" && outcome.resultParseError === null && !outcome.capturesTruncated;
}

/** The process ended because the monitor ended it, so its exit code or signal says nothing about the command. */
function killedByMonitor(outcome: MonitorOutcome): boolean {
  return outcome.stoppedBy === "match" || outcome.status === "timeout" || outcome.status === "stopped";
}

function showsMatched(outcome: MonitorOutcome): boolean {
  return (
    outcome.matched !== null &&
    (outcome.status === "success" || outcome.status === "failure") &&
    !outcome.hasResult &&
    Object.keys(outcome.captures).length === 0
  );
}

/**
 * `result=`, the distinct `capture.NAME=` values, then `capture_alias.OTHER=FIRST` for captures whose original string
 * equals an earlier one. A capture equal to the visible `result=` serialisation aliases `json`.
 */
export function payloadLines(outcome: MonitorOutcome): string[] {
  const lines: string[] = [];
  const aliases: string[] = [];
  const firstByValue = new Map<string, string>();
  if (outcome.hasResult) {
    lines.push(`result=${escapeJson(outcome.result)}`);
    const visible = JSON.stringify(outcome.result);
    if (visible !== undefined) firstByValue.set(visible, "json");
  }
  for (const [name, value] of Object.entries(outcome.captures)) {
    if (name === "json" && outcome.hasResult) continue;
    const first = firstByValue.get(value);
    if (first !== undefined) {
      aliases.push(`capture_alias.${escapeText(name)}=${escapeText(first)}`);
    } else {
      firstByValue.set(value, name);
      lines.push(`capture.${escapeText(name)}=${escapeText(value)}`);
    }
  }
  return [...lines, ...aliases];
}

function integrityLines(outcome: MonitorOutcome): string[] {
  const lines: string[] = [];
  if (outcome.resultParseError !== null) lines.push(`result_parse_error=${escapeText(outcome.resultParseError)}`);
  if (outcome.matchedTruncated && showsMatched(outcome)) lines.push("matched_truncated=true");
  if (outcome.capturesTruncated) lines.push("captures_truncated=true");
  if (outcome.capturesRedacted) lines.push("captures_redacted=true");
  // The tail is shown only for runs that did not pass, and so is the warning that it was cut.
  if (outcome.outputTruncated && outcome.status !== "success") lines.push("output_truncated=true");
  return lines;
}

/** The payload block, run-length encoded when the caller opted in and it pays off. */
function payloadBlock(outcome: MonitorOutcome, compact: boolean): string[] {
  const lines = payloadLines(outcome);
  if (!compact || lines.length === 0) return lines;
  return compactPayloadLines(lines.join("\n")) ?? lines;
}

/** The agent's one next move for a run that did not pass; null for a usable success. */
export function nextStep(outcome: MonitorOutcome, evidence: Evidence = NO_EVIDENCE, logPath: string | null = null): string | null {
  const found = firstError(evidence);
  switch (outcome.status) {
    case "success":
      return outcome.resultParseError === null
        ? null
        : "the json group did not hold usable JSON; fix what the command prints, then rerun";
    case "result_missing":
      return found === null
        ? "the command ended without printing result_pattern; fix its final sentinel or the pattern, then rerun"
        : `the command ended without printing result_pattern; see evidence (${found}), fix that or the sentinel, then rerun`;
    case "timeout":
      return "rerun with a larger timeout_ms only if the work was progressing; otherwise look for a hang";
    case "stopped":
      return "stopped before a result; rerun only if the result is still needed";
    case "failure":
      break;
  }
  switch (outcome.reason) {
    case "invalid_json_result":
      return "make the json group capture complete valid JSON, then rerun";
    case "matcher_line_limit":
      return "a line exceeded the 64 KiB match limit; print a short sentinel line instead, then rerun";
    case "matcher_queue_limit":
      return "output outran matching; reduce its volume or filter it line-buffered, then rerun";
    case "matcher_error":
      return "a pattern could not be evaluated; simplify result_pattern or failure_pattern, then rerun";
    case "log_quota":
      return "output exceeded the log quota; reduce its volume, then rerun";
    case "stalled":
      return "it printed nothing and used no CPU for stall_seconds; find what it waits for in output, fix that, then rerun";
    case "waiting_for_input":
      return "it stopped at a prompt a monitor cannot answer; make the command non-interactive (a flag, env or stdin file), or run it with exec_command tty:true";
    case "memory_limit":
      return "its processes passed limits.memory_mb; find what grows (output, a leak, too many workers), fix it or raise the limit, then rerun";
    case "cpu_limit":
      return "its processes used up limits.cpu_seconds; look for a busy loop in output, or raise the limit if the work needs it, then rerun";
    case "process_limit":
      return "its processes passed limits.processes (a fork loop?); fix what forks, or raise the limit, then rerun";
  }
  if (outcome.matched !== null || Object.keys(outcome.captures).length > 0) {
    return "fix the error the failure match reports, then rerun";
  }
  if (found !== null) return `see evidence (${found}), fix it, then rerun`;
  if (outcome.exitCode !== null && outcome.exitCode !== 0) {
    // Nothing looked like an error: the tail is what the run said last, the log all it said.
    const log = logPath === null ? "" : ` or earlier in ${logPath}`;
    return `find why it exited ${outcome.exitCode} in output${log}, fix it, then rerun`;
  }
  if (outcome.signal !== null) return `find why it was killed by ${outcome.signal}, fix it, then rerun`;
  return "fix the command or environment named by reason, then rerun";
}

/** The minimal reply for `compact=true`: Pi's tool-call id correlates it, so label, id and timing are dropped. */
function compactSuccess(input: ReportInput): string[] {
  const { outcome } = input;
  const lines = ["status=success"];
  // What the status proves, in the place the completion line would hold: the contract cut the run short, or the
  // process itself exited 0.
  if (outcome.stoppedBy !== null) lines.push(`stopped_by=${outcome.stoppedBy}`);
  else if (outcome.exitCode !== null) lines.push(`exit_code=${outcome.exitCode}`);
  // A payload with secrets replaced is still usable, but never silently different from what the command printed.
  if (outcome.capturesRedacted) lines.push("captures_redacted=true");
  lines.push(...payloadBlock(outcome, true));
  lines.push(...evidenceField(input.evidence));
  return lines;
}

/** `evidence=[…]` when the run printed anything error-like that the report does not show otherwise. */
function evidenceField(evidence: Evidence): string[] {
  const lines = evidenceLines(evidence, REPORT_EVIDENCE);
  return lines.length === 0 ? [] : [`evidence=${escapeJson(lines)}`];
}

export function buildReport(input: ReportInput): string {
  const { outcome } = input;
  if (input.compact && input.direct && isValidSuccess(outcome)) return compactSuccess(input).join("\n");

  const lines = [
    `Monitor: ${escapeText(input.description)}`,
    `monitor_id=${escapeText(input.monitorId)}`,
    `status=${outcome.status}`,
    `elapsed=${formatElapsed(input.elapsedMs)}`,
  ];
  if (showsMatched(outcome)) lines.push(`matched=${escapeText(outcome.matched ?? "")}`);
  lines.push(`completion=${outcome.completion}`);
  if (outcome.stoppedBy !== null) lines.push(`stopped_by=${outcome.stoppedBy}`);
  lines.push(...integrityLines(outcome));
  lines.push(...payloadBlock(outcome, input.compact));
  if (outcome.status === "result_missing") lines.push(`expected=${escapeText(input.expected)}`);
  if (outcome.status !== "success" && !killedByMonitor(outcome)) {
    if (outcome.exitCode !== null) lines.push(`exit_code=${outcome.exitCode}`);
    if (outcome.signal !== null) lines.push(`signal=${escapeText(outcome.signal)}`);
  }
  if (outcome.reason !== null) lines.push(`reason=${escapeText(outcome.reason)}`);
  if (input.limit) lines.push(limitLine(input.limit));
  if (outcome.status === "timeout") lines.push(`timeout_ms=${input.timeoutMs}`);
  lines.push(...evidenceField(input.evidence));
  if (outcome.status !== "success" && outcome.output.length > 0) {
    lines.push(`output=${escapeJson(reportTail(outcome.output, outcome.matched))}`);
  }
  const next = nextStep(outcome, input.evidence, input.logPath ?? null);
  if (next !== null) lines.push(`next=${next}`);
  return lines.join("\n");
}

/**
 * A report delivered in a later session than the monitor's start (after /new, /resume or /fork, which carry monitors
 * on): `started_in=earlier_session` right after its `monitor_id=` line, so the model knows the run is not this
 * session's.
 */
export function markEarlierSession(report: string): string {
  const lines = report.split("\n");
  const at = lines.findIndex((line) => line.startsWith("monitor_id="));
  lines.splice(at < 0 ? 1 : at + 1, 0, "started_in=earlier_session");
  return lines.join("\n");
}

/** The reply to a monitor-only batch in a UI session: the run is pending and its report will wake the agent. */
export function buildAcknowledgement(description: string, monitorId: string): string {
  return [`Monitor started: ${escapeText(description)}`, `monitor_id=${escapeText(monitorId)}`, "terminal_result=pending"].join(
    "\n",
  );
}

export interface TerminalFacts {
  monitorId: string;
  description: string;
  outcome: MonitorOutcome;
  elapsedMs: number;
  timeoutMs: number;
  /** Epoch milliseconds; null when nothing was spawned. */
  startedAt: number | null;
  completedAt: number;
  /** The limit that stopped the run, if one did. */
  limit?: LimitTrip;
  evidence: Evidence;
}

/** The complete terminal result for structuredContent and message details: bounded values, never previews. */
export function terminalResult(facts: TerminalFacts): MonitorTerminalResult {
  const { outcome } = facts;
  const result: MonitorTerminalResult = {
    monitorId: facts.monitorId,
    description: facts.description,
    status: outcome.status,
    completion: outcome.completion,
    stoppedBy: outcome.stoppedBy,
    elapsedMs: facts.elapsedMs,
    startedAt: facts.startedAt,
    completedAt: facts.completedAt,
    timeoutMs: facts.timeoutMs,
    matched: outcome.matched,
    matchedTruncated: outcome.matchedTruncated,
    matchedSource: outcome.matchedSource,
    captures: { ...outcome.captures },
    capturesTruncated: outcome.capturesTruncated,
    hasResult: outcome.hasResult,
    resultParseError: outcome.resultParseError,
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    reason: outcome.reason,
    // A success is proven by its evidence; its diagnostic tail is not part of the result (the console keeps the
    // retained output), so codemode's integrity check `!result.outputTruncated` holds for a complete noisy success.
    output: outcome.status === "success" ? [] : outcome.output.map((line) => ({ ...line })),
    outputTruncated: outcome.status === "success" ? false : outcome.outputTruncated,
    evidence: facts.evidence,
  };
  if (outcome.hasResult) result.result = outcome.result;
  if (outcome.redactions !== undefined) result.redactions = outcome.redactions;
  if (outcome.capturesRedacted) result.capturesRedacted = true;
  if (facts.limit !== undefined) result.limit = { ...facts.limit };
  return result;
}

/** monitor_start's structuredContent for a terminal outcome: `{ monitorId, description, status, result }`. */
export function structuredResult(facts: TerminalFacts): Extract<MonitorStartOutput, { result: unknown }> {
  return {
    monitorId: facts.monitorId,
    description: facts.description,
    status: facts.outcome.status,
    result: terminalResult(facts),
  };
}

/** monitor_start's structuredContent for an asynchronous start. */
export function runningResult(monitorId: string, description: string): Extract<MonitorStartOutput, { status: "running" }> {
  return { monitorId, description, status: "running" };
}
