/**
 * The job actor: one job, one worker thread. It owns the process group, the log, the job's output (the retained
 * window and, for a shell job, the unread head and tail) and, for a monitor, the contract engine. Figures and
 * lifecycle facts go to the job's shared cell; bytes cross only when the host reads them. It speaks through its
 * mailbox: the data port (spawned, read replies, notices, exactly one exit) and the control port (comlink: write,
 * resize, stop). This file is its lifecycle, the start and exit path (its phases: mailbox/lifecycle.ts, its state:
 * actors/job/state.ts); the output path is actors/job/output.ts and the control calls actors/job/control.ts.
 *
 * The pool runs `runJob` as one long task; the task resolves only after the exit message is posted, and for a
 * PTY only from a setImmediate after node-pty reported the exit, because ending a thread that still has a live
 * or just-exited PTY can abort the whole process (docs/decisions/never-terminate.md).
 */
import type { MessagePort } from "node:worker_threads";
import { JobCellWriter } from "../../mailbox/cell.ts";
import type { StopSignal } from "../../mailbox/control.ts";
import { actorCrashed, couldNotStart, stoppedBeforeStart } from "../../mailbox/errors.ts";
import type { ActorToHost, HostToActor } from "../../mailbox/messages.ts";
import { typedPort, type TypedPort } from "../../mailbox/port.ts";
import type { ActorResult, EndCause, LimitTrip } from "../../mailbox/result.ts";
import type { JobSpec } from "../../mailbox/spec.ts";
import type { ActorTask, ActorTaskResult } from "../../mailbox/task.ts";
import { HEARTBEAT_MS, STREAM_CLOSE_ROUNDS, STREAM_CLOSE_WAIT_MS } from "../../mailbox/timings.ts";
import { Comlink, createNodeEndpoint } from "../../shared/comlink-endpoint.ts";
import { stopGroup, type StopOptions, type StopOutcome } from "../../shared/process-group.ts";
import type { ProcessIo } from "../process/io.ts";
import { spawnProcess, SpawnError } from "../process/process-io.ts";
import { osThreadId } from "../thread/priority.ts";
import { tripMessage } from "../watch/usage-judge.ts";
import { jobControl } from "./control.ts";
import { JobOutput } from "./output.ts";
import { childOf, monitorCause, pendingStopOf, type ActorState, type Child } from "./state.ts";

const NOTHING_TO_CLEAN: StopOutcome = { confirmed: true, escalated: false };

export default async function runJob(task: ActorTask): Promise<ActorTaskResult> {
  const actor = new JobActor(task);
  const result = await actor.run();
  return { id: task.spec.id, cause: result.cause };
}

class JobActor {
  readonly spec: JobSpec;
  /**
   * Never checked here: the host's end of the data port checks every message in both directions, and the spec before
   * the job starts, while compiling the checks would cost each new thread ~0.4 s of CPU in a checkout
   * (docs/decisions/mailbox-checks.md).
   */
  readonly mailbox: TypedPort<ActorToHost, HostToActor>;
  readonly cell: JobCellWriter;
  private readonly controlPort: MessagePort;
  private readonly output: JobOutput;
  private readonly heartbeat: ReturnType<typeof setInterval>;
  private readonly logBudget: SharedArrayBuffer;
  private readonly requestedAt = performance.now();
  private state: ActorState = { phase: "starting", pendingStop: null };
  private spawnedAt: number | null = null;
  private startedAtEpoch: number | null = null;
  /** Set by a contained crash, which may come while a stop with another cause is under way. */
  private causeMessage: string | null = null;
  private timeout: ReturnType<typeof setTimeout> | null = null;
  /** The limit the tree passed, once it has: the result carries it when it is what ended the job. */
  private trip: LimitTrip | null = null;
  /** The stop of a watched tree that passed a limit (stopWatchedTree): the result waits for it. */
  private treeStop: Promise<void> | null = null;

