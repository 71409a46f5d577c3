/**
 * The job actor: one job, one worker thread. It owns the process group, the log, the output batching and, for a
 * monitor, the contract engine. It speaks only through its mailbox: the data port (spawned, output batches,
 * notices, exactly one exit) and the control port (comlink: snapshot, write, resize, stop).
 *
 * The pool runs `runJob` as one long task; the task resolves only after the exit message is posted, and for a
 * PTY only from a setImmediate after node-pty reported the exit, because ending a thread that still has a live
 * or just-exited PTY can abort the whole process (platform.md).
 */
import { getPriority, setPriority } from "node:os";
import { performance } from "node:perf_hooks";
import { isMainThread, type MessagePort } from "node:worker_threads";
import { createOutbox, type Outbox } from "../mailbox/outbox.ts";
import { typedPort, type TypedPort } from "../mailbox/port.ts";
import type { ProtocolCheckers } from "../mailbox/check.ts";
import { INITIAL_CREDIT, MAX_WRITE_QUEUE_BYTES } from "../mailbox/constants.ts";
import type {
  ActorToHost,
  HostToActor,
  JobSpec,
  ActorControl,
  ActorResult,
  ActorSnapshot,
  ActorTask,
  EndCause,
  StopSignal,
  WriteAck,
} from "../mailbox/protocol.ts";
import { Comlink, createNodeEndpoint } from "./comlink-endpoint.ts";
import { countNewlines } from "./framing.ts";
import { openLogWriter, type LogWriter } from "./log-writer.ts";
import type { MonitorEngine } from "./monitor-engine.ts";
import { stopGroup, type StopOptions } from "./process-group.ts";
import { spawnProcess, SpawnError, type ProcessIo } from "./process-io.ts";

/** How long after the group is gone we still wait for the streams to close before abandoning them. */
const STREAM_CLOSE_WAIT_MS = 1000;

export interface ActorTaskResult {
  id: string;
  cause: EndCause;
}

/** How much nicer than the host an actor's thread runs, and so every process its jobs start (they inherit it). */
const ACTOR_NICENESS = 10;
/** The highest nice value Linux has. */
const MAX_NICE = 19;
let priorityLowered = false;

/**
 * Lowers this actor thread's priority by ten nice steps, once per thread: the pool reuses threads, and an
 * unprivileged thread cannot raise its priority again, so this is a property of the pool's threads, not of a job.
 *
 * Why: with many actors flooding output on few cores, Pi's thread waits for a core behind them, and its event
 * loop stalls for tens of milliseconds (docs/benchmarks.md, host responsiveness). What it implies: a job's
 * processes run at nice 10 (relative to Pi), so under contention they yield the CPU to Pi and to the user's
 * foreground work, and when the machine is idle they lose nothing.
 *
 * Linux only: there a nice value belongs to a thread, so `setPriority(0, …)` changes this worker thread alone. On
 * macOS it would change the whole process, Pi included. Never on the main thread, whatever the platform.
 */
function lowerPriority(): void {
  if (priorityLowered || process.platform !== "linux" || isMainThread) return;
  priorityLowered = true;
  try {
    setPriority(0, Math.min(MAX_NICE, getPriority(0) + ACTOR_NICENESS));
  } catch {
    // Refused (a restricted container): the actor works the same, at Pi's priority.
  }
}

export default async function runJob(task: ActorTask): Promise<ActorTaskResult> {
  lowerPriority();
  // Checks need TypeBox, which only a checkout has at hand; they are loaded only when on.
  const checks = task.checkMessages ? (await import("../mailbox/check.ts")).protocolCheckers() : null;
  const invalid = checks?.jobSpec(task.spec);
  if (invalid) throw new Error(`pi-jobs: invalid job spec: ${invalid}`);
  const actor = new JobActor(task, checks);
  const result = await actor.run();
  return { id: task.spec.id, cause: result.cause };
}

