/**
 * The host's side of one job: it reads the job's shared cell (figures, state, pid, pgid), asks the actor for output
 * only when someone reads it, and is the supervisor of that one actor. The process-group id is in the cell from the
 * moment the process exists, so a crashed or hung actor cannot keep a process alive: the job kills the group itself
 * and reports a failure with a reason. An actor that is only starved of CPU is waited for (host/runtime/heartbeat.ts).
 */
import { performance } from "node:perf_hooks";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import type { Remote } from "comlink";
import { Comlink, createNodeEndpoint } from "../../shared/comlink-endpoint.ts";
import { signalTagged, taggedProcesses } from "../../shared/job-tag.ts";
import { stopGroup } from "../../shared/process-group.ts";
import { protocolCheckers } from "../../mailbox/check.ts";
import { createJobCell, JobCellReader } from "../../mailbox/cell.ts";
import { typedPort, type TypedPort } from "../../mailbox/port.ts";
import type {
  ActorToHost,
  HostToActor,
  ActorControl,
  ActorResult,
  ActorSnapshot,
  EndCause,
  JobSpec,
  Notice,
  ReadyReport,
  RetainedWindow,
  StopSignal,
  TakenOutput,
  WriteAck,
} from "../../mailbox/protocol.ts";
import { MAX_TIMER_MS, STREAM_CLOSE_ROUNDS, STREAM_CLOSE_WAIT_MS } from "../../mailbox/timings.ts";
import { Heartbeat, OwnClock, readThread, type ThreadReading } from "./heartbeat.ts";
import type { ActorPool } from "./pool.ts";
import type { JobEnded, JobFigures, JobHandle, JobKind, JobPhase, JobState, StartStage, StopRequester } from "./api.ts";

/** How late an actor may be, past its own deadline, before the supervisor takes over. */
const SUPERVISOR_SLACK_MS = 1000;
/** Time an actor has, after the group's grace, to drain streams and report. */
const ACTOR_FINISH_MS = STREAM_CLOSE_WAIT_MS * STREAM_CLOSE_ROUNDS;
/** A bounded stop (shutdown) is taken over by the supervisor this long after the grace… */
const BOUNDED_STOP_SLACK_MS = 500;
/** …which then has this long to kill and confirm, so that it settles within the grace and a second. */
const BOUNDED_TAKEOVER_MS = 400;
/** After the pool task settles, the exit message (on another port) may still be in flight. */
const EXIT_MESSAGE_WAIT_MS = 1000;
/** The same, once the actor's cell says it finished and so sent its exit message. */
const SENT_EXIT_WAIT_MS = 30_000;
/**
 * An actor past its deadline that is not hung is slow (a busy machine starves its thread), however long its heartbeat
 * stood still (host/runtime/heartbeat.ts): the supervisor lets it finish the job itself, looking again this often.
 */
const LATE_ACTOR_RECHECK_MS = 500;
/**
 * However alive a late actor looks, once it has had this long past its deadline with a CPU to finish on, the
 * supervisor kills what the job started itself. Time its thread spent waiting for a CPU does not count: a starved
 * actor is never taken over for being late.
 */
const LATE_ACTOR_LIMIT_MS = 60_000;
/** How long a control call still waiting when the job ends may take to get its answer (see settle). */
const CONTROL_ANSWER_GRACE_MS = 2_000;
/** How long the supervisor waits for a thread inside spawn() to publish what it started. */
const SPAWN_PUBLISH_WAIT_MS = 5000;

const EMPTY_WINDOW: RetainedWindow = { lines: [], droppedLines: 0, droppedBytes: 0 };
const NOTHING_TAKEN: TakenOutput = { text: "", bytes: 0, omittedBytes: 0 };

