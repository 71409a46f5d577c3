/**
 * The job runtime as the tool layers see it: start a job, watch it, talk to it, stop it. Monitors and shell jobs
 * are both built on this; neither touches a worker, a port or a process directly.
 */
import type { ActorResult } from "../../mailbox/result.ts";
import type { JobIo, JobSpec } from "../../mailbox/spec.ts";
import type { Notice, ReadyReport } from "../../mailbox/messages.ts";
import type { RetainedWindow, TakenOutput } from "../../mailbox/output.ts";
import type { StopSignal, WriteAck } from "../../mailbox/control.ts";
import type { MonitorContract } from "../../mailbox/monitor.ts";
import type { Phase, StartStage } from "../../mailbox/lifecycle.ts";
import type { TreeUsage } from "../../mailbox/cell.ts";

export type JobKind = "monitor" | "shell";

export interface StartRequest {
  kind: JobKind;
  command: string;
  /** Program for `shell -c command`; defaults to $SHELL, then /bin/sh. */
  shell?: string;
  cwd: string;
  env?: Record<string, string> | null;
  io: JobIo;
  timeoutMs: number;
  killGraceMs: number;
  /** Per-job log quota in bytes and what reaching it means. */
  log: { maxBytes: number; onQuota: "stop" | "truncate" };
  contract?: MonitorContract | null;
  /** A shell job's unread-output buffer: head and tail kept between reads (default: none, a monitor's case). */
  unread?: { headBytes: number; tailBytes: number } | null;
  /** Human label for lists and the console. */
  label: string;
  /** Readiness and stall watches the actor keeps (prompts are detected without it). */
  watch?: JobSpec["watch"];
}

/**
 * Who asked the host to stop a job: a tool (kill_session, monitor_stop, a cancelled monitor_start, the console and the
 * sessions picker, which stop through the same tools), or the session ending (shutdown, or a /reload that nobody
 * adopted). A job that ends on its own (its exit, its deadline, its contract, its log quota) was stopped by nobody:
 * its result's cause says why it ended.
 */
export type StopRequester = "tool" | "session_shutdown";

/**
 * One job's lifecycle as the host keeps it, owned by the host's side of the job (host/runtime/job.ts); the tool layers
 * derive everything they show from it and keep no copy. Its phase is three of the job's phases (mailbox/lifecycle.ts)
 * and is about the process: `starting` until it exists (its pid is published in the job's cell), `running` from then
 * on, `ended` once the terminal result is in. A stop request is another fact beside it: a job is stopping from the
 * request until its result, whether or not its process exists yet. Not the actor's `ActorState` (actors/job/state.ts),
 * the actor's own machine with the finer phases and what each holds.
 */
export type JobState =
  | { phase: Extract<Phase, "starting" | "running">; stopBy: StopRequester | null }
  | JobEnded;

/** A job's state once its terminal result is in; `stopBy` says who asked for the stop (null: it ended on its own). */
export interface JobEnded {
  phase: Extract<Phase, "ended">;
  result: ActorResult;
  stopBy: StopRequester | null;
}

export type { Phase, StartStage } from "../../mailbox/lifecycle.ts";

/** Live figures of one job, read from its shared cell (no message per output chunk). */
export interface JobFigures {
  bytes: number;
  lines: number;
  /** Epoch ms of the last output, or null. */
  lastOutputEpochMs: number | null;
  paused: boolean;
  logBytes: number;
  logTruncated: boolean;
  /** A shell job's output not yet taken by a read. */
  unreadBytes: number;
  /** Error-like lines it has printed so far (its evidence: mailbox/evidence.ts). */
  evidenceLines: number;
  /** Quiet past its stall time while using under 1 % of a core (only with a stall time). */
  stalled: boolean;
  /** Its last output is a prompt-shaped unterminated line, followed by quiet. */
  waitingForInput: boolean;
  /** Its tree is over the watchdog's thresholds now (a live job only). */
  runaway: boolean;
  /** Its process tree as the actor last sampled it (kept once it ended); null before the first sample or where the process table cannot read it. */
  usage: TreeUsage | null;
}