class JobActor implements ActorControl {
  private readonly spec: JobSpec;
  private readonly mailbox: TypedPort<ActorToHost, HostToActor>;
  private readonly controlPort: MessagePort;
  private readonly outbox: Outbox;
  private readonly log: LogWriter;
  private engine: MonitorEngine | null = null;
  private readonly requestedAt = performance.now();
  private spawnedAt: number | null = null;
  private startedAtEpoch: number | null = null;
  private proc: ProcessIo | null = null;
  private phase: ActorSnapshot["phase"] = "starting";
  private cause: EndCause | null = null;
  private causeMessage: string | null = null;
  private exitCode: number | null = null;
  private exitSignal: string | null = null;
  private stopping: Promise<{ confirmed: boolean; escalated: boolean }> | null = null;
  private hostBehind = false;
  private matcherBehind = false;
  private readPaused = false;
  private totals = { bytes: 0, lines: 0 };
  private seq = 0;
  private timeout: ReturnType<typeof setTimeout> | null = null;
  private pendingStop: StopSignal | null = null;
  private processExited = false;
  private exited: Promise<void> | null = null;
  private logReported = false;

  constructor(task: ActorTask, checks: ProtocolCheckers | null) {
    this.spec = task.spec;
    this.controlPort = task.control;
    this.mailbox = typedPort<ActorToHost, HostToActor>(
      task.data,
      checks && { outgoing: checks.actorToHost, incoming: checks.hostToActor },
    );
    this.mailbox.receive((message) => {
      if (message.type === "credit") this.outbox.grant(message.batches);
    });
    this.outbox = createOutbox({
      initialCredit: INITIAL_CREDIT,
      send: (batch) =>
        this.mailbox.send({ type: "output", seq: this.seq++, ...batch }, [batch.payload.buffer as ArrayBuffer, batch.spans.buffer as ArrayBuffer]),
      onPressure: (paused) => {
        this.hostBehind = paused;
        this.applyPause();
      },
    });
    this.log = openLogWriter({
      dir: this.spec.log.dir,
      name: this.spec.id,
      maxBytes: this.spec.log.maxBytes,
      budget: task.logBudget,
    });
    Comlink.expose(this, createNodeEndpoint(this.controlPort));
  }

  async run(): Promise<ActorResult> {
    if (this.spec.contract) {
      // Loaded only for monitors, so a shell job's thread starts without the matcher.
      const { createMonitorEngine } = await import("./monitor-engine.ts");
      this.engine = createMonitorEngine(this.spec.contract, {
        // A decision reached only from the last lines after the process ended on its own did not stop anything.
        onDecided: () => {
          if (!this.processExited) void this.requestStop("contract", "SIGTERM");
        },
        onBackpressure: (paused: boolean) => {
          this.matcherBehind = paused;
          this.applyPause();
        },
      });
    }
    try {
      this.proc = await spawnProcess(this.spec);
    } catch (error) {
      const message = error instanceof SpawnError ? error.message : `could not start the job: ${(error as Error).message}`;
      return this.finish("spawn_failed", message, { confirmed: true, escalated: false });
    }
    const proc = this.proc;
    const guard = proc.kind === "pty" ? this.containCrashes() : null;
    this.spawnedAt = performance.now();
    this.startedAtEpoch = Date.now();
    this.phase = "running";
    this.mailbox.send({ type: "spawned", pid: proc.pid, pgid: proc.pid, startedAt: this.startedAtEpoch, io: proc.kind });
    const exited = new Promise<void>((resolve) =>
      proc.onExit((code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        this.processExited = true;
        resolve();
      }),
    );
    this.exited = exited;
    if (this.pendingStop && this.cause) void this.requestStop(this.cause, this.pendingStop);

    proc.onData((source, chunk) => this.onData(source, chunk));
    const drained = new Promise<void>((resolve) => proc.onDrained(resolve));
    this.timeout = setTimeout(() => void this.requestStop("timeout", "SIGTERM"), this.spec.timeoutMs);
    this.injectFault();

    await exited;
    // Whatever is left in the pipes is bounded (the kernel's buffers), and it must all be read before the job can end:
    // backpressure may slow a running writer, never lose the last words of one that exited.
    if (this.readPaused) {
      this.readPaused = false;
      proc.resume();
    }
    // The shell is gone; reclaim descendants still in its group (they may hold our pipes open), unless a stop is
    // already doing exactly that.
    const cleanup = await (this.stopping ?? stopGroup(proc.pid, this.stopOptions("SIGTERM")));
    const closedInTime = await Promise.race([
      drained.then(() => true),
      delay(STREAM_CLOSE_WAIT_MS).then(() => false),
    ]);
    if (!closedInTime) proc.abandonStreams();
    if (this.engine) {
      this.engine.end("stdout");
      this.engine.end("stderr");
    }
    const cause = this.cause ?? "exit";
    if (proc.kind === "pty") await new Promise<void>((resolve) => setImmediate(resolve));
    const result = await this.finish(cause, this.causeMessage, cleanup);
    if (guard) process.off("uncaughtException", guard);
    return result;
  }

