/**
 * The host's side of one job: it receives the actor's mailbox, keeps the figures and the retained output, and is
 * the supervisor of that one actor. It always knows the process-group id and the deadline, so a crashed or hung
 * actor cannot keep a process alive: the job kills the group itself and reports a failure with a reason.
 */
import { performance } from "node:perf_hooks";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import type { Remote } from "comlink";
import { Comlink, createNodeEndpoint } from "../actors/comlink-endpoint.ts";
import { stopGroup } from "../actors/process-group.ts";
import { protocolCheckers } from "../mailbox/check.ts";
import { typedPort, type TypedPort } from "../mailbox/port.ts";
import type {
  ActorToHost,
  HostToActor,
  ActorControl,
  ActorResult,
  ActorSnapshot,
  EndCause,
  JobSpec,
  Notice,
  OutputBatch,
  StopSignal,
  WriteAck,
} from "../mailbox/protocol.ts";
import { createOutputStore, type OutputStore } from "./output-store.ts";
import type { ActorPool } from "./pool.ts";
import type { JobFigures, JobHandle, JobKind, JobPhase, RetainedLine } from "./runtime-api.ts";

/** How late an actor may be, past its own deadline, before the supervisor takes over. */
const SUPERVISOR_SLACK_MS = 1000;
/** Time an actor has, after the group's grace, to drain streams and report (actors/job-actor.ts waits 1 s). */
const ACTOR_FINISH_MS = 1000;
/** The longest delay a Node timer takes as given. */
const MAX_TIMER_MS = 2_147_483_647;
/** After the pool task settles, the exit message (on another port) may still be in flight. */
const EXIT_MESSAGE_WAIT_MS = 1000;

export interface JobOptions {
  spec: JobSpec;
  kind: JobKind;
  label: string;
  pool: ActorPool;
  logBudget: SharedArrayBuffer;
  checkMessages: boolean;
  retain: { maxBytes: number; maxLines: number };
  /** Runtime-wide output counters, bumped once per batch. */
  counters: { bytes: number; lines: number };
  onEnded(job: Job): void;
}

export class Job implements JobHandle {
  readonly id: string;
  readonly kind: JobKind;
  readonly label: string;
  readonly spec: JobSpec;
  readonly requestedAt = performance.now();
  readonly requestedAtEpoch = Date.now();
  readonly done: Promise<ActorResult>;

  private currentPhase: JobPhase = "starting";
  private processId: number | null = null;
  private spawnedAt: number | null = null;
  private final: ActorResult | null = null;
  private resolveDone!: (result: ActorResult) => void;
  private readonly mailbox: TypedPort<HostToActor, ActorToHost>;
  private readonly dataPort: MessagePort;
  private readonly controlPort: MessagePort;
  private readonly control: Remote<ActorControl>;
  private readonly abort = new AbortController();
  private readonly store: OutputStore;
  private readonly outputListeners = new Set<(batch: OutputBatch) => void>();
  private readonly noticeListeners = new Set<(notice: Notice) => void>();
  private readonly stats: JobFigures = { bytes: 0, lines: 0, batches: 0, lastOutputAt: null, paused: false, logTruncated: false };
  private backstop: ReturnType<typeof setTimeout> | null = null;
  private takingOver = false;
  private readonly onEnded: (job: Job) => void;
  private readonly counters: { bytes: number; lines: number };

