/**
 * One compact line per job for wait_jobs, built from what the shell and monitor services report. Pure: the same
 * facts always give the same line, so the model and codemode scripts read the same thing.
 */
import type { DiagnosticLine } from "../../mailbox/monitor.ts";
import type { Evidence } from "../../mailbox/evidence.ts";
import type { ActorResult } from "../../mailbox/result.ts";
import { isEvidence } from "../../shared/evidence.ts";
import { FAILURE_LINES, lastLines, SUCCESS_LINES } from "../last-lines.ts";
import { evidenceLines, LINE_EVIDENCE } from "../evidence-text.ts";
import { oneLine } from "../safety/escape.ts";
import { COMMAND_PREVIEW_CHARS } from "../shell/limits.ts";
import type { ProcessResult, SessionEntryView } from "../shell/result.ts";
import { labelOutputLine } from "../../shared/report-tail.ts";
import type { MonitorTerminalResult } from "../monitor/schemas.ts";
import { elapsed } from "../../shared/format.ts";
import type { Collected, Verdict, WaitJobLine } from "./result.ts";
import type { UsageFields } from "../runtime/usage-line.ts";

export function shellVerdict(r: { status: string; exit_code?: number | null }): Verdict {
  if (r.status === "running" || r.status === "starting") return "running";
  if (r.status === "stopped") return "stopped";
  return r.status === "exited" && r.exit_code === 0 ? "success" : "failure";
}

export function monitorVerdict(status: string | null): Verdict {
  if (status === null) return "running";
  return status === "success" ? "success" : status === "stopped" ? "stopped" : "failure";
}

/** The blocks of a job's evidence that its shown last lines (from line `shownFrom` of the log on) do not hold. */
function evidenceBefore(evidence: Evidence, shownFrom: number): string | undefined {
  const blocks = evidence.blocks.filter((block) => block.line < shownFrom);
  const lines = evidenceLines({ ...evidence, blocks }, LINE_EVIDENCE);
  return lines.length === 0 ? undefined : lines.join("\n");
}

const label = (text: string): string => oneLine(text, COMMAND_PREVIEW_CHARS);

/**
 * A shell job this call collected: its evidence (from its actor's result; null if it has none), then its final read
 * cut to its last lines. The evidence leaves out what the last lines show.
 */
export function collectedShellLine(sessionId: number, r: ProcessResult, ended: ActorResult | null): WaitJobLine {
  const verdict = shellVerdict(r);
  const tail = lastLines(r.output, verdict === "success" ? SUCCESS_LINES : FAILURE_LINES);
  const shown = ended === null ? undefined : evidenceBefore(ended.evidence, ended.totals.lines - tail.shown + 1);
  return {
    id: `job_${sessionId}`,
    kind: "shell",
    session_id: sessionId,
    label: label(r.cmd),
    verdict,
    status: r.status,
    exit_code: r.exit_code ?? null,
    duration_ms: Math.round(r.elapsed_ms),
    collected: "now",
    ...(shown !== undefined ? { evidence: shown } : {}),
    ...(tail.text !== "" ? { output: tail.text } : {}),
    ...(tail.omitted > 0 ? { output_lines_omitted: tail.omitted } : {}),
    ...(r.failure ? { reason: r.failure.reason } : {}),
    ...(r.redactions ? { redactions: r.redactions } : {}),
    ...(r.usage ? { usage: r.usage } : {}),
    log_path: r.log_path,
  };
}

/** A shell job this call does not collect: still running, or collected before (its line carries no output). */
export function shellStatusLine(s: SessionEntryView, collected: Collected): WaitJobLine {
  return {
    id: `job_${s.session_id}`,
    kind: "shell",
    session_id: s.session_id,
    label: label(s.cmd),
    verdict: shellVerdict(s),
    status: s.status,
    exit_code: s.exit_code,
    duration_ms: Math.round(s.elapsed_ms),
    collected,
    ...(s.usage ? { usage: s.usage } : {}),
    log_path: s.log_path,
  };
}

/** A shell job no longer registered: collected and removed by an earlier read; only its log is left. */
export function goneShellLine(sessionId: number, logPath: string | null): WaitJobLine {
  return { id: `job_${sessionId}`, kind: "shell", session_id: sessionId, label: "", verdict: "unknown", status: "collected", exit_code: null, duration_ms: 0, collected: "earlier", log_path: logPath };
}