  /**
   * A thread that owns a PTY must never die with it (platform.md): an unexpected exception here stops the group,
   * waits for the terminal's exit like any stop, and reports the crash, instead of tearing the thread down.
   */
  private containCrashes(): (error: Error) => void {
    const guard = (error: Error) => {
      this.causeMessage ??= `the job actor crashed: ${error.message}`;
      void this.requestStop("actor_crashed", "SIGKILL");
    };
    process.on("uncaughtException", guard);
    return guard;
  }

  private onData(source: "stdout" | "stderr" | "pty", chunk: Uint8Array): void {
    const lines = countNewlines(chunk);
    this.totals.bytes += chunk.length;
    this.totals.lines += lines;
    const written = this.log.write(chunk);
    if ((written.hitQuota || written.accepted < chunk.length) && !this.logReported) this.onLogLimit();
    if (this.engine && source !== "pty") this.engine.push(source, chunk);
    this.outbox.add(source, chunk, lines);
  }

  /** The log stopped taking bytes: a quota was reached or the disk failed. Reported once, never silent. */
  private onLogLimit(): void {
    this.logReported = true;
    const state = this.log.state();
    this.mailbox.send({ type: "notice", kind: "log_truncated", detail: state.error });
    if (this.spec.log.onQuota === "stop") void this.requestStop(state.truncated ? "log_quota" : "log_failed", "SIGTERM");
  }

  private applyPause(): void {
    // After the process exited, only its last buffered output is left to read: never pause that (see run()).
    const shouldPause = (this.hostBehind || this.matcherBehind) && !this.processExited;
    if (shouldPause === this.readPaused || !this.proc) return;
    this.readPaused = shouldPause;
    if (shouldPause) this.proc.pause();
    else this.proc.resume();
    this.mailbox.send({
      type: "notice",
      kind: shouldPause ? "paused" : "resumed",
      detail: shouldPause ? (this.matcherBehind ? "matcher" : "host") : null,
    });
  }

  /** A stop reaches the group and whatever left it carrying the job's tag; it checks again when the leader exits. */
  private stopOptions(signal: StopSignal): StopOptions {
    return {
      signal,
      graceMs: this.spec.killGraceMs,
      tag: this.spec.tag,
      spawnedAt: this.startedAtEpoch ?? undefined,
      leaderExit: this.exited ?? undefined,
    };
  }

  /** The first cause wins; later requests join the stop already under way. */
  private requestStop(cause: EndCause, signal: StopSignal) {
    if (this.phase === "ended") return Promise.resolve({ confirmed: true, escalated: false });
    this.cause ??= cause;
    if (!this.proc) {
      // Asked to stop while the process is still being spawned: stop it as soon as it exists.
      this.pendingStop = signal;
      return Promise.resolve({ confirmed: true, escalated: false });
    }
    if (!this.stopping) {
      this.phase = "stopping";
      if (this.readPaused && cause !== "contract") {
        // A stopping job must be able to drain what it already wrote.
        this.readPaused = false;
        this.proc.resume();
      }
      this.stopping = stopGroup(this.proc.pid, this.stopOptions(signal));
    }
    return this.stopping;
  }

