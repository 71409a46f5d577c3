/**
 * The five shell tools as operations on the shared state and the job runtime, free of Pi: each takes raw
 * arguments plus the call's id, signal and cwd, and answers with a structured result (or throws a ToolError,
 * host/tools/checked.ts, whose message names the fields). install.ts turns them into Pi tools. This file starts,
 * waits and answers; write_stdin's input is sent by host/shell/send-input.ts, stops are host/shell/stop.ts, and a
 * codemode script's receipt is host/shell/script-receipts.ts.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { ReadyReport } from "../../mailbox/messages.ts";
import type { TakenOutput } from "../../mailbox/output.ts";
import type { JobRuntime } from "../runtime/api.ts";
import { keepFor, startActor } from "./persisted-start.ts";
import { recordOnExit } from "../persist/registry.ts";
import { readEmptyPollCap, readWatchdog, steerInterruptEnabled } from "../config.ts";
import { wakeForRunaway } from "./alerts.ts";
import { readinessOf, waitFor, type Steering, type WaitEnd } from "./job-wait.ts";
import { KILL_GRACE_MS, LOG_MAX_BYTES } from "./limits.ts";
import { listeningOf, refreshListening } from "./listening.ts";
import { joinTakes, processAnswer, reportedEnd, type WaitOutcome } from "./process-answer.ts";
import type { KillResult, ListResult, ProcessResult, SessionEntryView, SetOnExitResult } from "./result.ts";
import { collectEnded, takeOutput } from "./collect.ts";
import { finalizeScript, releaseScripts } from "./script-receipts.ts";
import { outerCallOf, touchScript } from "./scripts.ts";
import { sendInput } from "./send-input.ts";
import { listAnswer, sessionEntry, setOnExitAnswer } from "./session-answers.ts";
import { completionOf, createSession, logPathOf, readSession, type ShellSession } from "./session.ts";
import { startRequestOf } from "./start-request.ts";
import type { ShellState } from "./state.ts";
import { KILL_CONFIRM_SLACK_MS, killSession, stopAllIn } from "./stop.ts";
import { endReported } from "./persist-release.ts";
import { ToolError, unwrap } from "../tools/checked.ts";
import { validateExec, validateKill, validateListSessions, validateSetOnExit, validateWriteStdin } from "./validate.ts";
import { planWait, type WaitPlan, type WaitPlanResult } from "./waits.ts";
import { shellJobName } from "../delivery/results.ts";

export interface CallContext {
  /** Pi's tool call id; `<outer>/<n>` for calls a codemode script made. */
  toolCallId: string;
  signal?: AbortSignal | undefined;
  /** Pi's cwd, the default workdir. */
  cwd: string;
}

export interface ShellServiceOptions {
  runtime: () => JobRuntime;
  env?: () => Readonly<Record<string, string | undefined>>;
  /** How long kill_session waits for the stop to be confirmed before it reports `killed: false`. */
  killConfirmMs?: number;
  /** Grace between the signal and SIGKILL. */
  killGraceMs?: number;
  logMaxBytes?: number;
}

function planOrThrow(planned: WaitPlanResult): WaitPlan {
  if (!planned.ok) throw new ToolError(planned.error);
  return planned.plan;
}

export class ShellService {
  state: ShellState;
  private readonly options: ShellServiceOptions;
  private readonly steerListeners = new Set<() => void>();

  constructor(state: ShellState, options: ShellServiceOptions) {
    this.state = state;
    this.options = options;
  }

  private env(): Readonly<Record<string, string | undefined>> {
    return this.options.env?.() ?? process.env;
  }

  // ── exec_command ──────────────────────────────────────────────────────────────────────────────────────────────

