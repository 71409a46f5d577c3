/**
 * The five shell tools as operations on the shared state and the job runtime, free of Pi: each takes raw
 * arguments plus the call's id, signal and cwd, and answers with a structured result (or throws a ShellToolError
 * whose message names the fields). install.ts turns them into Pi tools.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { ActorResult, TakenOutput } from "../../mailbox/protocol.ts";
import { MAX_TIMER_MS } from "../../mailbox/timings.ts";
import type { JobRuntime } from "../runtime-api.ts";
import { readEmptyPollCap, steerInterruptEnabled } from "./config.ts";
import { DEFAULT_PTY_SIZE, KILL_GRACE_MS, LOG_MAX_BYTES, OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES } from "./limits.ts";
import { receiptText, completionPhrase, type ReceiptLine } from "./notices.ts";
import type { KillResult, ListResult, ProcessResult, SessionEntryView, SetOnExitResult, WaitStatus } from "./result.ts";
import {
  createSession,
  elapsedOf,
  logPathOf,
  settleSession,
  supervisionOf,
  type ShellSession,
} from "./session.ts";
import type { ShellState } from "./state.ts";
import { validateExec, validateKill, validateListSessions, validateSetOnExit, validateWriteStdin, type Checked } from "./validate.ts";
import { planWait, type WaitPlan, type WaitPlanResult } from "./waits.ts";
import { readyResult, waitReady } from "./ready-wait.ts";
import { refreshListening, listeningOf } from "./listening.ts";

/** A job not yet ended is `starting` until its process exists, `running` from then on. */
function liveStatus(session: ShellSession): "starting" | "running" {
  return session.handle.phase() === "starting" ? "starting" : "running";
}

export class ShellToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ShellToolError";
  }
}

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

type WaitOutcome = "exit" | "deadline" | "cancelled" | "steered" | "ready";

/** How long past the grace kill_session waits for the stop to be confirmed before it reports `killed: false`. */
const KILL_CONFIRM_SLACK_MS = 10_000;

function planOrThrow(planned: WaitPlanResult): WaitPlan {
  if (!planned.ok) throw new ShellToolError(planned.error);
  return planned.plan;
}

function unwrap<T>(checked: Checked<T>): T {
  if (!checked.ok) throw new ShellToolError(checked.error);
  return checked.value;
}

