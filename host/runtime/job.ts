/**
 * The host's side of one job, the handle the tool layers hold (host/runtime/api.ts). It reads the job's shared cell
 * (figures, phase, pid, pgid), asks the actor for output only when someone reads it (host/runtime/actor-link.ts), and
 * owns the job's state: its phase (mailbox/lifecycle.ts, from the cell), who asked for a stop, and the terminal
 * result once it is in. The supervisor of its actor (host/runtime/supervisor.ts) ends the job itself when the actor
 * cannot; an actor that is only starved of CPU is waited for (host/runtime/heartbeat.ts).
 */
import { performance } from "node:perf_hooks";
import { MessageChannel } from "node:worker_threads";
import { protocolCheckers } from "../../mailbox/check.ts";
import { createJobCell, JobCellReader } from "../../mailbox/cell.ts";
import type { Remote } from "comlink";
import type { ActorControl, StopSignal, WriteAck } from "../../mailbox/control.ts";
import { didNotAnswer, jobHasEnded, stoppedBeforeStart } from "../../mailbox/errors.ts";
import { jobPhase, LIFECYCLE, startStageOf } from "../../mailbox/lifecycle.ts";
import type { ActorToHost, Notice, ReadyReport } from "../../mailbox/messages.ts";
import type { RetainedWindow, TakenOutput } from "../../mailbox/output.ts";
import type { ActorResult } from "../../mailbox/result.ts";
import type { JobSpec } from "../../mailbox/spec.ts";
import { ActorLink } from "./actor-link.ts";
import { Heartbeat, readActorThread } from "./heartbeat.ts";
import type { ActorPool } from "./pool.ts";
import { Supervisor, supervisorResult } from "./supervisor.ts";
import type { JobEnded, JobFigures, JobHandle, JobKind, JobState, StartStage, StopRequester } from "./api.ts";

const EMPTY_WINDOW: RetainedWindow = { lines: [], droppedLines: 0, droppedBytes: 0 };
const NOTHING_TAKEN: TakenOutput = { text: "", bytes: 0, omittedBytes: 0 };

export interface JobOptions {
  spec: JobSpec;
  number: number;
  kind: JobKind;
  label: string;
  pool: ActorPool;
  logBudget: SharedArrayBuffer;
  /** Check every message of the data port, both ways, against its schema (mailbox/check.ts). */
  checkMessages: boolean;
  /** The process exists and its pid and pgid are published (the crash registry records it). */
  onSpawned?(job: Job, spawned: { pid: number; pgid: number; startedAt: number }): void;
  onEnded(job: Job): void;
}

export class Job implements JobHandle {
  readonly id: string;
  readonly number: number;
  readonly kind: JobKind;
  readonly label: string;
  readonly spec: JobSpec;
  readonly requestedAt = performance.now();
  readonly requestedAtEpoch = Date.now();
  readonly done: Promise<ActorResult>;

  private final: ActorResult | null = null;
  /** Who asked for the stop, from the first request on (see JobState). */
  private stopBy: StopRequester | null = null;
  /** Told synchronously when the job settles (see JobHandle.onEnd). */
  private readonly endListeners = new Set<(ended: JobEnded) => void>();
  private resolveDone!: (result: ActorResult) => void;
  private readonly cell: JobCellReader;
  private readonly link: ActorLink;
  private readonly supervisor: Supervisor;
  private readonly abort = new AbortController();
  private readonly noticeListeners = new Set<(notice: Notice) => void>();
  /** The window as last read; the final one once ended. */
  private window: RetainedWindow = EMPTY_WINDOW;
  private windowRefresh: Promise<RetainedWindow> | null = null;
  /** A shell job's unread output as of its end, until a take consumes it. */
  private finalUnread: TakenOutput | null = null;
  /** When a take of the unread output last answered (monotonic ms). */
  private lastTake: number | null = null;
  /** The actor's heartbeat as the supervisor sees it; it has nothing to judge until the actor starts on a thread. */
  private readonly heartbeat: Heartbeat;
  private spawnWaiters: (() => void)[] = [];
  private readonly onEnded: (job: Job) => void;
  private readonly onSpawned: JobOptions["onSpawned"];
  /** Asked whether this job's start still waits for a thread (startStage). */
  private readonly pool: ActorPool;
  /** The actor's readiness report, once it came; null until then (and for good when the job ended first). */
  private readyReport: ReadyReport | null = null;
  private readonly readyWaiters: ((report: ReadyReport | null) => void)[] = [];

