/**
 * The job actor: one job, one worker thread. It owns the process group, the log, the job's output (the retained
 * window and, for a shell job, the unread head and tail) and, for a monitor, the contract engine. Figures and
 * lifecycle facts go to the job's shared cell; bytes cross only when the host reads them. It speaks through its
 * mailbox: the data port (spawned, read replies, notices, exactly one exit) and the control port (comlink:
 * snapshot, write, resize, stop).
 *
 * The pool runs `runJob` as one long task; the task resolves only after the exit message is posted, and for a
 * PTY only from a setImmediate after node-pty reported the exit, because ending a thread that still has a live
 * or just-exited PTY can abort the whole process (docs/decisions.md, "Never terminate a thread that owns a PTY").
 */
import { performance } from "node:perf_hooks";
import type { MessagePort } from "node:worker_threads";
import { JobCellWriter } from "../../mailbox/cell.ts";
import { typedPort, type TypedPort } from "../../mailbox/port.ts";
import type { ProtocolCheckers } from "../../mailbox/check.ts";
import { MAX_WRITE_QUEUE_BYTES } from "../../mailbox/constants.ts";
import type {
  ActorToHost,
  HostToActor,
  JobSpec,
  ActorControl,
  ActorResult,
  ActorSnapshot,
  ActorTask,
  ActorTaskResult,
  EndCause,
  Read,
  RetainedWindow,
  StopSignal,
  WriteAck,
} from "../../mailbox/protocol.ts";
import { HEARTBEAT_MS, STREAM_CLOSE_ROUNDS, STREAM_CLOSE_WAIT_MS } from "../../mailbox/timings.ts";
import { Comlink, createNodeEndpoint } from "../../shared/comlink-endpoint.ts";
import { countNewlines } from "../output/framing.ts";
import { openLogWriter, type LogWriter } from "../output/log-writer.ts";
import { redactedReads, redactWindow, type RedactedTaken } from "../redact/output.ts";
import { createRedactor, type Redactor } from "../redact/redactor.ts";
import { threadEnv } from "../thread/env.ts";
import type { MonitorEngine } from "../monitor/engine.ts";
import { createOutputWindow, type OutputWindow } from "../output/window.ts";
import { stopGroup, type StopOptions } from "../../shared/process-group.ts";
import { spawnProcess, SpawnError, type ProcessIo } from "../process/process-io.ts";
import { createOutputText, type OutputText } from "../output/read-text.ts";
import { ALL_UNREAD } from "../output/unread.ts";
import type { ProcessEnd } from "../monitor/contract.ts";
import { JobWatch } from "../watch/watches.ts";
import { osThreadId } from "../thread/priority.ts";


/** The log of a job that never claimed its spawn: no file, nothing written. */
const NO_LOG: LogWriter = {
  path: "",
  write: () => ({ accepted: 0, hitQuota: false }),
  state: () => ({ path: null, bytes: 0, truncated: false, error: null }),
  close: () => {},
};

/** The redactor of the thread's own environment, made by the first job that needs it: every job without an env shares it. */
let threadRedactor: Redactor | null = null;

/** A redactor holds no state of its own: one made from the same environment serves every job that runs with it. */
function redactorFor(env: JobSpec["env"]): Redactor {
  return env === null ? (threadRedactor ??= createRedactor(threadEnv)) : createRedactor(env);
}