export interface JobOptions {
  spec: JobSpec;
  number: number;
  kind: JobKind;
  label: string;
  pool: ActorPool;
  logBudget: SharedArrayBuffer;
  checkMessages: boolean;
  /** The process exists and its pid and pgid are published (the crash registry records it). */
  onSpawned?(job: Job, spawned: { pid: number; pgid: number; startedAt: number }): void;
  onEnded(job: Job): void;
}

/** How a job ends when the supervisor ends it: its actor failed, or a bounded stop was finished for it. */
type SupervisorCause = Extract<EndCause, "actor_crashed" | "actor_unresponsive" | "stopped">;

type PendingRead =
  | { what: "window"; resolve(window: RetainedWindow): void }
  | { what: "ports"; resolve(ports: number[] | null): void }
  | { what: "unread"; resolve(taken: TakenOutput): void };

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
  private readonly mailbox: TypedPort<HostToActor, ActorToHost>;
  private readonly dataPort: MessagePort;
  private readonly controlPort: MessagePort;
  private readonly control: Remote<ActorControl>;
  private readonly abort = new AbortController();
  private readonly noticeListeners = new Set<(notice: Notice) => void>();
  private readonly reads = new Map<number, PendingRead>();
  private nextReadId = 0;
  /** The window as last read; the final one once ended. */
  private window: RetainedWindow = EMPTY_WINDOW;
  private windowRefresh: Promise<RetainedWindow> | null = null;
  /** A shell job's unread output as of its end, until a take consumes it. */
  private finalUnread: TakenOutput | null = null;
  private backstop: ReturnType<typeof setTimeout> | null = null;
  private backstopAt = Number.POSITIVE_INFINITY;
  /** What the armed backstop ends the job as, if it fires; null before one is armed. */
  private backstopCause: SupervisorCause | null = null;
  private takingOver = false;
  /** The actor's heartbeat as the supervisor sees it; it has nothing to judge until the actor starts on a thread. */
  private readonly heartbeat: Heartbeat;
  /** From the first time the supervisor found the actor past a deadline and let it go on: its time since then. */
  private lateClock: OwnClock | null = null;
  /** Counts the backstop's timers, so that a verdict still being read when the backstop is re-armed is dropped. */
  private backstopRound = 0;
  /** When a bounded stop's takeover must be over (monotonic ms); null: the takeover takes what it needs. */
  private takeOverBy: number | null = null;
  /** The supervisor took over but could not end the thread (it owns a PTY, or was inside spawn). */
  threadLeftAlone = false;
  private spawnWaiters: (() => void)[] = [];
  /** Calls and reads in flight, told when the job ends before the actor answered them. */
  private readonly endWaiters = new Set<() => void>();
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
    this.heartbeat = new Heartbeat(
      () => (this.cell.thread().started ? this.cell.heartbeat() : null),
      () => this.readActorThread(),
    );
    const data = new MessageChannel();
    const control = new MessageChannel();
    this.dataPort = data.port1;
    this.controlPort = control.port1;
    const checks = options.checkMessages ? protocolCheckers() : null;
    this.mailbox = typedPort<HostToActor, ActorToHost>(
      data.port1,
      checks && { outgoing: checks.hostToActor, incoming: checks.actorToHost },
    );
    this.mailbox.receive(
      (message) => this.receive(message),
      (error) => void this.takeOver("actor_crashed", error.message),
    );
    this.control = Comlink.wrap<ActorControl>(createNodeEndpoint(control.port1));
    const task = options.pool.run(
      {
        spec: options.spec,
        data: data.port2,
        control: control.port2,
        cell,
        logBudget: options.logBudget,
        checkMessages: options.checkMessages,
      },
      this.abort.signal,
    );
    this.taskSettled = task.then(
      () => this.onTaskSettled(null),
      (error: unknown) => this.onTaskSettled(error),
    );
  }

  /**
   * Settles when the pool task has, i.e. its thread has booted, run the actor and is idle again (or the task never
   * started). A job can end long before that: one cancelled while its thread still boots.
   */
  readonly taskSettled: Promise<void>;

  // ── JobHandle ─────────────────────────────────────────────────────────────────────────────────────────────────

  state = (): JobState => (this.final ? this.ended(this.final) : { phase: this.livePhase(), stopBy: this.stopBy });
  phase = (): JobPhase => (this.final ? "ended" : this.livePhase());
  /**
   * Each stage from the fact that owns it: the cell says whether the actor claimed the spawn (`spawning`) or is past it,
   * and before the claim the pool says whether the start still waits there or was handed to a thread. A job the host
   * cancelled has ended by then (stop and takeOver settle it at once), so `cancelled` reads as no stage.
   */
  startStage = (): StartStage | null => {
    if (this.final) return null;
    const state = this.cell.state();
    if (state === "spawning") return "forking";
    if (state !== "starting") return null;
    return this.pool.waits(this.id) ? "waiting_for_thread" : "booting";
  };
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
      stalled: cell.stalled,
      waitingForInput: cell.waitingForInput,
    };
  };

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
    const window = await this.read<RetainedWindow>({ what: "window" });
    if (!this.final) this.window = window;
    return window;
  }

  async takeUnread(maxBytes: number, final: boolean): Promise<TakenOutput> {
    if (this.final) return this.takeFinalUnread();
    return this.read<TakenOutput>({ what: "unread", maxBytes, final });
  }

  readiness(): Promise<ReadyReport | null> {
    if (this.readyReport !== null || this.final || !this.spec.watch?.ready) return Promise.resolve(this.readyReport);
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  async listening(): Promise<number[] | null> {
    if (this.final) return [];
    if (this.phase() === "starting") return [];
    try {
      return await this.read<number[] | null>({ what: "ports" });
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

  async snapshot(): Promise<ActorSnapshot | null> {
    if (this.final) return null;
    try {
      return await this.answered(this.control.snapshot());
    } catch {
      return null;
    }
  }

  stop(signal: StopSignal = "SIGTERM", options: { bounded?: boolean; by?: StopRequester } = {}): Promise<ActorResult> {
    if (this.final) return this.done;
    this.stopBy ??= options.by ?? "tool";
    if (this.cell.cancel()) {
      // Cancelled before the actor claimed the spawn: no process was or will be started, so the job is over now.
      this.settle(this.supervisorResult("stopped", "stopped before it started; no process was spawned", { confirmed: true, escalated: false }));
      return this.done;
    }
    this.control.stop(signal).catch(() => {});
    // If the actor does not finish its own stop in time, the supervisor stops the group itself.
    if (options.bounded) {
      // A stop that must be over in time (shutdown): past the grace, the supervisor finishes it itself. The job is
      // then stopped as asked (its group killed and confirmed gone here), not failed, however slow its actor was.
      this.takeOverBy ??= performance.now() + this.spec.killGraceMs + BOUNDED_STOP_SLACK_MS + BOUNDED_TAKEOVER_MS;
      this.armBackstop(this.spec.killGraceMs + BOUNDED_STOP_SLACK_MS, "had not reported the stop within its grace", "stopped");
    } else {
      this.armBackstop(this.spec.killGraceMs + ACTOR_FINISH_MS + SUPERVISOR_SLACK_MS + 5000, "did not finish a requested stop");
    }
    return this.done;
  }

  // ── State ─────────────────────────────────────────────────────────────────────────────────────────────────────

  /** Read from the cell: `running` exactly when the process exists, whatever messages are still in flight. */
  private livePhase(): "starting" | "running" {
    const state = this.cell.state();
    return state === "running" || state === "stopping" || state === "ended" ? "running" : "starting";
  }

  private ended(result: ActorResult): JobEnded {
    return { phase: "ended", result, stopBy: this.stopBy };
  }

  // ── Reads and calls ───────────────────────────────────────────────────────────────────────────────────────────

  private read<T extends RetainedWindow | TakenOutput | number[] | null>(
    request: { what: "window" } | { what: "ports" } | { what: "unread"; maxBytes: number; final: boolean },
  ): Promise<T> {
    const id = this.nextReadId++;
    const reply = new Promise<T>((resolve) => {
      this.reads.set(id, { what: request.what, resolve } as PendingRead);
    });
    this.mailbox.send({ type: "read", id, ...request });
    return this.answered(reply).finally(() => this.reads.delete(id));
  }

  private async call(fn: (control: Remote<ActorControl>) => Promise<WriteAck>): Promise<WriteAck> {
    if (this.final) return { ok: false, error: "the job has ended" };
    if (this.phase() === "starting") await this.untilSpawnedOrEnded();
    if (this.final) return { ok: false, error: "the job has ended" };
    try {
      return await this.answered(fn(this.control));
    } catch (error) {
      return { ok: false, error: `the job did not answer: ${(error as Error).message}` };
    }
  }

  /**
   * Waits for an answer from the actor as long as the actor runs: rejects only when the job ends first (a read is
   * then answered from the exit message instead, see settle) or the actor is hung (host/runtime/heartbeat.ts). A starved actor,
   * however long its heartbeat stands still, and one still waiting for a thread are waited for.
   */
  private answered<T>(answer: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let looking = false;
      const watch = setInterval(() => {
        if (looking) return;
        looking = true;
        void this.heartbeat.look().then((verdict) => {
          looking = false;
          if (verdict.kind === "hung") finish(() => reject(new Error(`the job actor is hung: ${verdict.evidence}`)));
        });
      }, 500);
      watch.unref();
      let finished = false;
      const finish = (then: () => void) => {
        if (finished) return;
        finished = true;
        clearInterval(watch);
        then();
      };
      answer.then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => finish(() => reject(error)),
      );
      const onEnd = () => finish(() => reject(new Error("the job ended before it answered")));
      this.endWaiters.add(onEnd);
      const forget = () => this.endWaiters.delete(onEnd);
      answer.then(forget, forget);
    });
  }

  private untilSpawnedOrEnded(): Promise<void> {
    return new Promise((resolve) => this.spawnWaiters.push(resolve));
  }

  private takeFinalUnread(): TakenOutput {
    const taken = this.finalUnread ?? NOTHING_TAKEN;
    this.finalUnread = null;
    return taken;
  }

  private receive(message: ActorToHost): void {
    if (this.final) return;
    switch (message.type) {
      case "spawned":
        // A look now dates a heartbeat that stands still from the spawn at the latest.
        this.heartbeat.stillFor();
        this.armBackstop(this.spec.timeoutMs + this.spec.killGraceMs + ACTOR_FINISH_MS + SUPERVISOR_SLACK_MS, "missed its deadline");
        for (const wake of this.spawnWaiters.splice(0)) wake();
        this.onSpawned?.(this, message);
        return;
      case "window":
      case "ports":
      case "unread": {
        const pending = this.reads.get(message.id);
        this.reads.delete(message.id);
        if (pending?.what === "window" && message.type === "window") pending.resolve(message.window);
        else if (pending?.what === "ports" && message.type === "ports") pending.resolve(message.ports);
        else if (pending?.what === "unread" && message.type === "unread") pending.resolve(message.taken);
        return;
      }
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

  // ── Supervision ───────────────────────────────────────────────────────────────────────────────────────────────

  private armBackstop(afterMs: number, what: string, cause: SupervisorCause = "actor_unresponsive"): void {
    const at = performance.now() + afterMs;
    // The earlier backstop stands, except that a bounded stop's own replaces any other (a late actor's next look, a
    // deadline's): the actor then gets the stop's grace, a starved one is not called unresponsive meanwhile, and the
    // stop is over in time however alive the actor looks.
    const boundedFirst = cause === "stopped" && this.backstopCause !== "stopped";
    if (this.backstop && this.backstopAt <= at && !boundedFirst) return;
    if (this.backstop) clearTimeout(this.backstop);
    this.backstopAt = at;
    this.backstopCause = cause;
    this.scheduleBackstop(what, cause);
  }

  /** Node fires a timer longer than 2^31-1 ms at once, so a far deadline is reached in steps. */
  private scheduleBackstop(what: string, cause: SupervisorCause): void {
    const left = this.backstopAt - performance.now();
    const round = ++this.backstopRound;
    this.backstop = setTimeout(() => {
      if (this.backstopAt - performance.now() > 1) return this.scheduleBackstop(what, cause);
      if (cause !== "actor_unresponsive") return void this.takeOver(cause, `the job actor ${what}`);
      // The verdict reads the actor thread's figures, asynchronously: meanwhile the job may end, or a bounded stop
      // re-arm the backstop, and then this round has nothing more to do.
      void this.lateVerdict().then((why) => {
        if (this.final || round !== this.backstopRound) return;
        if (why === null) {
          this.backstopAt = performance.now() + LATE_ACTOR_RECHECK_MS;
          this.scheduleBackstop(what, cause);
        } else void this.takeOver(cause, `the job actor ${what}: ${why}`);
      });
    }, Math.min(Math.max(left, 0), MAX_TIMER_MS));
    this.backstop.unref();
  }

  /**
   * Why an actor past a deadline is taken over now, or null while it is only slow and may still report the job's own
   * end (a timeout, say) itself: it is taken over when it is hung (host/runtime/heartbeat.ts), or once it has had
   * LATE_ACTOR_LIMIT_MS past the deadline that its thread did not spend waiting for a CPU. A starved actor is neither.
   * (A bounded stop's backstop replaces this one, see armBackstop: that stop is over in time, starved actor or not.)
   */
  private async lateVerdict(): Promise<string | null> {
    const clock = (this.lateClock ??= new OwnClock(() => this.heartbeat.sample()));
    const [verdict, own] = await Promise.all([this.heartbeat.look(), clock.elapsed()]);
    if (verdict.kind === "hung") return verdict.evidence;
    if (own >= LATE_ACTOR_LIMIT_MS) return `it had ${Math.round(own / 1000)} s past it with a CPU to finish on`;
    return null;
  }

  /** The actor thread's figures, once it has started and where they can be read. */
  private readActorThread(): Promise<ThreadReading | null> {
    const thread = this.cell.thread();
    return thread.started && thread.tid !== null ? readThread(thread.tid) : Promise.resolve(null);
  }

  private onTaskSettled(error: unknown): void {
    if (this.final || this.takingOver) return;
    const reason = error ? `the job actor crashed: ${(error as Error)?.message ?? String(error)}` : "the job actor ended without reporting";
    // The exit message travels on the data port, which is not ordered with the pool's own channel. An actor that
    // finished marked its cell `ended` before it sent the message, which is then certainly on its way: it is waited
    // for much longer than the one a crashed actor might still have sent.
    const finished = !error && this.cell.state() === "ended";
    // A starved thread runs an expired timer before it reads its ports: the verdict waits one turn for them.
    const grace = setTimeout(
      () => setImmediate(() => void this.takeOver("actor_crashed", reason)),
      finished ? SENT_EXIT_WAIT_MS : EXIT_MESSAGE_WAIT_MS,
    );
    grace.unref();
  }

  /**
   * The supervisor's own cleanup: kill whatever group the cell names, wait until it is gone, report a failure with
   * the reason. A thread that may own a process it has not published yet (inside spawn) is never ended.
   */
  private async takeOver(cause: SupervisorCause, message: string): Promise<void> {
    if (this.final || this.takingOver) return;
    this.takingOver = true;
    if (this.cell.cancel()) {
      this.settle(this.supervisorResult(cause, `${message}; no process was spawned`, { confirmed: true, escalated: false }));
      return;
    }
    const left = (wanted: number) => (this.takeOverBy === null ? wanted : Math.max(50, Math.min(wanted, this.takeOverBy - performance.now())));
    let state = this.cell.state();
    if (state === "spawning") state = await this.cell.changed("spawning", left(SPAWN_PUBLISH_WAIT_MS));
    const pgid = this.cell.pgid();
    let cleanup = { confirmed: state !== "spawning", escalated: false };
    const spawnedAt = this.cell.read().startedEpochMs ?? undefined;
    if (pgid !== null) cleanup = await stopGroup(pgid, { signal: "SIGKILL", graceMs: 0, tag: this.spec.tag, spawnedAt, confirmMs: left(5000) });
    // A process whose pid the thread has not published yet still carries the job's tag; the actor also stops it
    // itself once it publishes (it sees the cancel flag).
    else if (state === "spawning") signalTagged((await taggedProcesses(this.spec.tag)) ?? [], "SIGKILL");
    if (this.final) return;
    // A hung thread without a terminal is ended now; one that owns a PTY is left alone, because ending it can abort
    // the whole process (docs/decisions.md), and so is one still inside spawn(). Its process group is gone either way.
    if (this.spec.io.kind !== "pty" && this.cell.state() !== "spawning") this.abort.abort(new Error(message));
    else this.threadLeftAlone = true;
    this.settle(this.supervisorResult(cause, message, cleanup));
  }

  private supervisorResult(cause: EndCause, message: string, cleanup: { confirmed: boolean; escalated: boolean }): ActorResult {
    const cell = this.cell.read();
    const log = cell.startedEpochMs === null ? { path: null, bytes: 0 } : { path: `${this.spec.log.dir}/${this.spec.id}`, bytes: cell.logBytes };
    return {
      cause,
      exitCode: null,
      signal: null,
      message,
      startedAt: cell.startedEpochMs,
      endedAt: Date.now(),
      elapsedMs: cell.startedEpochMs === null ? performance.now() - this.requestedAt : Math.max(0, Date.now() - cell.startedEpochMs),
      cleanup: cleanup.confirmed ? "confirmed" : "unconfirmed",
      escalated: cleanup.escalated,
      log: { ...log, truncated: cell.logTruncated, error: null },
      totals: { bytes: cell.bytes, lines: cell.lines },
      monitor: null,
    };
  }

  private settle(result: ActorResult, window?: RetainedWindow, unread?: TakenOutput | null): void {
    if (this.final) return;
    this.final = result;
    if (window) this.window = window;
    this.finalUnread = unread ?? null;
    if (this.backstop) clearTimeout(this.backstop);
    for (const wake of this.spawnWaiters.splice(0)) wake();
    // Reads the actor did not answer before its exit are answered from the exit message: nothing taken is lost.
    for (const pending of this.reads.values()) {
      if (pending.what === "window") pending.resolve(this.window);
      else if (pending.what === "ports") pending.resolve([]);
      else pending.resolve(this.takeFinalUnread());
    }
    for (const wake of this.readyWaiters.splice(0)) wake(null);
    this.reads.clear();
    this.dataPort.close();
    // A control call's answer travels on the control port and the exit on the data port, which are not ordered with
    // each other: an `end_stdin` that made `cat` exit can see the exit first. So calls still waiting get a moment for
    // their answer before they are told the job ended, and the control port stays open that long.
    const waiting = [...this.endWaiters];
    this.endWaiters.clear();
    const closeControl = () => {
      for (const onEnd of waiting) onEnd();
      this.control[Comlink.releaseProxy]();
      this.controlPort.close();
    };
    if (waiting.length === 0) closeControl();
    else setTimeout(closeControl, CONTROL_ANSWER_GRACE_MS).unref();
    this.noticeListeners.clear();
    this.onEnded(this);
    this.resolveDone(result);
    // Last, so that a listener that throws cannot leave the job half settled; still before any `done` callback runs.
    const ended = this.ended(result);
    for (const listener of [...this.endListeners]) listener(ended);
    this.endListeners.clear();
  }
}