  constructor(task: ActorTask) {
    this.spec = task.spec;
    this.controlPort = task.control;
    this.mailbox = typedPort<ActorToHost, HostToActor>(task.data, null);
    this.cell = new JobCellWriter(task.cell);
    this.output = new JobOutput({
      spec: this.spec,
      cell: this.cell,
      mailbox: this.mailbox,
      child: () => childOf(this.state),
      exitSent: () => this.state.phase === "ended" && this.state.exitSent,
      requestStop: (cause, signal) => void this.requestStop(cause, signal),
      limitPassed: (trip) => {
        this.trip ??= trip;
        this.stopWatchedTree();
        void this.requestStop(trip.cause, "SIGTERM");
      },
    });
    // Which thread beats: the host reads its CPU figures before it calls a heartbeat that stands still a hang.
    this.cell.publishThread(osThreadId());
    this.heartbeat = setInterval(() => this.cell.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
    this.mailbox.receive((message) => this.output.answer(message));
    this.logBudget = task.logBudget;
    Comlink.expose(
      jobControl({
        spec: this.spec,
        state: () => this.state,
        resizeOutput: (cols, rows) => this.output.resize(cols, rows),
        requestStop: (cause, signal) => void this.requestStop(cause, signal),
      }),
      createNodeEndpoint(this.controlPort),
    );
  }

  async run(): Promise<ActorResult> {
    await this.output.prepare();
    // The host may have cancelled the job while it waited in the pool's queue: then nothing is spawned at all.
    if (!this.cell.claimSpawn()) return this.finish("stopped", stoppedBeforeStart(), NOTHING_TO_CLEAN);
    this.state = { phase: "spawning", pendingStop: null };
    let io: ProcessIo;
    try {
      // Through the spawner, the log file is created once the request is out, while the spawner forks: creating a file
      // costs ~0.3 ms that a short job's start waited for (docs/benchmarks.md, "Where a short job's time goes").
      io = await spawnProcess(this.spec, () => this.output.openLog(this.logBudget));
    } catch (error) {
      const message = error instanceof SpawnError ? error.message : couldNotStart((error as Error).message);
      return this.finish("spawn_failed", message, NOTHING_TO_CLEAN);
    }
    const guard = io.kind === "pty" ? this.containCrashes() : null;
    this.spawnedAt = io.spawnedAt;
    this.startedAtEpoch = Math.round(Date.now() - (performance.now() - io.spawnedAt));
    const pending = pendingStopOf(this.current());
    let exited!: () => void;
    const child: Child = { io, exit: null, exited: new Promise<void>((resolve) => (exited = resolve)) };
    this.state = { phase: "running", child };
    // Published before any message: from here on the host can kill the group whatever this thread does next.
    this.cell.publishSpawn(io.pid, io.pid, this.startedAtEpoch);
    this.mailbox.send({ type: "spawned", pid: io.pid, pgid: io.pid, startedAt: this.startedAtEpoch, io: io.kind });
    io.onExit((code, signal) => {
      child.exit = { code, signal };
      exited();
    });
    // The first cause asked for wins; a cancel that came while the spawn was under way stops with SIGTERM.
    if (this.cell.cancelRequested()) void this.requestStop(pending?.cause ?? "stopped", "SIGTERM");
    else if (pending) void this.requestStop(pending.cause, pending.signal);

    this.output.watchFrom(io.pid, this.spawnedAt, this.startedAtEpoch);
    io.onData((source, chunk) => this.output.feed(source, chunk));
    let streamsEnded = false;
    const drained = new Promise<void>((resolve) =>
      io.onDrained(() => {
        streamsEnded = true;
        resolve();
      }),
    );
    this.timeout = setTimeout(() => void this.requestStop("timeout", "SIGTERM"), Math.max(0, this.spec.timeoutMs - (performance.now() - io.spawnedAt)));

    await child.exited;
    // Whatever is left in the pipes is bounded (the kernel's buffers), and it must all be read before the job can end:
    // backpressure may slow a running writer, never lose the last words of one that exited.
    this.output.unpause(false);
    // The shell is gone; reclaim descendants still in its group (they may hold our pipes open), unless a stop is
    // already doing exactly that.
    const stopping = this.current();
    const cleanup = await (stopping.phase === "stopping" ? stopping.stop : stopGroup(io.pid, this.stopOptions("SIGTERM", child)));
    // Streams that closed already (a short job's, as a rule, by the time its group is confirmed gone) need no quiet
    // wait: its timer would only fire a second later on an idle thread. One that runs is cancelled once they close.
    if (!streamsEnded) {
      const quiet = new AbortController();
      const closedInTime = await Promise.race([drained.then(() => true), this.outputQuiet(quiet.signal).then(() => false)]);
      quiet.abort();
      if (!closedInTime) io.abandonStreams();
    }
    this.output.engine?.end("stdout");
    this.output.engine?.end("stderr");
    const ending = this.current();
    const cause = ending.phase === "stopping" ? ending.cause : "exit";
    if (io.kind === "pty") await new Promise<void>((resolve) => setImmediate(resolve));
    const trip = this.trip !== null && this.trip.cause === cause ? this.trip : null;
    const result = await this.finish(cause, this.causeMessage ?? (trip === null ? null : tripMessage(trip)), cleanup, trip);
    if (guard) process.off("uncaughtException", guard);
    return result;
  }

  /** The state now: read through a call, since the state changes while run() awaits. */
  private current(): ActorState {
    return this.state;
  }

  /**
   * A thread that owns a PTY must never die with it (docs/decisions/never-terminate.md): an unexpected exception here
   * stops the group,
   * waits for the terminal's exit like any stop, and reports the crash, instead of tearing the thread down.
   */
  private containCrashes(): (error: Error) => void {
    const guard = (error: Error) => {
      this.causeMessage ??= actorCrashed(error.message);
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
  private async outputQuiet(cancelled: AbortSignal): Promise<void> {
    for (let round = 0; round < STREAM_CLOSE_ROUNDS; round += 1) {
      const before = this.output.totals.bytes;
      await delay(STREAM_CLOSE_WAIT_MS, cancelled);
      if (cancelled.aborted) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.output.totals.bytes === before) return;
    }
  }

  /** A stop reaches the group and whatever left it carrying the job's tag; it checks again when the leader exits. */
  private stopOptions(signal: StopSignal, child: Child): StopOptions {
    return {
      signal,
      graceMs: this.spec.killGraceMs,
      tag: this.spec.tag,
      spawnedAt: this.startedAtEpoch ?? undefined,
      leaderExit: child.exited,
    };
  }

  /**
   * A tree watched in place of the job's own (a persisted job's, which its keeper runs outside this actor's group)
   * passed a limit: its group and what left it carrying its tag are stopped too, or the limit would end only the
   * follower. The keeper records the end; the follower's stop is the actor's own.
   */
  private stopWatchedTree(): void {
    const tree = this.spec.watch?.tree;
    if (tree === undefined || this.treeStop !== null) return;
    const options = { signal: "SIGTERM" as const, graceMs: this.spec.killGraceMs, tag: tree.tag, spawnedAt: tree.spawnedAtEpoch };
    this.treeStop = stopGroup(tree.pid, options).then(() => undefined, () => undefined);
  }

  /** The first cause wins; later requests join the stop already under way. */
  private requestStop(cause: EndCause, signal: StopSignal): Promise<StopOutcome> {
    const state = this.state;
    switch (state.phase) {
      case "ended":
        return Promise.resolve(NOTHING_TO_CLEAN);
      case "starting":
      case "spawning":
        // Asked to stop while there is no process yet: stop it as soon as it exists.
        this.state = { phase: state.phase, pendingStop: { cause: state.pendingStop?.cause ?? cause, signal } };
        return Promise.resolve(NOTHING_TO_CLEAN);
      case "stopping":
        return state.stop;
      case "running": {
        this.cell.setState("stopping");
        // A stopping job must be able to drain what it already wrote.
        if (cause !== "contract") this.output.unpause(true);
        const stop = stopGroup(state.child.io.pid, this.stopOptions(signal, state.child));
        this.state = { phase: "stopping", child: state.child, cause, stop };
        return stop;
      }
    }
  }

  private async finish(cause: EndCause, message: string | null, cleanup: StopOutcome, trip: LimitTrip | null = null): Promise<ActorResult> {
    if (this.timeout) clearTimeout(this.timeout);
    await this.treeStop;
    clearInterval(this.heartbeat);
    const { output } = this;
    output.watch?.dispose();
    this.cell.setStuck({ stalled: false, waitingForInput: false });
    const child = childOf(this.state);
    this.state = { phase: "ended", child, exitSent: false };
    const exit = child?.exit ?? { code: null, signal: null };
    const monitor = output.engine ? await output.engine.finish({ cause: monitorCause(cause), exitCode: exit.code, signal: exit.signal }) : null;
    await output.engine?.dispose();
    output.log.close();
    const now = performance.now();
    const result: ActorResult = {
      cause,
      exitCode: exit.code,
      signal: exit.signal,
      message,
      startedAt: this.startedAtEpoch,
      endedAt: Date.now(),
      elapsedMs: now - (this.spawnedAt ?? this.requestedAt),
      cleanup: cleanup.confirmed ? "confirmed" : "unconfirmed",
      escalated: cleanup.escalated,
      log: output.log.state(),
      totals: { ...output.totals },
      evidence: output.finalEvidence(monitor),
      monitor,
      ...(trip !== null ? { limit: trip } : {}),
    };
    // Every read answered so far is reflected here; later reads are served by the host from this message.
    const { window, unread } = output.finalReads();
    this.state = { phase: "ended", child, exitSent: true };
    const log = output.log.state();
    this.cell.setLog(log.bytes, log.truncated);
    this.cell.setUnread(unread?.bytes ?? 0);
    this.cell.setPaused(false);
    this.cell.setState("ended");
    this.mailbox.send({ type: "exit", result, window, unread });
    this.mailbox.close();
    this.controlPort.close();
    return result;
  }
}

/** Resolves after `ms`, or at once when `cancelled` is aborted (its timer cleared). */
function delay(ms: number, cancelled: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (cancelled.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      cancelled.removeEventListener("abort", done);
      resolve();
    }
    cancelled.addEventListener("abort", done, { once: true });
  });
}