  async exec(raw: unknown, call: CallContext): Promise<ProcessResult> {
    const request = unwrap(validateExec(raw));
    // Process groups, POSIX signals and `shell -c` are assumed throughout; Windows is not supported.
    if (process.platform === "win32") throw new ToolError("exec_command: shell jobs are not supported on Windows");
    this.rejectIfCancelled(call, "exec_command");
    const cwd = request.workdir === null ? call.cwd : resolve(call.cwd, request.workdir);
    let isDirectory = false;
    try {
      isDirectory = statSync(cwd).isDirectory();
    } catch {
      isDirectory = false;
    }
    if (!isDirectory) throw new ToolError(`exec_command: workdir ${JSON.stringify(cwd)} does not exist or is not a directory`);
    const plan = planOrThrow(planWait({ kind: "exec", yieldTimeMs: request.yieldTimeMs, emptyPollCap: { ok: true, capMs: null }, nowEpochMs: Date.now() }));

    const watchdog = readWatchdog(this.env());
    if (!watchdog.ok) throw new ToolError(`exec_command: ${watchdog.error}`);
    const { registry, ledger } = this.state;
    const admission = registry.admit(logPathOf);
    if (!admission.ok) throw new ToolError(admission.error);
    for (const id of admission.evicted) ledger.forget(shellJobName(id));
    const killGraceMs = this.options.killGraceMs ?? KILL_GRACE_MS;
    const persisted = request.persist ? await keepFor(request, cwd, call.cwd, killGraceMs, this.state.persisted) : null;
    const limits = { killGraceMs, logMaxBytes: this.options.logMaxBytes ?? LOG_MAX_BYTES };
    const handle = startActor(this.options.runtime(), { request, cwd, limits, watchdog: watchdog.spec, persisted });
    const session = createSession({
      // The runtime's number for the job: session N writes its log to `job_N`.
      id: handle.number,
      handle,
      cmd: request.cmd,
      tty: request.tty,
      cwd,
      timeoutMs: request.timeoutMs,
      piSession: this.state.ledger.piSession,
      persisted,
      onExit: request.onExit,
      onStall: request.onStall,
    });
    this.register(session);
    touchScript(this.state.scripts, call.toolCallId, session.id);

    if (request.ready !== null) {
      const ready = await waitFor(session.handle, { until: readinessOf(session.handle), signal: call.signal, steering: this.steering() });
      const outcome: WaitOutcome = ready.kind !== "reached" ? ready.kind : ready.value.status === "ready" ? "ready" : "deadline";
      return await this.answer("exec_command", session, plan, outcome, call, [], request.raw, ready);
    }
    const outcome = await this.waitOn(session, plan, call.signal);
    return await this.answer("exec_command", session, plan, outcome, call, [], request.raw);
  }

  /** A new session (started or adopted): registered, its notices and its end heard. */
  register(session: ShellSession): void {
    this.state.registry.add(session);
    this.watch(session);
  }

  /**
   * Subscribes to the job's stuck notices and its end, heard as the job's state changes (JobHandle.onEnd) before any
   * answer can read the job ended, and routed through the state so a reloaded instance hears it. Output is not watched.
   */
  private watch(session: ShellSession): void {
    const state = this.state;
    // A stuck episode wakes the model once, if the job asked for wakes; its flags are in supervision either way.
    session.handle.onNotice((notice) => {
      if (notice.kind === "runaway") return wakeForRunaway(state, session, notice.detail);
      if (notice.kind !== "stalled" && notice.kind !== "waiting_for_input") return;
      if (state.closing || session.handle.state().stopBy !== null || (session.onExit !== "wake" && session.onStall !== "wake")) return;
      const alert = { sessionId: session.id, cmd: session.cmd, kind: notice.kind, prompt: notice.detail, tty: session.tty, logPath: logPathOf(session) };
      state.ledger.stuck({ kind: "shell", alert }, performance.now());
      state.onCompletion();
    });
    session.handle.onEnd((ended) => {
      // An explicit stop owes nothing, and neither does a session that is shutting down.
      if (state.closing || ended.stopBy !== null) return;
      state.ledger.completed({ kind: "shell", completion: completionOf(session, ended, session.handle.finalOutput()) }, session.onExit === "wake", performance.now());
      state.onCompletion();
    });
  }

  // ── write_stdin ───────────────────────────────────────────────────────────────────────────────────────────────