  constructor(options: JobOptions) {
    this.id = options.spec.id;
    this.number = options.number;
    this.kind = options.kind;
    this.label = options.label;
    this.spec = options.spec;
    this.onEnded = options.onEnded;
    this.onSpawned = options.onSpawned;
    this.pool = options.pool;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    const cell = createJobCell();
    this.cell = new JobCellReader(cell);
    const heartbeat = (this.heartbeat = new Heartbeat(
      () => (this.cell.thread().started ? this.cell.heartbeat() : null),
      () => readActorThread(this.cell.thread()),
    ));
    this.supervisor = new Supervisor({
      spec: this.spec,
      requestedAt: this.requestedAt,
      cell: this.cell,
      heartbeat,
      ended: () => this.final !== null,
      settle: (result) => this.settle(result),
      endThread: (reason) => this.abort.abort(new Error(reason)),
    });
    const data = new MessageChannel();
    const control = new MessageChannel();
    this.link = new ActorLink({
      data: data.port1,
      control: control.port1,
      checks: options.checkMessages ? protocolCheckers() : null,
      heartbeat,
      receive: (message) => this.receive(message),
      invalid: (error) => void this.supervisor.takeOver("actor_crashed", error.message),
    });
    const task = options.pool.run(
      { spec: options.spec, data: data.port2, control: control.port2, cell, logBudget: options.logBudget },
      this.abort.signal,
    );
    this.taskSettled = task.then(
      () => this.supervisor.taskSettled(null),
      (error: unknown) => this.supervisor.taskSettled(error),
    );
  }

  /**
   * Settles when the pool task has, i.e. its thread has booted, run the actor and is idle again (or the task never
   * started). A job can end long before that: one cancelled while its thread still boots.
   */
  readonly taskSettled: Promise<void>;

  /** The supervisor took over but could not end the thread (it owns a PTY, or was inside spawn). */
  get threadLeftAlone(): boolean {
    return this.supervisor.threadLeftAlone;
  }

  // ── JobHandle ─────────────────────────────────────────────────────────────────────────────────────────────────

  state = (): JobState => (this.final ? this.ended(this.final) : { phase: this.livePhase(), stopBy: this.stopBy });
  phase = (): JobState["phase"] => jobPhase(this.cell.state(), this.final !== null);
  /**
   * Each stage from the fact that owns it (mailbox/lifecycle.ts, startStageOf): the cell says whether the actor claimed
   * the spawn (`spawning`) or is past it, and before the claim the pool says whether the start still waits there or was
   * handed to a thread. A job the host cancelled has ended by then (stop and takeOver settle it at once).
   */
  startStage = (): StartStage | null => (this.final ? null : startStageOf(this.cell.state(), () => this.pool.waits(this.id)));
  pid = (): number | null => this.cell.read().pid;
  pgid = (): number | null => this.cell.pgid();
  deadline = (): number | null => {
    const started = this.cell.read().startedEpochMs;
    return started === null ? null : this.requestedAt + (started - this.requestedAtEpoch) + this.spec.timeoutMs;
  };
  result = (): ActorResult | null => this.final;

  figures = (): JobFigures => {
    const cell = this.cell.read();
    return {
      bytes: cell.bytes,
      lines: cell.lines,
      lastOutputEpochMs: cell.lastOutputEpochMs,
      paused: cell.paused,
      logBytes: this.final?.log.bytes ?? cell.logBytes,
      logTruncated: this.final?.log.truncated ?? cell.logTruncated,
      unreadBytes: this.final ? (this.finalUnread?.bytes ?? 0) : cell.unreadBytes,
      evidenceLines: this.final?.evidence.count ?? cell.evidenceLines,
      stalled: cell.stalled,
      waitingForInput: cell.waitingForInput,
      // An ended job is no runaway; its last figures stay readable.
      runaway: this.final === null && cell.runaway,
      usage: cell.usage,
    };
  };

  lastReadAt = (): number | null => this.lastTake;