  constructor(options: JobOptions) {
    this.id = options.spec.id;
    this.kind = options.kind;
    this.label = options.label;
    this.spec = options.spec;
    this.onEnded = options.onEnded;
    this.counters = options.counters;
    this.store = createOutputStore(options.retain);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
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
      { spec: options.spec, data: data.port2, control: control.port2, logBudget: options.logBudget, checkMessages: options.checkMessages },
      this.abort.signal,
    );
    task.then(
      () => this.onTaskSettled(null),
      (error: unknown) => this.onTaskSettled(error),
    );
  }

  // ── JobHandle ─────────────────────────────────────────────────────────────────────────────────────────────────

  phase = (): JobPhase => this.currentPhase;
  pid = (): number | null => this.processId;
  pgid = (): number | null => this.processId;
  deadline = (): number | null => (this.spawnedAt === null ? null : this.spawnedAt + this.spec.timeoutMs);
  figures = (): JobFigures => ({ ...this.stats });
  result = (): ActorResult | null => this.final;

  onOutput(listener: (batch: OutputBatch) => void): () => void {
    this.outputListeners.add(listener);
    return () => this.outputListeners.delete(listener);
  }

  onNotice(listener: (notice: Notice) => void): () => void {
    this.noticeListeners.add(listener);
    return () => this.noticeListeners.delete(listener);
  }

  retained(): { lines: RetainedLine[]; droppedLines: number; droppedBytes: number } {
    return this.store.read();
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
      return await withTimeout(this.control.snapshot(), 2000);
    } catch {
      return null;
    }
  }

  stop(signal: StopSignal = "SIGTERM"): Promise<ActorResult> {
    if (this.final) return this.done;
    this.control.stop(signal).catch(() => {});
    // If the actor does not finish its own stop in time, the supervisor stops the group itself.
    this.armBackstop(this.spec.killGraceMs + ACTOR_FINISH_MS + SUPERVISOR_SLACK_MS + 5000, "did not finish a requested stop");
    return this.done;
  }

  // ── Supervision ───────────────────────────────────────────────────────────────────────────────────────────────

  private async call(fn: (control: Remote<ActorControl>) => Promise<WriteAck>): Promise<WriteAck> {
    if (this.final) return { ok: false, error: "the job has ended" };
    if (this.currentPhase === "starting") await this.untilSpawnedOrEnded();
    if (this.final) return { ok: false, error: "the job has ended" };
    try {
      return await withTimeout(fn(this.control), 5000);
    } catch (error) {
      return { ok: false, error: `the job did not answer: ${(error as Error).message}` };
    }
  }

  private spawnWaiters: (() => void)[] = [];
  private untilSpawnedOrEnded(): Promise<void> {
    return new Promise((resolve) => this.spawnWaiters.push(resolve));
  }

  private receive(message: ActorToHost): void {
    if (this.final) return;
    switch (message.type) {
      case "spawned":
        this.processId = message.pgid;
        this.spawnedAt = performance.now();
        this.currentPhase = "running";
        this.armBackstop(this.spec.timeoutMs + this.spec.killGraceMs + ACTOR_FINISH_MS + SUPERVISOR_SLACK_MS, "missed its deadline");
        for (const wake of this.spawnWaiters.splice(0)) wake();
        return;
      case "output":
        this.stats.bytes += message.bytes;
        this.stats.lines += message.lines;
        this.stats.batches += 1;
        this.stats.lastOutputAt = performance.now();
        this.counters.bytes += message.bytes;
        this.counters.lines += message.lines;
        this.store.push(message);
        for (const listener of this.outputListeners) listener(message);
        this.mailbox.send({ type: "credit", batches: 1 });
        return;
      case "notice":
        if (message.kind === "paused") this.stats.paused = true;
        else if (message.kind === "resumed") this.stats.paused = false;
        else this.stats.logTruncated = true;
        for (const listener of this.noticeListeners) listener(message);
        return;
      case "exit":
        this.settle(message.result);
        return;
    }
  }

  private armBackstop(afterMs: number, what: string): void {
    const at = performance.now() + afterMs;
    if (this.backstop && this.backstopAt <= at) return;
    if (this.backstop) clearTimeout(this.backstop);
    this.backstopAt = at;
    this.scheduleBackstop(what);
  }

  /** Node fires a timer longer than 2^31-1 ms at once, so a far deadline is reached in steps. */
  private scheduleBackstop(what: string): void {
    const left = this.backstopAt - performance.now();
    this.backstop = setTimeout(() => {
      if (this.backstopAt - performance.now() > 1) this.scheduleBackstop(what);
      else void this.takeOver("actor_unresponsive", `the job actor ${what}`);
    }, Math.min(Math.max(left, 0), MAX_TIMER_MS));
    this.backstop.unref();
  }
  private backstopAt = Number.POSITIVE_INFINITY;

  private onTaskSettled(error: unknown): void {
    if (this.final || this.takingOver) return;
    const reason = error ? `the job actor crashed: ${(error as Error)?.message ?? String(error)}` : "the job actor ended without reporting";
    // The exit message travels on the data port, which is not ordered with the pool's own channel.
    const grace = setTimeout(() => void this.takeOver("actor_crashed", reason), EXIT_MESSAGE_WAIT_MS);
    grace.unref();
  }

  /** The supervisor's own cleanup: kill the group, wait until it is gone, report a failure with the reason. */
  private async takeOver(cause: Extract<EndCause, "actor_crashed" | "actor_unresponsive">, message: string): Promise<void> {
    if (this.final || this.takingOver) return;
    this.takingOver = true;
    let cleanup = { confirmed: true, escalated: false };
    if (this.processId !== null) cleanup = await stopGroup(this.processId, { signal: "SIGKILL", graceMs: 0, tag: this.spec.tag });
    if (this.final) return;
    // A hung thread without a terminal is ended now; one that owns a PTY is left alone, because ending it can abort
    // the whole process (platform.md). Its process group is already gone either way.
    if (this.spec.io.kind !== "pty") this.abort.abort(new Error(message));
    this.settle({
      cause,
      exitCode: null,
      signal: null,
      message,
      startedAt: this.spawnedAt === null ? null : this.requestedAtEpoch + (this.spawnedAt - this.requestedAt),
      endedAt: Date.now(),
      elapsedMs: performance.now() - (this.spawnedAt ?? this.requestedAt),
      cleanup: cleanup.confirmed ? "confirmed" : "unconfirmed",
      escalated: cleanup.escalated,
      log: { path: null, bytes: 0, truncated: false, error: null },
      totals: { bytes: this.stats.bytes, lines: this.stats.lines },
      monitor: null,
    });
  }

  private settle(result: ActorResult): void {
    if (this.final) return;
    this.final = result;
    this.currentPhase = "ended";
    if (this.backstop) clearTimeout(this.backstop);
    for (const wake of this.spawnWaiters.splice(0)) wake();
    this.control[Comlink.releaseProxy]();
    this.dataPort.close();
    this.controlPort.close();
    this.outputListeners.clear();
    this.noticeListeners.clear();
    this.onEnded(this);
    this.resolveDone(result);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
