/**
 * One shell session as the registry keeps it: the job handle (whose actor keeps the unread output) and what the
 * tools have observed. A plain object (no class) so that it carries over /reload unchanged and any instance can read it.
 */
import { join } from "node:path";
import type { ActorResult } from "../../mailbox/protocol.ts";
import type { JobHandle } from "../runtime-api.ts";
import type { ProcessResult } from "./result.ts";
import { deriveSupervision, describeEnding, type Ending, type Supervision } from "./supervision.ts";
import type { OnExit } from "./validate.ts";
import type { CompletionInfo } from "./wake-ledger.ts";

export interface ShellSession {
  readonly id: number;
  readonly handle: JobHandle;
  readonly cmd: string;
  readonly tty: boolean;
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly startedEpochMs: number;
  onExit: OnExit;
  /** Wake the model when the job appears stuck (on_exit "wake" implies it). */
  onStall: OnExit;
  result: ActorResult | null;
  ending: Ending | null;
  /** Who asked for the stop, if anyone did. */
  stoppedBy: "tool" | "session_shutdown" | null;
  stopping: boolean;
  /** The final read, saved when a codemode script collected the completion; replayable once by a direct read. */
  replay: ProcessResult | null;
  /** Called when the job ends (waits in progress). */
  readonly exitWaiters: Set<() => void>;
  endedAt(): number | null;
  readOnce(): boolean;
}

export function createSession(init: {
  id: number;
  handle: JobHandle;
  cmd: string;
  tty: boolean;
  cwd: string;
  timeoutMs: number;
  onExit: OnExit;
  onStall?: OnExit;
}): ShellSession {
  const session: ShellSession = {
    ...init,
    onStall: init.onStall ?? "none",
    startedEpochMs: init.handle.requestedAtEpoch,
    result: null,
    ending: null,
    stoppedBy: null,
    stopping: false,
    replay: null,
    exitWaiters: new Set(),
    endedAt: () => session.result?.endedAt ?? null,
    readOnce: () => session.replay !== null,
  };
  return session;
}

/** The log path: known from the spec while running (the actor names its log after the job), from the result after. */
export function logPathOf(session: ShellSession): string | null {
  if (session.result !== null) return session.result.log.path;
  return join(session.handle.spec.log.dir, session.handle.spec.id);
}

/** Converts the handle's monotonic deadline into wall-clock time once it is known. */
export function deadlineEpochOf(session: ShellSession): number | null {
  const deadline = session.handle.deadline();
  if (deadline === null) return null;
  return session.handle.requestedAtEpoch + (deadline - session.handle.requestedAt);
}

export function supervisionOf(session: ShellSession, nowEpochMs: number): Supervision {
  const figures = session.handle.figures();
  return deriveSupervision({
    result: session.result,
    ending: session.ending,
    stopping: session.stopping,
    deadlineEpochMs: deadlineEpochOf(session),
    starting: session.handle.phase() === "starting",
    lastActivityEpochMs: figures.lastOutputEpochMs ?? session.startedEpochMs,
    nowEpochMs,
    logBytes: figures.logBytes,
    logTruncated: figures.logTruncated,
    stalled: session.result === null && figures.stalled,
    waitingForInput: session.result === null && figures.waitingForInput,
  });
}

export function elapsedOf(session: ShellSession, nowEpochMs: number): number {
  if (session.result !== null) return session.result.elapsedMs;
  return Math.max(0, nowEpochMs - session.startedEpochMs);
}

/** Records the terminal result on the session; returns the completion as the wake ledger sees it. */
export function settleSession(session: ShellSession, result: ActorResult): CompletionInfo {
  session.result = result;
  session.stopping = false;
  session.ending = describeEnding(result, session.stoppedBy, session.timeoutMs);
  return {
    sessionId: session.id,
    cmd: session.cmd,
    status: session.ending.status,
    exitCode: result.exitCode,
    signal: result.signal,
    failureReason: session.ending.failure?.reason ?? null,
    logPath: result.log.path,
    logTruncated: result.log.truncated,
    elapsedMs: result.elapsedMs,
    endedAtEpochMs: result.endedAt,
  };
}