  async writeStdin(raw: unknown, call: CallContext): Promise<ProcessResult> {
    const request = unwrap(validateWriteStdin(raw));
    const session = this.lookup("write_stdin", request.sessionId);
    this.rejectIfCancelled(call, "write_stdin");
    const nested = outerCallOf(call.toolCallId) !== null;
    touchScript(this.state.scripts, call.toolCallId, session.id);

    if (session.replay !== null) {
      const replay: ProcessResult = { ...session.replay, operation: "write_stdin", output_replayed: true, notes: [...session.replay.notes] };
      if (request.input !== null || request.endStdin || request.resize !== null) replay.notes.push("input was not sent: the process has ended");
      if (!nested) {
        // A direct read consumes the saved record; nested reads leave it for the model.
        this.state.ledger.consume(shellJobName(session.id));
        endReported(session);
        this.state.registry.remove(session.id, logPathOf(session));
      }
      return replay;
    }

    const notes = await sendInput(session, request);

    const plan = planOrThrow(
      planWait({
        kind: request.waitKind,
        yieldTimeMs: request.yieldTimeMs,
        yieldUntil: request.yieldUntil,
        emptyPollCap: request.waitKind === "empty" ? readEmptyPollCap(this.env()) : { ok: true, capMs: null },
        nowEpochMs: Date.now(),
      }),
    );
    const outcome = await this.waitOn(session, plan, call.signal);
    return await this.answer("write_stdin", session, plan, outcome, call, notes, request.raw);
  }

  // ── waiting and answering ─────────────────────────────────────────────────────────────────────────────────────

  private rejectIfCancelled(call: CallContext, tool: string): void {
    if (call.signal?.aborted) throw new ToolError(`${tool}: the call was cancelled before the read; no output was consumed`);
  }

  /** Where steering ends waits, unless the operator turned that off (wait_jobs listens there too). */
  steering(): Steering | null {
    return steerInterruptEnabled(this.env()) ? this.steerListeners : null;
  }

  /** Waits per plan; returns early on exit, cancellation or (unless disabled) human steering. */
  private async waitOn(session: ShellSession, plan: WaitPlan, signal: AbortSignal | undefined): Promise<WaitOutcome> {
    const end = await waitFor(session.handle, { durationMs: plan.durationMs, signal, steering: this.steering() });
    return end.kind;
  }

  /** Human steering arrived: every wait in progress returns now. */
  steer(): void {
    for (const listener of [...this.steerListeners]) listener();
  }

  private async answer(
    operation: ProcessResult["operation"],
    session: ShellSession,
    plan: WaitPlan,
    outcome: WaitOutcome,
    call: CallContext,
    notes: string[],
    raw: boolean,
    ready?: WaitEnd<ReadyReport>,
  ): Promise<ProcessResult> {
    // A cancelled wait leaves the output unread: the cancelled result may never reach the model.
    let taken: TakenOutput | null = null;
    if (outcome !== "cancelled") {
      // The job may end while the read is in flight; the take then comes from its final record, whole.
      const endedBefore = session.handle.phase() === "ended";
      taken = await takeOutput(session, endedBefore, raw, notes);
      // It ended after the actor answered: what it wrote after that read is in the final record; take it too.
      if (!endedBefore && session.handle.phase() === "ended") taken = joinTakes(taken, await takeOutput(session, true, raw, notes));
    }
    const reading = readSession(session, Date.now());
    const answer = processAnswer({ operation, session, reading, taken, mode: plan.mode, outcome, notes, ...(ready !== undefined ? { ready } : {}) });
    if (reportedEnd(reading.state, taken) === null) return answer;
    const outer = outerCallOf(call.toolCallId);
    if (outer === null) {
      // A direct result that reports the completion consumes any owed wake and ends the session's registration.
      this.state.ledger.consume(shellJobName(session.id));
      endReported(session);
      this.state.registry.remove(session.id, reading.logPath);
    } else {
      session.replay = { ...answer, notes: [...answer.notes] };
      this.state.ledger.hold(shellJobName(session.id), outer);
    }
    return answer;
  }

  // ── wait_jobs: collecting ended jobs ──────────────────────────────────────────────────────────────────────────

  /** The registered session `id`; undefined when never known or no longer registered (`state.registry.removedLog`). */
  session(id: number): ShellSession | undefined {
    return this.state.registry.get(id);
  }

  /** wait_jobs reports this ended job: host/shell/collect.ts. */
  collectEnded(session: ShellSession, call: CallContext): ReturnType<typeof collectEnded> {
    return collectEnded(this.state, session, call.toolCallId);
  }

  private lookup(tool: string, id: number): ShellSession {
    const session = this.state.registry.get(id);
    if (session === undefined) throw new ToolError(this.state.registry.missing(tool, id));
    return session;
  }