/** The outermost call id of a nested (codemode) call, or null for a direct call. */
export function outerCallOf(toolCallId: string): string | null {
  const slash = toolCallId.indexOf("/");
  return slash === -1 ? null : toolCallId.slice(0, slash);
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
    if (process.platform === "win32") throw new ShellToolError("exec_command: shell jobs are not supported on Windows");
    this.rejectIfCancelled(call, "exec_command");
    const cwd = request.workdir === null ? call.cwd : resolve(call.cwd, request.workdir);
    let isDirectory = false;
    try {
      isDirectory = statSync(cwd).isDirectory();
    } catch {
      isDirectory = false;
    }
    if (!isDirectory) throw new ShellToolError(`exec_command: workdir ${JSON.stringify(cwd)} does not exist or is not a directory`);
    const plan = planOrThrow(planWait({ kind: "exec", yieldTimeMs: request.yieldTimeMs, emptyPollCap: { ok: true, capMs: null }, nowEpochMs: Date.now() }));

    const { registry, ledger } = this.state;
    const admission = registry.admit(logPathOf);
    if (!admission.ok) throw new ShellToolError(admission.error);
    for (const id of admission.evicted) ledger.forget(id);

    let handle;
    try {
      handle = this.options.runtime().start({
        kind: "shell",
        command: request.cmd,
        ...(request.shell !== null ? { shell: request.shell } : {}),
        cwd,
        io: request.tty ? { kind: "pty", cols: DEFAULT_PTY_SIZE.cols, rows: DEFAULT_PTY_SIZE.rows } : { kind: "pipes", stdin: true },
        timeoutMs: request.timeoutMs,
        killGraceMs: this.options.killGraceMs ?? KILL_GRACE_MS,
        log: { maxBytes: this.options.logMaxBytes ?? LOG_MAX_BYTES, onQuota: "stop" },
        unread: { headBytes: OUTPUT_HEAD_BYTES, tailBytes: OUTPUT_TAIL_BYTES },
        label: `shell: ${request.cmd.slice(0, 80)}`,
        ...(request.ready !== null || request.stallMs !== null ? { watch: { ready: request.ready, stallMs: request.stallMs } } : {}),
      });
    } catch (error) {
      throw new ShellToolError(`exec_command refused: ${(error as Error).message}`);
    }
    const session = createSession({
      // The runtime's number for the job: session N writes its log to `job_N`.
      id: handle.number,
      handle,
      cmd: request.cmd,
      tty: request.tty,
      cwd,
      timeoutMs: request.timeoutMs,
      onExit: request.onExit,
      onStall: request.onStall,
    });
    registry.add(session);
    this.watch(session);
    this.touch(call, session.id);

    if (request.ready !== null) {
      const ready = await waitReady(session, call.signal, steerInterruptEnabled(this.env()) ? this.steerListeners : null);
      const outcome: WaitOutcome = ready.kind === "timeout" ? "deadline" : ready.kind;
      const result = await this.answer("exec_command", session, plan, outcome, call, []);
      return { ...result, ready: readyResult(ready, session, Date.now()) };
    }
    const outcome = await this.waitOn(session, plan, call.signal);
    return await this.answer("exec_command", session, plan, outcome, call, []);
  }

  /**
   * Subscribes to the end; the end is routed through the state so a reloaded instance hears it. Output is not
   * watched at all: it stays in the job's actor until a read takes it.
   */
  private watch(session: ShellSession): void {
    const state = this.state;
    // A stuck episode wakes the model once, if the job asked for wakes; its flags are in supervision either way.
    session.handle.onNotice((notice) => {
      if (notice.kind !== "stalled" && notice.kind !== "waiting_for_input") return;
      if (state.closing || session.stoppedBy !== null || (session.onExit !== "wake" && session.onStall !== "wake")) return;
      state.ledger.stuck(
        { sessionId: session.id, cmd: session.cmd, kind: notice.kind, prompt: notice.detail, tty: session.tty, logPath: logPathOf(session) },
        performance.now(),
      );
      state.onCompletion();
    });
    void session.handle.done.then((result) => {
      const info = settleSession(session, result);
      for (const wake of [...session.exitWaiters]) wake();
      // An explicit stop owes nothing, and neither does a session that is shutting down.
      if (state.closing || session.stoppedBy !== null) return;
      state.ledger.completed(info, session.onExit === "wake", performance.now());
      state.onCompletion();
    });
  }

  // ── write_stdin ───────────────────────────────────────────────────────────────────────────────────────────────

  async writeStdin(raw: unknown, call: CallContext): Promise<ProcessResult> {
    const request = unwrap(validateWriteStdin(raw));
    const session = this.lookup("write_stdin", request.sessionId);
    this.rejectIfCancelled(call, "write_stdin");
    const nested = outerCallOf(call.toolCallId) !== null;
    this.touch(call, session.id);

    if (session.replay !== null) {
      const replay: ProcessResult = { ...session.replay, operation: "write_stdin", output_replayed: true, notes: [...session.replay.notes] };
      if (request.input !== null || request.endStdin || request.resize !== null) replay.notes.push("input was not sent: the process has ended");
      if (!nested) {
        // A direct read consumes the saved record; nested reads leave it for the model.
        this.state.ledger.consume(session.id);
        this.state.registry.remove(session.id, logPathOf(session));
      }
      return replay;
    }

    const notes: string[] = [];
    if (request.endStdin && session.tty) {
      throw new ShellToolError(`write_stdin: end_stdin is for pipes; session ${session.id} is a PTY (send "\\u0004" for Ctrl-D instead)`);
    }
    if (request.resize !== null && !session.tty) {
      throw new ShellToolError(`write_stdin: cols/rows resize a PTY; session ${session.id} uses pipes`);
    }
    if (session.result === null) {
      if (request.resize !== null) {
        const ack = await session.handle.resize(request.resize.cols, request.resize.rows);
        if (!ack.ok) throw new ShellToolError(`write_stdin: resize of session ${session.id} failed: ${ack.error}`);
        notes.push(`resized to ${request.resize.cols}x${request.resize.rows}`);
      }
      if (request.input !== null) {
        const ack = await session.handle.write(request.input);
        if (!ack.ok) throw new ShellToolError(`write_stdin: input to session ${session.id} was not accepted: ${ack.error}`);
        notes.push(`wrote ${request.input.length} bytes`);
      }
      if (request.endStdin) {
        const ack = await session.handle.endStdin();
        if (!ack.ok) throw new ShellToolError(`write_stdin: closing stdin of session ${session.id} failed: ${ack.error}`);
        notes.push("stdin closed");
      }
    } else if (request.input !== null || request.endStdin || request.resize !== null) {
      notes.push("input was not sent: the process has ended");
    }

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
    return await this.answer("write_stdin", session, plan, outcome, call, notes);
  }

  // ── waiting and answering ─────────────────────────────────────────────────────────────────────────────────────

  private rejectIfCancelled(call: CallContext, tool: string): void {
    if (call.signal?.aborted) throw new ShellToolError(`${tool}: the call was cancelled before the read; no output was consumed`);
  }

  /** Waits per plan; returns early on exit, cancellation or (unless disabled) human steering. */
  private waitOn(session: ShellSession, plan: WaitPlan, signal: AbortSignal | undefined): Promise<WaitOutcome> {
    if (session.result !== null) return Promise.resolve("exit");
    if (plan.durationMs <= 0) return Promise.resolve("deadline");
    if (signal?.aborted) return Promise.resolve("cancelled");
    const steerable = steerInterruptEnabled(this.env());
    return new Promise<WaitOutcome>((resolveWait) => {
      const deadline = performance.now() + plan.durationMs;
      let timer: ReturnType<typeof setTimeout> | null = null;
      const finish = (outcome: WaitOutcome): void => {
        if (timer !== null) clearTimeout(timer);
        session.exitWaiters.delete(onExit);
        signal?.removeEventListener("abort", onAbort);
        this.steerListeners.delete(onSteer);
        resolveWait(outcome);
      };
      const arm = (): void => {
        const left = deadline - performance.now();
        if (left <= 0) return finish("deadline");
        // Longer absolute waits re-arm: a timer takes at most MAX_TIMER_MS as given.
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      };
      const onExit = (): void => finish("exit");
      const onAbort = (): void => finish("cancelled");
      const onSteer = (): void => finish("steered");
      session.exitWaiters.add(onExit);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (steerable) this.steerListeners.add(onSteer);
      arm();
    });
  }

  /** Human steering arrived: every wait in progress returns now. */
  steer(): void {
    for (const listener of [...this.steerListeners]) listener();
  }

  /** One read: the bounded head and tail since the previous one, asked of the job's actor (or its final record). */
  private async takeOutput(session: ShellSession, final: boolean, notes: string[]): Promise<TakenOutput> {
    try {
      return await session.handle.takeUnread(OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES, final);
    } catch (error) {
      notes.push(`output could not be read now (${(error as Error).message}); it stays unread`);
      return { text: "", bytes: 0, omittedBytes: 0 };
    }
  }

  private async answer(
    operation: ProcessResult["operation"],
    session: ShellSession,
    plan: WaitPlan,
    outcome: WaitOutcome,
    call: CallContext,
    notes: string[],
  ): Promise<ProcessResult> {
    const outer = outerCallOf(call.toolCallId);
    // A cancelled wait leaves the output unread: the cancelled result may never reach the model.
    const consume = outcome !== "cancelled";
    // The job may end while the read is in flight; the take then comes from its final record, whole.
    const endedBefore = session.result !== null;
    let taken = consume ? await this.takeOutput(session, endedBefore, notes) : { text: "", bytes: 0, omittedBytes: 0 };
    if (consume && !endedBefore && session.result !== null) {
      // It ended after the actor answered: what it wrote after that read is in the final record; take it too.
      const rest = await this.takeOutput(session, true, notes);
      taken = {
        text: taken.text + rest.text,
        bytes: taken.bytes + rest.bytes,
        omittedBytes: taken.omittedBytes + rest.omittedBytes,
        redactions: (taken.redactions ?? 0) + (rest.redactions ?? 0),
      };
    }
    const now = Date.now();
    const ended = session.result !== null && session.ending !== null;
    if (!consume) notes.push(`output left unread (${session.handle.figures().unreadBytes} bytes); read it with write_stdin`);
    const waitStatus: WaitStatus = ended && consume ? "completed" : outcome === "cancelled" ? "cancelled" : outcome === "steered" ? "steered" : outcome === "ready" ? "ready" : plan.mode === "immediate" ? "snapshot" : "deadline";
    const base = {
      operation,
      output: taken.text,
      output_bytes: taken.bytes,
      output_omitted_bytes: taken.omittedBytes,
      output_rendered: session.tty ? "terminal" : "text",
      ...(taken.redactions ? { redactions: taken.redactions } : {}),
      output_replayed: false,
      output_bytes_total: session.handle.figures().bytes,
      log_path: logPathOf(session),
      wait_mode: plan.mode,
      wait_status: waitStatus,
      supervision: supervisionOf(session, now),
      cmd: session.cmd,
      tty: session.tty,
      on_exit: session.onExit,
      elapsed_ms: elapsedOf(session, now),
      notes,
    } as const;
    if (!ended || !consume) {
      const status = ended ? session.ending!.status : liveStatus(session);
      return { ...base, status, running: status === "running", session_id: session.id };
    }
    const result = session.result!;
    const ending = session.ending!;
    const final: ProcessResult = {
      ...base,
      status: ending.status,
      running: false,
      exit_code: result.exitCode,
      signal: result.signal,
      failure: ending.failure,
    };
    if (outer === null) {
      // A direct result that reports the completion consumes any owed wake and ends the session's registration.
      this.state.ledger.consume(session.id);
      this.state.registry.remove(session.id, logPathOf(session));
    } else {
      session.replay = { ...final, notes: [...final.notes] };
      this.state.ledger.hold(session.id, outer);
    }
    return final;
  }

  private lookup(tool: string, id: number): ShellSession {
    const session = this.state.registry.get(id);
    if (session !== undefined) return session;
    const log = this.state.registry.removedLog(id);
    if (log !== undefined) {
      throw new ShellToolError(
        `${tool}: session_id ${id} is no longer registered (collected, stopped or evicted); its log remains at ${log ?? "(no log)"}`,
      );
    }
    const known = this.state.registry.all().map((s) => s.id);
    throw new ShellToolError(`${tool}: unknown session_id ${id}; known sessions: ${known.length > 0 ? known.join(", ") : "none"}`);
  }

  private touch(call: CallContext, sessionId: number): void {
    const outer = outerCallOf(call.toolCallId);
    if (outer === null) return;
    let touched = this.state.scripts.get(outer);
    if (touched === undefined) {
      touched = new Set();
      this.state.scripts.set(outer, touched);
    }
    touched.add(sessionId);
  }

  // ── list_sessions, set_on_exit, kill_session ─────────────────────────────────────────────────────────────────

  /** list_sessions as the tool answers it: the running jobs' listening ports are read from their actors first. */
  async listSessions(raw: unknown): Promise<ListResult> {
    unwrap(validateListSessions(raw));
    await refreshListening(this.state.registry.all().filter((s) => s.result === null));
    return this.list(raw);
  }

  /** The sessions as known now; `listening` is what the last listSessions read. */
  list(raw: unknown): ListResult {
    unwrap(validateListSessions(raw));
    const now = Date.now();
    const sessions = this.state.registry.all().map((s) => this.view(s, now));
    const active = sessions.filter((s) => s.status === "starting" || s.running).length;
    const completed = sessions.length - active;
    return { operation: "list_sessions", active_count: active, completed_count: completed, just_exited_count: completed, sessions };
  }

  view(s: ShellSession, now: number): SessionEntryView {
    const ended = s.result !== null && s.ending !== null;
    const status = ended ? s.ending!.status : liveStatus(s);
    const figures = s.handle.figures();
    return {
      session_id: s.id,
      cmd: s.cmd,
      tty: s.tty,
      running: status === "running",
      status,
      exit_code: s.result?.exitCode ?? null,
      signal: s.result?.signal ?? null,
      on_exit: s.onExit,
      collected: s.replay !== null,
      output_bytes_total: figures.bytes,
      output_pending_bytes: figures.unreadBytes,
      started_utc: new Date(s.startedEpochMs).toISOString(),
      elapsed_ms: elapsedOf(s, now),
      log_path: logPathOf(s),
      supervision: supervisionOf(s, now),
      ...(status === "running" && listeningOf(s) !== undefined ? { listening: listeningOf(s) } : {}),
    };
  }

  setOnExit(raw: unknown, call: CallContext): SetOnExitResult {
    const request = unwrap(validateSetOnExit(raw));
    const session = this.lookup("set_on_exit", request.sessionId);
    this.touch(call, session.id);
    const previous = session.onExit;
    session.onExit = request.onExit;
    let effect: SetOnExitResult["effect"];
    if (session.result === null) {
      effect = previous === request.onExit ? "unchanged" : request.onExit === "wake" ? "armed" : "disarmed";
    } else {
      effect = session.stoppedBy !== null ? "unchanged" : this.state.ledger.setArmed(session.id, request.onExit === "wake", performance.now());
      this.state.onCompletion();
    }
    const ended = session.ending;
    return {
      operation: "set_on_exit",
      session_id: session.id,
      cmd: session.cmd,
      on_exit: request.onExit,
      previous_on_exit: previous,
      running: ended === null,
      status: ended?.status ?? "running",
      effect,
    };
  }

  async kill(raw: unknown, call: CallContext): Promise<KillResult> {
    const request = unwrap(validateKill(raw));
    const session = this.lookup("kill_session", request.sessionId);
    this.touch(call, session.id);
    const { ledger, registry } = this.state;
    if (session.result !== null) {
      // Stopping a finished job discards it: no wake, no replay; the log stays.
      ledger.suppress(session.id);
      registry.remove(session.id, logPathOf(session));
      return this.killResult(session, request.signal, true, false, "the job had already ended; it was removed from the registry (its log remains)");
    }
    session.stoppedBy = "tool";
    session.stopping = true;
    ledger.suppress(session.id);
    // The wait covers the actor's own escalation (grace, SIGKILL, confirmation) with room for a busy machine: on an idle
    // one a stop ends in milliseconds, and reporting `killed: false` for a job that is merely slow to be reaped would
    // leave the model with a job it must stop again.
    const confirmMs = this.options.killConfirmMs ?? (this.options.killGraceMs ?? KILL_GRACE_MS) + KILL_CONFIRM_SLACK_MS;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const outcome = await Promise.race([
      session.handle.stop(request.signal).then(() => "ended" as const),
      new Promise<"unconfirmed">((resolveTimer) => {
        timer = setTimeout(() => resolveTimer("unconfirmed"), confirmMs);
      }),
    ]);
    if (timer !== null) clearTimeout(timer);
    // The done handler may not have run yet when stop() resolves.
    if (outcome === "ended" && session.result === null) settleSession(session, session.handle.result()!);
    const ended = session.result as ActorResult | null;
    if (outcome === "unconfirmed" || ended?.cleanup !== "confirmed") {
      return this.killResult(
        session,
        request.signal,
        false,
        false,
        outcome === "unconfirmed"
          ? `the stop was not confirmed within ${confirmMs} ms; the job stays registered (it is still being stopped)`
          : "the process ended but its process group could not be confirmed gone; the job stays registered",
      );
    }
    registry.remove(session.id, logPathOf(session));
    return this.killResult(session, request.signal, false, true, "the process group was stopped; no wake will be sent");
  }

  private killResult(session: ShellSession, signal: string, alreadyExited: boolean, killed: boolean, message: string): KillResult {
    const now = Date.now();
    const supervision = supervisionOf(session, now);
    const cleanup = killed ? supervision.cleanup : session.result === null ? "unconfirmed" : supervision.cleanup;
    const ended = session.ending;
    return {
      operation: "kill_session",
      session_id: session.id,
      cmd: session.cmd,
      signal,
      killed,
      escalated: session.result?.escalated ?? false,
      already_exited: alreadyExited,
      status: ended?.status ?? "running",
      running: session.result === null,
      exit_code: session.result?.exitCode ?? null,
      exit_signal: session.result?.signal ?? null,
      log_path: logPathOf(session),
      supervision: { ...supervision, cleanup },
      cleanup,
      message,
    };
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
    const touched = this.state.scripts.get(outerCallId);
    if (touched === undefined) return null;
    this.state.scripts.delete(outerCallId);
    const lines: ReceiptLine[] = [...touched].map((id) => {
      const session = this.state.registry.get(id);
      if (session === undefined) {
        return { sessionId: id, state: "ended", running: false, logPath: this.state.registry.removedLog(id) ?? null, replayable: false, gone: true };
      }
      const running = session.result === null;
      return {
        sessionId: id,
        state: running ? "running" : session.ending ? completionPhrase({ ...session.ending, exitCode: session.result!.exitCode, signal: session.result!.signal, failureReason: session.ending.failure?.reason ?? null }) : "ended",
        running,
        logPath: logPathOf(session),
        replayable: session.replay !== null,
        gone: false,
      };
    });
    this.state.ledger.finalize(outerCallId, success, performance.now());
    this.state.onCompletion();
    return receiptText(lines);
  }

  /** A run ended with scripts that never finalized: what they held becomes eligible again. */
  releaseScripts(): void {
    if (this.state.scripts.size === 0) return;
    this.state.scripts.clear();
    this.state.ledger.releaseAllHeld(performance.now());
    this.state.onCompletion();
  }

  // ── shutdown ──────────────────────────────────────────────────────────────────────────────────────────────────

  /** Stops every owned job (session end): nothing is notified, nothing stays registered. */
  async stopAll(): Promise<void> {
    await stopAllIn(this.state);
  }
}

export async function stopAllIn(state: ShellState): Promise<void> {
  state.closing = true;
  const running = state.registry.all().filter((s) => s.result === null);
  for (const s of running) {
    s.stoppedBy = "session_shutdown";
    s.stopping = true;
  }
  await Promise.all(running.map((s) => s.handle.stop("SIGTERM", { bounded: true }).catch(() => undefined)));
  state.registry.clear();
  state.ledger.clear();
  state.scripts.clear();
}
