/**
 * The supervisor of one job's actor: the backstop that watches the actor's deadlines, and the takeover that ends the
 * job itself when the actor cannot. The process-group id is in the job's cell from the moment the process exists, so a
 * crashed or hung actor cannot keep a process alive: the supervisor kills the group (and the job's tagged processes)
 * and reports a failure with its reason. An actor that is only starved of CPU is waited for, however late
 * (host/runtime/heartbeat.ts). Apart from the job's handle (host/runtime/job.ts), which only tells it what happened.
 */
import { performance } from "node:perf_hooks";
import type { JobCellReader } from "../../mailbox/cell.ts";
import {
  actorCrashed,
  actorLate,
  endedWithoutReport,
  hadCpuToFinish,
  missedDeadline,
  noProcessSpawned,
  stopNotFinished,
  stopNotReportedInGrace,
} from "../../mailbox/errors.ts";
import type { ActorResult, EndCause } from "../../mailbox/result.ts";
import type { JobSpec } from "../../mailbox/spec.ts";
import { MAX_TIMER_MS, STREAM_CLOSE_ROUNDS, STREAM_CLOSE_WAIT_MS } from "../../mailbox/timings.ts";
import { signalTagged, taggedProcesses } from "../../shared/process-table/index.ts";
import { stopGroup, type StopOutcome } from "../../shared/process-group.ts";
import { OwnClock, type Heartbeat } from "./heartbeat.ts";
import { NO_EVIDENCE } from "../../mailbox/evidence.ts";

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
/** How long the supervisor waits for a thread inside spawn() to publish what it started. */
const SPAWN_PUBLISH_WAIT_MS = 5000;

/** How a job ends when the supervisor ends it: its actor failed, or a bounded stop was finished for it. */
export type SupervisorCause = Extract<EndCause, "actor_crashed" | "actor_unresponsive" | "stopped">;

/** What the supervisor needs of the job it watches. */
export interface SupervisedJob {
  readonly spec: JobSpec;
  /** Monotonic ms when the job was asked for. */
  readonly requestedAt: number;
  readonly cell: JobCellReader;
  readonly heartbeat: Heartbeat;
  /** The job's result is in. */
  ended(): boolean;
  /** Ends the job with this result (the supervisor's own). */
  settle(result: ActorResult): void;
  /** Ends the actor's thread (the pool task's abort). */
  endThread(reason: string): void;
}

export class Supervisor {
  private readonly job: SupervisedJob;
  private backstop: ReturnType<typeof setTimeout> | null = null;
  private backstopAt = Number.POSITIVE_INFINITY;
  /** What the armed backstop ends the job as, if it fires; null before one is armed. */
  private backstopCause: SupervisorCause | null = null;
  /** Counts the backstop's timers, so that a verdict still being read when the backstop is re-armed is dropped. */
  private backstopRound = 0;
  private takingOver = false;
  /** From the first time the supervisor found the actor past a deadline and let it go on: its time since then. */
  private lateClock: OwnClock | null = null;
  /** When a bounded stop's takeover must be over (monotonic ms); null: the takeover takes what it needs. */
  private takeOverBy: number | null = null;
  /** The supervisor took over but could not end the thread (it owns a PTY, or was inside spawn). */
  threadLeftAlone = false;

  constructor(job: SupervisedJob) {
    this.job = job;
  }

  /** The process exists: its actor must report the job's end by its deadline, the group's grace and a moment more. */
  spawned(): void {
    const { spec } = this.job;
    this.armBackstop(spec.timeoutMs + spec.killGraceMs + ACTOR_FINISH_MS + SUPERVISOR_SLACK_MS, missedDeadline());
  }

  /**
   * The actor was asked to stop. If it does not finish its own stop in time, the supervisor stops the group itself. A
   * stop that must be over in time (`bounded`, shutdown) is finished here past the grace: the job is then stopped as
   * asked (its group killed and confirmed gone here), not failed, however slow its actor was.
   */
  stopAsked(bounded: boolean): void {
    const { spec } = this.job;
    if (bounded) {
      this.takeOverBy ??= performance.now() + spec.killGraceMs + BOUNDED_STOP_SLACK_MS + BOUNDED_TAKEOVER_MS;
      this.armBackstop(spec.killGraceMs + BOUNDED_STOP_SLACK_MS, stopNotReportedInGrace(), "stopped");
    } else {
      this.armBackstop(spec.killGraceMs + ACTOR_FINISH_MS + SUPERVISOR_SLACK_MS + 5000, stopNotFinished());
    }
  }