export type { TreeUsage } from "../../mailbox/cell.ts";

export interface JobHandle {
  /** `monitor_N` or `job_N`: the name of the job's log file too. */
  readonly id: string;
  /** N: the job's number among the runtime's jobs of its kind, which the tools show (`monitor_N`, session N). */
  readonly number: number;
  readonly kind: JobKind;
  readonly label: string;
  readonly spec: JobSpec;
  /** Monotonic ms (performance.now()) when start() was called. */
  readonly requestedAt: number;
  /** Epoch ms when start() was called. */
  readonly requestedAtEpoch: number;
  /** The job's lifecycle now (see JobState). */
  state(): JobState;
  /** `state().phase`. */
  phase(): JobState["phase"];
  /** Where a starting job is (see StartStage); null once its process exists or the job ended. */
  startStage(): StartStage | null;
  pid(): number | null;
  pgid(): number | null;
  /** Absolute monotonic deadline of the hard lifetime (from spawn), or null before spawn. */
  deadline(): number | null;
  figures(): JobFigures;
  /** The terminal result once ended, else null. */
  result(): ActorResult | null;
  /** Resolves exactly once with the terminal result; never rejects. */
  readonly done: Promise<ActorResult>;
  /**
   * Calls the listener once, when the job ends: synchronously with the change of its state, so that no `done`
   * callback and no caller whose read the end answered runs before the listener has. A job that has already ended
   * calls it at once. Returns the unsubscribe.
   */
  onEnd(listener: (ended: JobEnded) => void): () => void;
  onNotice(listener: (notice: Notice) => void): () => void;
  /**
   * The retained output window as last read (the final one once the job ended), without waiting; while the job
   * runs it also asks the actor for a fresh one, so a caller at human rate (the console) shows at most one refresh
   * old. Empty until the first read answered. `refresh: false` only returns what is known (no read at all).
   */
  retained(refresh?: boolean): RetainedWindow;
  /** Reads the retained window from the actor now (the final window once ended). */
  readWindow(): Promise<RetainedWindow>;
  /** The output since the previous read: folded with the digest of what it left out, or `raw` head and tail. */
  takeUnread(final: boolean, raw: boolean): Promise<TakenOutput>;
  /** An ended job's final read as folded text, without taking it; null while it runs or once it was taken. */
  finalOutput(): string | null;
  /** When a take of the unread output last answered (monotonic ms), or null: the watchdog wakes only about unread jobs. */
  lastReadAt(): number | null;
  /**
   * The actor's readiness report for a job started with `watch.ready`: resolves once it is ready or its ready
   * deadline passed, or with null when the job ended first (or has no ready spec).
   */
  readiness(): Promise<ReadyReport | null>;
  /** The TCP ports the job's processes listen on now; null where they cannot be listed; [] once ended. */
  listening(): Promise<number[] | null>;
  write(bytes: Uint8Array): Promise<WriteAck>;
  endStdin(): Promise<WriteAck>;
  resize(cols: number, rows: number): Promise<WriteAck>;
  /**
   * Stop the process group (signal, then SIGKILL after the grace) and resolve with the terminal result. A job still
   * starting is cancelled: it never spawns, or its group is stopped as soon as it is published. `bounded` (shutdown)
   * settles within the grace plus one second even when the actor is slow: the supervisor kills the group itself.
   * `by` says who asks (a tool unless given); the first request is the one the job's state keeps.
   */
  stop(signal?: StopSignal, options?: { bounded?: boolean; by?: StopRequester }): Promise<ActorResult>;
}

export type { RetainedLine, RetainedWindow, TakenOutput } from "../../mailbox/output.ts";

export interface JobRuntime {
  /** Start a job; a spawn failure arrives as the terminal result with cause "spawn_failed". */
  start(request: StartRequest): JobHandle;
  get(id: string): JobHandle | undefined;
  list(): JobHandle[];
  /** Stop every job and wait until every process group is gone. */
  stopAll(): Promise<void>;
  /** stopAll, then end every worker thread. The runtime cannot be used afterwards. */
  shutdown(): Promise<void>;
}