  private async finish(
    cause: EndCause,
    message: string | null,
    cleanup: { confirmed: boolean; escalated: boolean },
  ): Promise<ActorResult> {
    if (this.timeout) clearTimeout(this.timeout);
    this.phase = "ended";
    this.outbox.drain();
    this.outbox.close();
    const monitor = this.engine
      ? await this.engine.finish({ cause: monitorCause(cause), exitCode: this.exitCode, signal: this.exitSignal })
      : null;
    await this.engine?.dispose();
    this.log.close();
    const now = performance.now();
    const result: ActorResult = {
      cause,
      exitCode: this.exitCode,
      signal: this.exitSignal,
      message,
      startedAt: this.startedAtEpoch,
      endedAt: Date.now(),
      elapsedMs: now - (this.spawnedAt ?? this.requestedAt),
      cleanup: cleanup.confirmed ? "confirmed" : "unconfirmed",
      escalated: cleanup.escalated,
      log: this.log.state(),
      totals: { ...this.totals },
      monitor,
    };
    this.mailbox.send({ type: "exit", result });
    this.mailbox.close();
    this.controlPort.close();
    return result;
  }

  private injectFault(): void {
    if (this.spec.fault === "crash") {
      // A real uncaught exception: the thread dies and the supervisor must clean up after it.
      setTimeout(() => {
        throw new Error("injected actor crash");
      }, 20);
    } else if (this.spec.fault === "hang") {
      setTimeout(() => {
        const until = Number.POSITIVE_INFINITY;
        while (performance.now() < until) {
          // An actor stuck in a loop: no timer of its own can fire again.
        }
      }, 20);
    }
  }

  // ── ActorControl (comlink) ────────────────────────────────────────────────────────────────────────────────────

  snapshot(): ActorSnapshot {
    return {
      phase: this.phase,
      pid: this.proc?.pid ?? null,
      paused: this.readPaused,
      queuedBytes: this.outbox.queuedBytes(),
      pendingMatchLines: this.engine?.pending().lines ?? 0,
      totals: { ...this.totals },
      log: this.log.state(),
      writeQueueBytes: this.proc?.pendingWriteBytes() ?? 0,
    };
  }

  write(bytes: Uint8Array): WriteAck {
    if (!this.proc || this.phase !== "running") return { ok: false, error: "the job is not running" };
    const pending = this.proc.pendingWriteBytes();
    if (pending + bytes.length > MAX_WRITE_QUEUE_BYTES) {
      return {
        ok: false,
        error: `write queue full: ${pending} bytes are still waiting for the process (limit ${MAX_WRITE_QUEUE_BYTES})`,
      };
    }
    if (this.proc.kind === "pipes" && this.spec.io.kind === "pipes" && !this.spec.io.stdin) {
      return { ok: false, error: "this job has no stdin" };
    }
    return { ok: true, queuedBytes: this.proc.write(bytes) };
  }

  endStdin(): WriteAck {
    if (!this.proc || this.phase !== "running") return { ok: false, error: "the job is not running" };
    if (this.proc.kind === "pty") return { ok: false, error: "end_stdin is for pipes; a terminal has no separate stdin to close" };
    return this.proc.endStdin()
      ? { ok: true, queuedBytes: 0 }
      : { ok: false, error: "stdin is already closed" };
  }

  resize(cols: number, rows: number): WriteAck {
    if (!this.proc || this.phase !== "running") return { ok: false, error: "the job is not running" };
    if (this.proc.kind !== "pty") return { ok: false, error: "resize needs a terminal job (tty: true)" };
    return this.proc.resize(cols, rows) ? { ok: true, queuedBytes: 0 } : { ok: false, error: "the terminal is closed" };
  }

  stop(signal: StopSignal): void {
    void this.requestStop("stopped", signal);
  }
}

function monitorCause(cause: EndCause) {
  switch (cause) {
    case "exit":
    case "contract":
    case "timeout":
    case "stopped":
    case "spawn_failed":
    case "log_quota":
    case "log_failed":
      return cause;
    default:
      return "stopped" as const;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