  // ── list_sessions, set_on_exit, kill_session ─────────────────────────────────────────────────────────────────

  /** list_sessions as the tool answers it (`call`: the tool call's): the running jobs' listening ports are read first. */
  async listSessions(raw: unknown, call?: CallContext): Promise<ListResult> {
    unwrap(validateListSessions(raw));
    await this.state.persisted.adopted;
    await refreshListening(this.state.registry.all().filter((s) => s.handle.phase() !== "ended"));
    // The model sees each ended job's exit code here: a persisted job's end has reached it (its wake, if owed, still
    // comes, as the listing does not consume it). Only what had ended before the answer was made: it shows them so;
    // and only in a direct call: a codemode script's result may leave the listing out.
    const direct = call !== undefined && outerCallOf(call.toolCallId) === null;
    const ended = direct ? this.state.registry.all().filter((s) => s.handle.phase() === "ended") : [];
    const answer = this.list(raw);
    for (const session of ended) endReported(session);
    return answer;
  }

  /** The sessions as known now; `listening` is what the last listSessions read. */
  list(raw: unknown): ListResult {
    unwrap(validateListSessions(raw));
    const now = Date.now();
    return listAnswer(this.state.registry.all().map((s) => this.view(s, now)), this.state.persisted.elsewhere);
  }

  view(s: ShellSession, now: number): SessionEntryView {
    return sessionEntry(s, readSession(s, now), { collected: s.replay !== null, listening: listeningOf(s), piSession: this.state.ledger.piSession });
  }

  setOnExit(raw: unknown, call: CallContext): SetOnExitResult {
    const request = unwrap(validateSetOnExit(raw));
    const session = this.lookup("set_on_exit", request.sessionId);
    touchScript(this.state.scripts, call.toolCallId, session.id);
    const previous = session.onExit;
    session.onExit = request.onExit;
    if (session.persisted !== null && previous !== request.onExit) recordOnExit(session.persisted.dir, session.persisted.entry.project, request.onExit);
    const reading = readSession(session, Date.now());
    let effect: SetOnExitResult["effect"];
    if (reading.state.phase !== "ended") {
      effect = previous === request.onExit ? "unchanged" : request.onExit === "wake" ? "armed" : "disarmed";
    } else {
      effect = reading.state.stopBy !== null ? "unchanged" : this.state.ledger.setArmed(shellJobName(session.id), request.onExit === "wake", performance.now());
      this.state.onCompletion();
    }
    return setOnExitAnswer(session, reading, { previous_on_exit: previous, effect });
  }

  async kill(raw: unknown, call: CallContext): Promise<KillResult> {
    const request = unwrap(validateKill(raw));
    const session = this.lookup("kill_session", request.sessionId);
    touchScript(this.state.scripts, call.toolCallId, session.id);
    // The wait covers the actor's own escalation (grace, SIGKILL, confirmation) with room for a busy machine: on an idle
    // one a stop ends in milliseconds, and reporting `killed: false` for a job that is merely slow to be reaped would
    // leave the model with a job it must stop again.
    const graceMs = this.options.killGraceMs ?? KILL_GRACE_MS;
    return await killSession(this.state, session, request.signal, { graceMs, confirmMs: this.options.killConfirmMs ?? graceMs + KILL_CONFIRM_SLACK_MS });
  }

  // ── codemode receipts ─────────────────────────────────────────────────────────────────────────────────────────

  /** Whether a script with this outermost call id used shell jobs. */
  scriptTouched(outerCallId: string): boolean {
    return this.state.scripts.has(outerCallId);
  }

  /**
   * The outermost call finalized: its receipt text (or null if it never touched a shell job). A successful call's
   * receipt reports its completions, which consumes their wakes; a failed one leaves them eligible.
   */
  finalizeScript(outerCallId: string, success: boolean): string | null {
    return finalizeScript(this.state, outerCallId, success);
  }

  /** A run ended with scripts that never finalized: what they held becomes eligible again. */
  releaseScripts(): void {
    releaseScripts(this.state);
  }

  // ── shutdown ──────────────────────────────────────────────────────────────────────────────────────────────────

  /** Stops every owned job (session end): nothing is notified, nothing stays registered. */
  async stopAll(): Promise<void> {
    await stopAllIn(this.state);
  }
}