export interface MonitorFacts {
  monitorId: string;
  description: string;
  /** The terminal result once it ended; null while it runs. */
  result: MonitorTerminalResult | null;
  /** While it runs: how long it has. */
  runningMs: number;
  logPath: string | null;
  /** Its process tree as last sampled; null before the first sample. */
  usage?: UsageFields | null;
}

/** Error-like lines of a monitor's tail that its wait_jobs line does not show, at most. */
const MAX_TAIL_EVIDENCE = 8;

/** How many entries at the end of a monitor's tail stand for its last `printed` lines. */
function tailEntries(output: readonly DiagnosticLine[], printed: number): number {
  let entries = 0;
  for (let lines = 0; entries < output.length && lines < printed; entries += 1) lines += output[output.length - 1 - entries]!.count;
  return entries;
}

// Kept as the lines are: the text for the model escapes them (host/wait/result-text.ts), the UI sanitizes them.
const outputText = (output: readonly DiagnosticLine[]): string => output.map(labelOutputLine).join("\n");

/** A monitor's line: its verdict, and for one this call collected its captures, result, or failure output. */
export function monitorLine(m: MonitorFacts, collected: Collected): WaitJobLine {
  const r = m.result;
  const line: WaitJobLine = {
    id: m.monitorId,
    kind: "monitor",
    label: label(m.description),
    verdict: monitorVerdict(r?.status ?? null),
    status: r?.status ?? "running",
    exit_code: r?.exitCode ?? null,
    duration_ms: Math.round(r?.elapsedMs ?? m.runningMs),
    collected,
    ...(m.usage ? { usage: m.usage } : {}),
    log_path: m.logPath,
  };
  if (r === null || collected !== "now") return line;
  if (Object.keys(r.captures).length > 0) line.captures = { ...r.captures };
  if (r.hasResult) line.result = r.result;
  if (r.reason !== null) line.reason = r.reason;
  if (r.redactions) line.redactions = r.redactions;
  const tail = lastLines(outputText(r.output), FAILURE_LINES);
  // The report's evidence leaves out the lines of its tail; a line shows fewer of them, so the error-like ones of
  // the rest join it, as one block after the others.
  const dropped = r.output.slice(0, r.output.length - tailEntries(r.output, tail.shown)).filter((entry) => isEvidence(entry.text));
  const evidence: Evidence =
    dropped.length === 0 ? r.evidence : { ...r.evidence, blocks: [...r.evidence.blocks, { line: Number.MAX_SAFE_INTEGER, headline: dropped[0]!.text, lines: dropped.slice(-MAX_TAIL_EVIDENCE).map(labelOutputLine) }] };
  const shown = evidenceBefore(evidence, Number.POSITIVE_INFINITY);
  if (shown !== undefined) line.evidence = shown;
  if (tail.text !== "") line.output = tail.text;
  if (tail.omitted > 0) line.output_lines_omitted = tail.omitted;
  return line;
}

/** Why a job failed, in a few words: `exit 1`, `timed_out`, `result_missing`. */
function cause(l: WaitJobLine): string {
  if (l.kind === "shell" && l.status === "exited") return l.exit_code !== null ? `exit ${l.exit_code}` : "signal";
  return l.status;
}

/** `8 jobs: 7 success, 1 failure (job_3 exit 1) · 41.2s` */
export function summaryOf(lines: readonly WaitJobLine[]): string {
  const of = (v: Verdict) => lines.filter((l) => l.verdict === v);
  const failed = of("failure");
  const parts = [
    `${of("success").length} success`,
    `${failed.length} failure${failed.length > 0 ? ` (${failed.map((l) => `${l.id} ${cause(l)}`).join(", ")})` : ""}`,
  ];
  if (of("stopped").length > 0) parts.push(`${of("stopped").length} stopped`);
  if (of("running").length > 0) parts.push(`${of("running").length} running`);
  if (of("unknown").length > 0) parts.push(`${of("unknown").length} collected long ago`);
  const longest = lines.reduce((max, l) => Math.max(max, l.duration_ms), 0);
  return `${lines.length} job${lines.length === 1 ? "" : "s"}: ${parts.join(", ")} · ${elapsed(longest)}`;
}
