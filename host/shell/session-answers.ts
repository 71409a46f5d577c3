/**
 * What list_sessions, set_on_exit and kill_session answer, and the codemode receipt's line per session, each built
 * from one reading of the session's job. Pure.
 */
import { completionPhrase } from "../delivery/wake-text.ts";
import type { ReceiptLine } from "./receipt-text.ts";
import type { KeptJob } from "../persist/keeper.ts";
import type { KillResult, ListResult, PersistedView, SessionEntryView, SetOnExitResult } from "./result.ts";
import { completionOf, elapsedOf, supervisionOf, watchesItsTree, type SessionReading, type SessionSettings } from "./session.ts";
import { endingOf, statusOf } from "./supervision.ts";
import { usageOf } from "./process-answer.ts";
import { startingCounts } from "../../shared/start-stage.ts";

/**
 * One session in list_sessions. `listening`: the ports as last read (undefined: never read); `piSession`: the current
 * session of this Pi (ResultLedger.piSession), so that a job started before /new, /resume or /fork is marked.
 */
export function sessionEntry(
  session: SessionSettings,
  reading: SessionReading,
  known: { collected: boolean; listening: number[] | null | undefined; piSession?: number },
): SessionEntryView {
  const status = statusOf(reading.state, session.timeoutMs);
  const result = reading.state.phase === "ended" ? reading.state.result : null;
  return {
    session_id: session.id,
    cmd: session.cmd,
    tty: session.tty,
    running: status === "running",
    status,
    exit_code: result?.exitCode ?? null,
    signal: result?.signal ?? null,
    on_exit: session.onExit,
    collected: known.collected,
    output_bytes_total: reading.figures.bytes,
    output_pending_bytes: reading.figures.unreadBytes,
    evidence_lines: reading.figures.evidenceLines,
    started_utc: new Date(session.startedEpochMs).toISOString(),
    elapsed_ms: elapsedOf(session, reading),
    log_path: reading.logPath,
    supervision: supervisionOf(session, reading),
    // A persisted job's actor watches the job's tree by its tag; one without a tag only its follower: none shown then.
    ...(status === "running" && known.listening !== undefined && watchesItsTree(session) ? { listening: known.listening } : {}),
    ...(status === "starting" && reading.startStage !== null ? { start_stage: reading.startStage } : {}),
    ...(session.piSession < (known.piSession ?? 0) ? { earlier_session: true as const } : {}),
    ...(watchesItsTree(session) ? usageOf(reading) : {}),
    ...(session.persisted !== null ? { persisted: persistedView(session.persisted, session.adopted) } : {}),
  };
}

function persistedView(kept: KeptJob, adopted: boolean): PersistedView {
  return { entry: kept.dir, started_by_pid: kept.entry.startedByPid, ...(adopted ? { adopted: true as const } : {}) };
}

/** `elsewhere`: the persisted jobs of this directory that another Pi owns, and its pid if known. */
export function listAnswer(sessions: SessionEntryView[], elsewhere?: { ownerPid: number | null; jobs: readonly KeptJob[] }): ListResult {
  const active = sessions.filter((s) => s.status === "starting" || s.running).length;
  const completed = sessions.length - active;
  // Counted only when a job is starting: a burst then says how far along it is, a quiet list stays as it was.
  const starting = sessions.some((s) => s.start_stage !== undefined) ? { starting_counts: startingCounts(sessions.map((s) => s.start_stage)) } : {};
  const others =
    elsewhere !== undefined && elsewhere.jobs.length > 0
      ? {
          owned_by_another_pi: {
            owner_pid: elsewhere.ownerPid,
            jobs: elsewhere.jobs.map((kept) => ({ cmd: kept.entry.cmd, started_utc: new Date(kept.entry.startedAtEpochMs).toISOString(), persisted: persistedView(kept, false) })),
          },
        }
      : {};
  return { operation: "list_sessions", active_count: active, completed_count: completed, just_exited_count: completed, ...starting, sessions, ...others };
}

export function setOnExitAnswer(
  session: SessionSettings,
  reading: SessionReading,
  change: Pick<SetOnExitResult, "previous_on_exit" | "effect">,
): SetOnExitResult {
  const ending = endingOf(reading.state, session.timeoutMs);
  return {
    operation: "set_on_exit",
    session_id: session.id,
    cmd: session.cmd,
    on_exit: session.onExit,
    previous_on_exit: change.previous_on_exit,
    running: ending === null,
    status: ending?.status ?? "running",
    effect: change.effect,
  };
}

export function killAnswer(
  session: SessionSettings,
  reading: SessionReading,
  outcome: Pick<KillResult, "signal" | "already_exited" | "killed" | "message">,
): KillResult {
  const result = reading.state.phase === "ended" ? reading.state.result : null;
  const ending = endingOf(reading.state, session.timeoutMs);
  const supervision = supervisionOf(session, reading);
  // A kill that could not confirm the stop of a job that still runs says so, whatever the job's own supervision says.
  const cleanup = !outcome.killed && result === null ? "unconfirmed" : supervision.cleanup;
  return {
    operation: "kill_session",
    session_id: session.id,
    cmd: session.cmd,
    signal: outcome.signal,
    killed: outcome.killed,
    escalated: result?.escalated ?? false,
    already_exited: outcome.already_exited,
    status: ending?.status ?? "running",
    running: result === null,
    exit_code: result?.exitCode ?? null,
    exit_signal: result?.signal ?? null,
    log_path: reading.logPath,
    supervision: { ...supervision, cleanup },
    cleanup,
    message: outcome.message,
  };
}

/** The receipt's line for a session the script touched that is still registered. */
export function receiptLine(session: SessionSettings, reading: SessionReading, replayable: boolean): ReceiptLine {
  const { state } = reading;
  return {
    sessionId: session.id,
    state: state.phase === "ended" ? completionPhrase(completionOf(session, state)) : "running",
    running: state.phase !== "ended",
    logPath: reading.logPath,
    replayable,
    gone: false,
  };
}