  onEnd(listener: (ended: JobEnded) => void): () => void {
    if (this.final) {
      listener(this.ended(this.final));
      return () => {};
    }
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  onNotice(listener: (notice: Notice) => void): () => void {
    this.noticeListeners.add(listener);
    return () => this.noticeListeners.delete(listener);
  }

  retained(refresh = true): RetainedWindow {
    if (refresh && !this.final && this.windowRefresh === null) {
      this.windowRefresh = this.readWindow().finally(() => (this.windowRefresh = null));
      this.windowRefresh.catch(() => {});
    }
    return this.window;
  }

  async readWindow(): Promise<RetainedWindow> {
    if (this.final) return this.window;
    const window = await this.link.read<RetainedWindow>({ what: "window" });
    if (!this.final) this.window = window;
    return window;
  }

  async takeUnread(final: boolean, raw: boolean): Promise<TakenOutput> {
    if (this.final) return this.takeFinalUnread(raw);
    const taken = await this.link.read<TakenOutput>({ what: "unread", raw, final });
    this.lastTake = performance.now();
    return taken;
  }

  readiness(): Promise<ReadyReport | null> {
    if (this.readyReport !== null || this.final || !this.spec.watch?.ready) return Promise.resolve(this.readyReport);
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  async listening(): Promise<number[] | null> {
    if (this.final) return [];
    if (this.phase() === "starting") return [];
    try {
      return await this.link.read<number[] | null>({ what: "ports" });
    } catch {
      return null;
    }
  }

  write(bytes: Uint8Array): Promise<WriteAck> {
    return this.call((control) => control.write(bytes));
  }

  endStdin(): Promise<WriteAck> {
    return this.call((control) => control.endStdin());
  }

  resize(cols: number, rows: number): Promise<WriteAck> {
    return this.call((control) => control.resize(cols, rows));
  }

  stop(signal: StopSignal = "SIGTERM", options: { bounded?: boolean; by?: StopRequester } = {}): Promise<ActorResult> {
    if (this.final) return this.done;
    this.stopBy ??= options.by ?? "tool";
    if (this.cell.cancel()) {
      // Cancelled before the actor claimed the spawn: no process was or will be started, so the job is over now.
      this.settle(supervisorResult({ spec: this.spec, requestedAt: this.requestedAt, cell: this.cell }, "stopped", stoppedBeforeStart(), { confirmed: true, escalated: false }));
      return this.done;
    }
    this.link.stop(signal);
    this.supervisor.stopAsked(options.bounded ?? false);
    return this.done;
  }

  // ── State ─────────────────────────────────────────────────────────────────────────────────────────────────────

  /** The phase of a job whose result is not in: `running` exactly when the process exists, whatever is in flight. */
  private livePhase(): Exclude<JobState["phase"], "ended"> {
    return LIFECYCLE[this.cell.state()].host;
  }

  private ended(result: ActorResult): JobEnded {
    return { phase: "ended", result, stopBy: this.stopBy };
  }

  private async call(fn: (control: Remote<ActorControl>) => Promise<WriteAck>): Promise<WriteAck> {
    if (this.final) return { ok: false, error: jobHasEnded() };
    if (this.phase() === "starting") await this.untilSpawnedOrEnded();
    if (this.final) return { ok: false, error: jobHasEnded() };
    try {
      return await this.link.call(fn);
    } catch (error) {
      return { ok: false, error: didNotAnswer((error as Error).message) };
    }
  }

  private untilSpawnedOrEnded(): Promise<void> {
    return new Promise((resolve) => this.spawnWaiters.push(resolve));
  }

  finalOutput(): string | null {
    return this.finalUnread?.text ?? null;
  }

  private takeFinalUnread(raw: boolean): TakenOutput {
    const taken = this.finalUnread ?? NOTHING_TAKEN;
    this.finalUnread = null;
    return inForm(taken, raw);
  }

  private receive(message: ActorToHost): void {
    if (this.final) return;
    switch (message.type) {
      case "spawned":
        // A look now dates a heartbeat that stands still from the spawn at the latest.
        this.heartbeat.stillFor();
        this.supervisor.spawned();
        for (const wake of this.spawnWaiters.splice(0)) wake();
        this.onSpawned?.(this, message);
        return;
      case "window":
      case "ports":
      case "unread":
        this.link.replied(message);
        return;
      case "notice":
        for (const listener of this.noticeListeners) listener(message);
        return;
      case "ready":
        this.readyReport = message.report;
        for (const wake of this.readyWaiters.splice(0)) wake(message.report);
        return;
      case "exit":
        this.settle(message.result, message.window, message.unread);
        return;
    }
  }

  private settle(result: ActorResult, window?: RetainedWindow, unread?: TakenOutput | null): void {
    if (this.final) return;
    this.final = result;
    if (window) this.window = window;
    this.finalUnread = unread ?? null;
    this.supervisor.ended();
    for (const wake of this.spawnWaiters.splice(0)) wake();
    this.link.answerFromExit({ window: this.window, takeUnread: (raw) => this.takeFinalUnread(raw) });
    for (const wake of this.readyWaiters.splice(0)) wake(null);
    this.link.close();
    this.noticeListeners.clear();
    this.onEnded(this);
    this.resolveDone(result);
    // Last, so that a listener that throws cannot leave the job half settled; still before any `done` callback runs.
    const ended = this.ended(result);
    for (const listener of [...this.endListeners]) listener(ended);
    this.endListeners.clear();
  }
}

/** A job's last read, taken folded with its raw text beside it, in the form a caller asked for. */
function inForm(taken: TakenOutput, raw: boolean): TakenOutput {
  const { raw: rawText, foldedLines, ...read } = taken;
  if (raw) return rawText === undefined ? read : { ...read, text: rawText };
  return foldedLines === undefined ? read : { ...read, foldedLines };
}