  /** The job ended: nothing is left to watch. */
  ended(): void {
    if (this.backstop) clearTimeout(this.backstop);
  }

  /** The pool task ended: unless the job's result is in (or soon is), the actor failed. */
  taskSettled(error: unknown): void {
    if (this.job.ended() || this.takingOver) return;
    const reason = error ? actorCrashed((error as Error)?.message ?? String(error)) : endedWithoutReport();
    // The exit message travels on the data port, which is not ordered with the pool's own channel. An actor that
    // finished marked its cell `ended` before it sent the message, which is then certainly on its way: it is waited
    // for much longer than the one a crashed actor might still have sent.
    const finished = !error && this.job.cell.state() === "ended";
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
  async takeOver(cause: SupervisorCause, message: string): Promise<void> {
    const { job } = this;
    if (job.ended() || this.takingOver) return;
    this.takingOver = true;
    if (job.cell.cancel()) {
      job.settle(supervisorResult(job, cause, noProcessSpawned(message), { confirmed: true, escalated: false }));
      return;
    }
    const left = (wanted: number) => (this.takeOverBy === null ? wanted : Math.max(50, Math.min(wanted, this.takeOverBy - performance.now())));
    let state = job.cell.state();
    if (state === "spawning") state = await job.cell.changed("spawning", left(SPAWN_PUBLISH_WAIT_MS));
    const pgid = job.cell.pgid();
    let cleanup = { confirmed: state !== "spawning", escalated: false };
    const spawnedAt = job.cell.read().startedEpochMs ?? undefined;
    if (pgid !== null) cleanup = await stopGroup(pgid, { signal: "SIGKILL", graceMs: 0, tag: job.spec.tag, spawnedAt, confirmMs: left(5000) });
    // A process whose pid the thread has not published yet still carries the job's tag; the actor also stops it
    // itself once it publishes (it sees the cancel flag).
    else if (state === "spawning") signalTagged((await taggedProcesses(job.spec.tag)) ?? [], "SIGKILL");
    if (job.ended()) return;
    // A hung thread without a terminal is ended now; one that owns a PTY is left alone, because ending it can abort
    // the whole process (docs/decisions/never-terminate.md), and so is one still inside spawn(). Its process group is
    // gone either way.
    if (job.spec.io.kind !== "pty" && job.cell.state() !== "spawning") job.endThread(message);
    else this.threadLeftAlone = true;
    job.settle(supervisorResult(job, cause, message, cleanup));
  }

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
      if (cause !== "actor_unresponsive") return void this.takeOver(cause, actorLate(what));
      // The verdict reads the actor thread's figures, asynchronously: meanwhile the job may end, or a bounded stop
      // re-arm the backstop, and then this round has nothing more to do.
      void this.lateVerdict().then((why) => {
        if (this.job.ended() || round !== this.backstopRound) return;
        if (why === null) {
          this.backstopAt = performance.now() + LATE_ACTOR_RECHECK_MS;
          this.scheduleBackstop(what, cause);
        } else void this.takeOver(cause, actorLate(what, why));
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
    const { heartbeat } = this.job;
    const clock = (this.lateClock ??= new OwnClock(() => heartbeat.sample()));
    const [verdict, own] = await Promise.all([heartbeat.look(), clock.elapsed()]);
    if (verdict.kind === "hung") return verdict.evidence;
    if (own >= LATE_ACTOR_LIMIT_MS) return hadCpuToFinish(Math.round(own / 1000));
    return null;
  }
}

/** The terminal result the host makes for a job whose actor did not report one: from what the cell shows. */
export function supervisorResult(
  job: Pick<SupervisedJob, "spec" | "requestedAt" | "cell">,
  cause: EndCause,
  message: string,
  cleanup: StopOutcome,
): ActorResult {
  const cell = job.cell.read();
  const log = cell.startedEpochMs === null ? { path: null, bytes: 0 } : { path: `${job.spec.log.dir}/${job.spec.id}`, bytes: cell.logBytes };
  return {
    cause,
    exitCode: null,
    signal: null,
    message,
    startedAt: cell.startedEpochMs,
    endedAt: Date.now(),
    elapsedMs: cell.startedEpochMs === null ? performance.now() - job.requestedAt : Math.max(0, Date.now() - cell.startedEpochMs),
    cleanup: cleanup.confirmed ? "confirmed" : "unconfirmed",
    escalated: cleanup.escalated,
    log: { ...log, truncated: cell.logTruncated, error: null },
    totals: { bytes: cell.bytes, lines: cell.lines },
    // The actor that kept the evidence is gone; the log still has every line.
    evidence: NO_EVIDENCE,
    monitor: null,
  };
}
