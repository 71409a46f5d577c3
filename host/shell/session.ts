/**
 * One shell session as the registry keeps it: the job handle (whose actor keeps the unread output, and whose state
 * says whether the job runs, is being stopped or how it ended) and what the tools settled or observed. A plain
 * object (no class) so that it carries over /reload unchanged and any instance can read it. It keeps no copy of the
 * job's state: every answer reads the job once (readSession) and derives what it says from that reading.
 */
import { join } from "node:path";
import { lastLines, SUCCESS_LINES, WAKE_FAILURE_LINES } from "../last-lines.ts";
import type { JobEnded, JobFigures, JobHandle, JobState, StartStage } from "../runtime/api.ts";
import type { KeptJob } from "../persist/keeper.ts";
import type { ProcessResult } from "./result.ts";
import { deriveSupervision, describeEnding, type Supervision } from "./supervision.ts";
import type { OnExit } from "./validate.ts";
import type { CompletionInfo } from "../delivery/results.ts";

/** What the call that started a session settled, and what later calls changed: plain values, no job. */
export interface SessionSettings {
  readonly id: number;
  readonly cmd: string;
  readonly tty: boolean;
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly startedEpochMs: number;
  /** The Pi session it was started in (ResultLedger.piSession). */
  readonly piSession: number;
  /** A persisted job's keeper and registry entry: the actor runs its follower. Null for an ordinary job. */
  readonly persisted: KeptJob | null;
  /** A persisted job this Pi adopted at its start (host/shell/adopt.ts) rather than started. */
  readonly adopted: boolean;
  onExit: OnExit;
  /** Wake the model when the job appears stuck (on_exit "wake" implies it). */
  onStall: OnExit;
}

export interface ShellSession extends SessionSettings {
  readonly handle: JobHandle;
  /** The final read, saved when a codemode script collected the completion; replayable once by a direct read. */
  replay: ProcessResult | null;
  endedAt(): number | null;
  readOnce(): boolean;
}

/** One reading of a session's job: what an answer says about the job, all of it from the same moment. */
export interface SessionReading {
  state: JobState;
  /** Why a starting job has no process yet; null unless `state` is starting. */
  startStage: StartStage | null;
  figures: JobFigures;
  /** Wall-clock time of the hard deadline once the process exists; null before. */
  deadlineEpochMs: number | null;
  /** Known from the spec while the job runs (the actor names its log after the job), from the result after. */
  logPath: string | null;
  nowEpochMs: number;
}

export function createSession(init: {
  id: number;
  handle: JobHandle;
  cmd: string;
  tty: boolean;
  cwd: string;
  timeoutMs: number;
  piSession: number;
  persisted?: KeptJob | null;
  adopted?: boolean;
  /** When the job started, if before its handle (an adopted job). */
  startedEpochMs?: number;
  onExit: OnExit;
  onStall?: OnExit;
}): ShellSession {
  const session: ShellSession = {
    ...init,
    onStall: init.onStall ?? "none",
    persisted: init.persisted ?? null,
    adopted: init.adopted ?? false,
    startedEpochMs: init.startedEpochMs ?? init.handle.requestedAtEpoch,
    replay: null,
    endedAt: () => session.handle.result()?.endedAt ?? null,
    readOnce: () => session.replay !== null,
  };
  return session;
}

/** Reads the session's job now. */
export function readSession(session: ShellSession, nowEpochMs: number): SessionReading {
  const { handle } = session;
  // The stage is read before the state. A stage only moves on, and ends when the process exists: with a state that
  // still says starting, the stage read a moment before is the job's (or just behind it); a state past it has none.
  const stage = handle.startStage();
  const state = handle.state();
  return {
    state,
    startStage: state.phase === "starting" ? stage : null,
    figures: handle.figures(),
    deadlineEpochMs: deadlineEpochOf(handle),
    logPath: logPathIn(handle, state),
    nowEpochMs,
  };
}

/**
 * Whether the actor's watches (ports, usage) look at the job's own processes: every job's but a persisted job's whose
 * entry carries no tag (written before persisted jobs were tagged), where they could only see its follower.
 */
export function watchesItsTree(session: SessionSettings): boolean {
  return session.persisted === null || session.persisted.entry.tag !== null;
}

export function logPathOf(session: ShellSession): string | null {
  return logPathIn(session.handle, session.handle.state());
}

function logPathIn(handle: JobHandle, state: JobState): string | null {
  return state.phase === "ended" ? state.result.log.path : join(handle.spec.log.dir, handle.spec.id);
}

/** Converts the handle's monotonic deadline into wall-clock time once it is known. */
function deadlineEpochOf(handle: JobHandle): number | null {
  const deadline = handle.deadline();
  if (deadline === null) return null;
  return handle.requestedAtEpoch + (deadline - handle.requestedAt);
}

export function supervisionOf(session: SessionSettings, reading: SessionReading): Supervision {
  const { figures } = reading;
  return deriveSupervision({
    job: reading.state,
    timeoutMs: session.timeoutMs,
    deadlineEpochMs: reading.deadlineEpochMs,
    lastActivityEpochMs: figures.lastOutputEpochMs ?? session.startedEpochMs,
    nowEpochMs: reading.nowEpochMs,
    logBytes: figures.logBytes,
    logTruncated: figures.logTruncated,
    stalled: figures.stalled,
    waitingForInput: figures.waitingForInput,
    runaway: figures.runaway,
  });
}

export function elapsedOf(session: SessionSettings, reading: SessionReading): number {
  if (reading.state.phase === "ended") return reading.state.result.elapsedMs;
  return Math.max(0, reading.nowEpochMs - session.startedEpochMs);
}

/**
 * The completion as the result ledger and the codemode receipt see it; `output` is the job's final read, when it is
 * known, whose last lines a wake shows.
 */
export function completionOf(session: SessionSettings, ended: JobEnded, output: string | null = null): CompletionInfo {
  const { result } = ended;
  const ending = describeEnding(result, ended.stopBy, session.timeoutMs);
  const success = ending.status === "exited" && result.exitCode === 0;
  const last = output === null ? null : lastLines(output, success ? SUCCESS_LINES : WAKE_FAILURE_LINES);
  return {
    sessionId: session.id,
    cmd: session.cmd,
    piSession: session.piSession,
    status: ending.status,
    exitCode: result.exitCode,
    signal: result.signal,
    failureReason: ending.failure?.reason ?? null,
    logPath: result.log.path,
    logTruncated: result.log.truncated,
    elapsedMs: result.elapsedMs,
    endedAtEpochMs: result.endedAt,
    evidence: last === null ? result.evidence : { ...result.evidence, blocks: result.evidence.blocks.filter((block) => block.line <= result.totals.lines - last.shown) },
    lastLines: last?.text ?? "",
  };
}