export default async function runJob(task: ActorTask): Promise<ActorTaskResult> {
  // Checks need TypeBox, which only a checkout has at hand; they are loaded only when on.
  const checks = task.checkMessages ? (await import("../../mailbox/check.ts")).protocolCheckers() : null;
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
  private readonly cell: JobCellWriter;
  private readonly window: OutputWindow;
  /** A shell job's unread output as the model will read it; made in run(), since a terminal loads its emulator. */
  private unread: OutputText | null = null;
  /** Reads of `unread` with secrets replaced (actors/redact/output.ts). */
  private takeUnread: ((maxBytes: number, final: boolean) => RedactedTaken) | null = null;
  /** Replaces secrets in everything this actor sends of its output; null when redaction is off. */
  private redactor: Redactor | null = null;
  private readonly heartbeat: ReturnType<typeof setInterval>;
  /** Opened once the spawn is claimed: a job cancelled before it started leaves no file behind. */
  private log: LogWriter = NO_LOG;
  private readonly logBudget: SharedArrayBuffer;
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
  private matcherBehind = false;
  private readPaused = false;
  private totals = { bytes: 0, lines: 0 };
  private timeout: ReturnType<typeof setTimeout> | null = null;
  private pendingStop: StopSignal | null = null;
  private processExited = false;
  private exitSent = false;
  private exited: Promise<void> | null = null;
  private logReported = false;
  /** Stall, prompt and readiness watches, from the spawn to the end. */
  private watch: JobWatch | null = null;

  constructor(task: ActorTask, checks: ProtocolCheckers | null) {
    this.spec = task.spec;
    this.controlPort = task.control;
    this.mailbox = typedPort<ActorToHost, HostToActor>(
      task.data,
      checks && { outgoing: checks.actorToHost, incoming: checks.hostToActor },
    );
    this.cell = new JobCellWriter(task.cell);
    this.window = createOutputWindow(this.spec.retain);
    // Which thread beats: the host reads its CPU figures before it calls a heartbeat that stands still a hang.
    this.cell.publishThread(osThreadId());
    this.heartbeat = setInterval(() => this.cell.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
    this.mailbox.receive((message) => this.answer(message));
    this.logBudget = task.logBudget;
    Comlink.expose(this, createNodeEndpoint(this.controlPort));
  }

  async run(): Promise<ActorResult> {
    // The child gets `env`, or this thread's copy of the host's environment: its secrets are those values.
    const redactor = (this.redactor = this.spec.redact ? redactorFor(this.spec.env) : null);
    if (this.spec.unread) {
      this.unread = await createOutputText(this.spec.io, this.spec.unread);
      this.takeUnread = redactedReads(this.unread, redactor);
    }
    if (this.spec.contract) {
      // Loaded only for monitors, so a shell job's thread starts without the matcher.
      const { createMonitorEngine } = await import("../monitor/engine.ts");
      this.engine = createMonitorEngine(this.spec.contract, {
        // A decision reached only from the last lines after the process ended on its own did not stop anything.
        onDecided: () => {
          if (!this.processExited) void this.requestStop("contract", "SIGTERM");
        },
        onBackpressure: (paused: boolean) => {
          this.matcherBehind = paused;
          this.applyPause();
        },
      }, { redactor });
    }
    // The host may have cancelled the job while it waited in the pool's queue: then nothing is spawned at all.
    if (!this.cell.claimSpawn()) {
      return this.finish("stopped", "stopped before it started; no process was spawned", { confirmed: true, escalated: false });
    }
    this.log = openLogWriter({ dir: this.spec.log.dir, name: this.spec.id, maxBytes: this.spec.log.maxBytes, budget: this.logBudget });
    try {
      this.proc = await spawnProcess(this.spec);
    } catch (error) {
      const message = error instanceof SpawnError ? error.message : `could not start the job: ${(error as Error).message}`;
      return this.finish("spawn_failed", message, { confirmed: true, escalated: false });
    }
    const proc = this.proc;
    const guard = proc.kind === "pty" ? this.containCrashes() : null;
    this.spawnedAt = proc.spawnedAt;
    this.startedAtEpoch = Math.round(Date.now() - (performance.now() - proc.spawnedAt));
    this.phase = "running";
    // Published before any message: from here on the host can kill the group whatever this thread does next.
    this.cell.publishSpawn(proc.pid, proc.pid, this.startedAtEpoch);
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
    if (this.cell.cancelRequested()) void this.requestStop("stopped", "SIGTERM");
    else if (this.pendingStop && this.cause) void this.requestStop(this.cause, this.pendingStop);

    this.watch = new JobWatch({
      spec: this.spec.watch,
      tag: this.spec.tag,
      pid: proc.pid,
      spawnedAt: this.spawnedAt,
      spawnedAtEpoch: this.startedAtEpoch,
      cell: this.cell,
      notice: (kind, detail) => this.onStuck(kind, detail),
      ready: (report) => this.mailbox.send({ type: "ready", report }),
    });
    proc.onData((source, chunk) => this.onData(source, chunk));
    const drained = new Promise<void>((resolve) => proc.onDrained(resolve));
    this.timeout = setTimeout(() => void this.requestStop("timeout", "SIGTERM"), Math.max(0, this.spec.timeoutMs - (performance.now() - proc.spawnedAt)));

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
    const closedInTime = await Promise.race([drained.then(() => true), this.outputQuiet().then(() => false)]);
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
   * A thread that owns a PTY must never die with it (docs/decisions.md): an unexpected exception here stops the group,
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

  /**
   * Resolves once the streams have carried nothing for STREAM_CLOSE_WAIT_MS, at most STREAM_CLOSE_ROUNDS times over.
   * A starved thread (a loaded machine) runs its expired timer before it polls the pipes, so each verdict waits for
   * one I/O turn first: the last words already in the kernel's buffer are read, never abandoned with the streams.
   */
  private async outputQuiet(): Promise<void> {
    for (let round = 0; round < STREAM_CLOSE_ROUNDS; round += 1) {
      const before = this.totals.bytes;
      await delay(STREAM_CLOSE_WAIT_MS);
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.totals.bytes === before) return;
    }
  }

  private onData(source: "stdout" | "stderr" | "pty", chunk: Uint8Array): void {
    const lines = countNewlines(chunk);
    this.totals.bytes += chunk.length;
    this.totals.lines += lines;
    const written = this.log.write(chunk);
    const log = this.log.state();
    this.cell.setLog(log.bytes, log.truncated);
    this.cell.addOutput(chunk.length, lines, Date.now());
    if ((written.hitQuota || written.accepted < chunk.length) && !this.logReported) this.onLogLimit();
    if (this.engine && source !== "pty") this.engine.push(source, chunk);
    this.window.feed(source, chunk, lines);
    if (this.unread) {
      this.unread.feed(source, chunk);
      this.cell.setUnread(this.unread.pendingBytes);
    }
    this.watch?.feed(source, chunk);
  }

  /** A stall or prompt episode began: the host is told once. */
  private onStuck(kind: "stalled" | "waiting_for_input", detail: string | null): void {
    if (this.exitSent) return;
    this.mailbox.send({ type: "notice", kind, detail });
    // A monitor cannot be answered (it has no stdin) and nobody reads it while it runs: with a stall time it ends
    // here, its tail kept, rather than sit until its timeout.
    if (this.engine && this.spec.watch?.stallMs != null) void this.requestStop(kind, "SIGTERM");
  }

  /** The retained window as the console may draw it: with secrets replaced. */
  private readWindow(): RetainedWindow {
    const window = this.window.read();
    return this.redactor ? redactWindow(this.redactor, window) : window;
  }

  /** A read from the host: answered at once from what the actor keeps; the bytes never crossed before. */
  private answer(read: Read): void {
    if (this.exitSent) return;
    if (read.what === "window") {
      this.mailbox.send({ type: "window", id: read.id, window: this.readWindow() });
      return;
    }
    if (read.what === "ports") {
      this.mailbox.send({ type: "ports", id: read.id, ports: this.watch && !this.processExited ? this.watch.listening() : [] });
      return;
    }
    const taken = this.takeUnread ? this.takeUnread(read.maxBytes, read.final) : { text: "", bytes: 0, omittedBytes: 0 };
    this.cell.setUnread(this.unread?.pendingBytes ?? 0);
    this.mailbox.send({ type: "unread", id: read.id, taken });
  }

  /** The log stopped taking bytes: a quota was reached or the disk failed. Reported once, never silent. */
  private onLogLimit(): void {
    this.logReported = true;
    const state = this.log.state();
    this.mailbox.send({ type: "notice", kind: "log_truncated", detail: state.error });
    if (this.spec.log.onQuota === "stop") void this.requestStop(state.truncated ? "log_quota" : "log_failed", "SIGTERM");
  }

  /**
   * Only what must see every byte may slow the process: the contract matcher (the log is written synchronously).
   * Pi's thread never does: output nobody reads stays here, bounded, and never waits for the host.
   */
  private applyPause(): void {
    // After the process exited, only its last buffered output is left to read: never pause that (see run()).
    const shouldPause = this.matcherBehind && !this.processExited;
    if (shouldPause === this.readPaused || !this.proc) return;
    this.readPaused = shouldPause;
    this.cell.setPaused(shouldPause);
    if (shouldPause) this.proc.pause();
    else this.proc.resume();
    this.mailbox.send({ type: "notice", kind: shouldPause ? "paused" : "resumed", detail: shouldPause ? "matcher" : null });
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
      this.cell.setState("stopping");
      if (this.readPaused && cause !== "contract") {
        // A stopping job must be able to drain what it already wrote.
        this.readPaused = false;
        this.cell.setPaused(false);
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
    clearInterval(this.heartbeat);
    this.watch?.dispose();
    this.cell.setStuck({ stalled: false, waitingForInput: false });
    this.phase = "ended";
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
    // Every read answered so far is reflected here; later reads are served by the host from this message.
    const window = this.readWindow();
    const unread = this.takeUnread ? this.takeUnread(ALL_UNREAD, true) : null;
    this.exitSent = true;
    const log = this.log.state();
    this.cell.setLog(log.bytes, log.truncated);
    this.cell.setUnread(unread?.bytes ?? 0);
    this.cell.setPaused(false);
    this.cell.setState("ended");
    this.mailbox.send({ type: "exit", result, window, unread });
    this.mailbox.close();
    this.controlPort.close();
    return result;
  }

  // ── ActorControl (comlink) ────────────────────────────────────────────────────────────────────────────────────

  snapshot(): ActorSnapshot {
    return {
      phase: this.phase,
      pid: this.proc?.pid ?? null,
      paused: this.readPaused,
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
    if (!this.proc.resize(cols, rows)) return { ok: false, error: "the terminal is closed" };
    this.unread?.resize(cols, rows);
    return { ok: true, queuedBytes: 0 };
  }

  stop(signal: StopSignal): void {
    void this.requestStop("stopped", signal);
  }
}

/** The cause the monitor contract settles on; the supervisor's own causes never reach a running actor. */
function monitorCause(cause: EndCause): ProcessEnd["cause"] {
  switch (cause) {
    case "exit":
    case "contract":
    case "timeout":
    case "stopped":
    case "spawn_failed":
    case "log_quota":
    case "log_failed":
    case "stalled":
    case "waiting_for_input":
      return cause;
    default:
      return "stopped" as const;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
