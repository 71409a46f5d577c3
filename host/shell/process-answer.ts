/**
 * What exec_command and write_stdin answer, built from one reading of the session's job, the output the call took
 * and how its wait ended. Pure.
 */
import type { ReadyReport } from "../../mailbox/messages.ts";
import type { TakenOutput } from "../../mailbox/output.ts";
import type { JobEnded, JobState } from "../runtime/api.ts";
import type { WaitEnd } from "./job-wait.ts";
import type { ProcessResult, ReadyResult } from "./result.ts";
import { elapsedOf, supervisionOf, watchesItsTree, type SessionReading, type SessionSettings } from "./session.ts";
import { describeEnding, statusOf } from "./supervision.ts";
import { usageFields } from "../runtime/usage-line.ts";
import type { WaitMode } from "./waits.ts";

/** How a tool call's wait ended, in the terms of its answer. */
export type WaitOutcome = "exit" | "deadline" | "cancelled" | "steered" | "ready";

export interface ProcessAnswerInput {
  operation: ProcessResult["operation"];
  session: SessionSettings;
  reading: SessionReading;
  /** The output this call took; null when it took none (a cancelled wait leaves the output unread). */
  taken: TakenOutput | null;
  mode: WaitMode;
  outcome: WaitOutcome;
  notes: string[];
  /** How the wait of an exec_command with `ready` ended. */
  ready?: WaitEnd<ReadyReport>;
}

export function processAnswer(input: ProcessAnswerInput): ProcessResult {
  const { session, reading, taken } = input;
  const { state } = reading;
  const reported = reportedEnd(state, taken);
  const notes = taken !== null ? input.notes : [...input.notes, `output left unread (${reading.figures.unreadBytes} bytes); read it with write_stdin`];
  const output = taken ?? { text: "", bytes: 0, omittedBytes: 0 };
  const base = {
    operation: input.operation,
    output: output.text,
    output_bytes: output.bytes,
    output_omitted_bytes: output.omittedBytes,
    output_folded_lines: output.foldedLines ?? 0,
    output_rendered: session.tty ? "terminal" : "text",
    ...(output.redactions ? { redactions: output.redactions } : {}),
    output_replayed: false,
    output_bytes_total: reading.figures.bytes,
    log_path: reading.logPath,
    wait_mode: input.mode,
    wait_status: waitStatusOf(reported !== null, input.outcome, input.mode),
    supervision: supervisionOf(session, reading),
    cmd: session.cmd,
    tty: session.tty,
    on_exit: session.onExit,
    elapsed_ms: elapsedOf(session, reading),
    notes,
    // A persisted job's without a tag of its own would be its follower's.
    ...(watchesItsTree(session) ? usageOf(reading) : {}),
  } as const;
  const ready = input.ready !== undefined ? { ready: readyAnswer(input.ready, session, reading) } : {};
  if (reported === null) {
    const status = statusOf(state, session.timeoutMs);
    const stage = status === "starting" && reading.startStage !== null ? { start_stage: reading.startStage } : {};
    return { ...base, status, running: status === "running", session_id: session.id, ...ready, ...stage };
  }
  const { result } = reported;
  const ending = describeEnding(result, reported.stopBy, session.timeoutMs);
  return { ...base, status: ending.status, running: false, exit_code: result.exitCode, signal: result.signal, failure: ending.failure, ...ready };
}

/** The `usage` field: the tree's figures, once sampled. */
export function usageOf(reading: SessionReading): { usage?: NonNullable<ReturnType<typeof usageFields>> } {
  const usage = usageFields(reading.figures.usage);
  return usage === null ? {} : { usage };
}

/**
 * The end an answer reports: the job's, once it has ended, but only with the output the call took. A cancelled call
 * takes none and reports no end, because its answer may never reach the model.
 */
export function reportedEnd(state: JobState, taken: TakenOutput | null): JobEnded | null {
  return state.phase === "ended" && taken !== null ? state : null;
}

/** `completed` only when the answer reports the end; otherwise why the wait returned. */
export function waitStatusOf(reportsEnd: boolean, outcome: WaitOutcome, mode: WaitMode): ProcessResult["wait_status"] {
  if (reportsEnd) return "completed";
  if (outcome === "cancelled" || outcome === "steered" || outcome === "ready") return outcome;
  return mode === "immediate" ? "snapshot" : "deadline";
}

/** The `ready` field: the actor's report, or how the wait ended without one. */
export function readyAnswer(end: WaitEnd<ReadyReport>, session: SessionSettings, reading: SessionReading): ReadyResult {
  if (end.kind === "reached") {
    const report = end.value;
    return {
      status: report.status,
      elapsed_ms: report.elapsedMs,
      ...(report.matched !== null ? { matched: report.matched } : {}),
      ...(report.captures !== null && Object.keys(report.captures).length > 0 ? { captures: report.captures } : {}),
      ...(report.port !== null ? { port: report.port } : {}),
    };
  }
  const result = reading.state.phase === "ended" ? reading.state.result : null;
  const started = result?.startedAt ?? session.startedEpochMs;
  const until = result?.endedAt ?? reading.nowEpochMs;
  return { status: end.kind === "exit" ? "exited" : "not_ready", elapsed_ms: Math.max(0, until - started) };
}

/** Two takes of one call as one: what was read before the job ended, then the rest from its final record. */
export function joinTakes(first: TakenOutput, rest: TakenOutput): TakenOutput {
  return {
    text: first.text + rest.text,
    bytes: first.bytes + rest.bytes,
    omittedBytes: first.omittedBytes + rest.omittedBytes,
    redactions: (first.redactions ?? 0) + (rest.redactions ?? 0),
    foldedLines: (first.foldedLines ?? 0) + (rest.foldedLines ?? 0),
  };
}
