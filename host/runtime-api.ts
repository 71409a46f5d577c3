/**
 * The job runtime as the tool layers see it: start a job, watch it, talk to it, stop it. Monitors and shell jobs
 * are both built on this; neither touches a worker, a port or a process directly.
 */
import type {
  ActorResult,
  ActorSnapshot,
  JobIo,
  JobSpec,
  Notice,
  OutputBatch,
  StopSignal,
  WriteAck,
} from "../mailbox/protocol.ts";
import type { MonitorContract } from "../mailbox/monitor.ts";

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
  /** Human label for lists and the console. */
  label: string;
  /** Fault injection for the runtime's own tests. */
  fault?: JobSpec["fault"];
}

export type JobPhase = "starting" | "running" | "ended";

/** Live figures of one job, kept by the host in constant work per output batch. */
export interface JobFigures {
  bytes: number;
  lines: number;
  batches: number;
  /** Monotonic ms of the last output batch, or null. */
  lastOutputAt: number | null;
  paused: boolean;
  logTruncated: boolean;
}

export interface JobHandle {
  readonly id: string;
  readonly kind: JobKind;
  readonly label: string;
  readonly spec: JobSpec;
  /** Monotonic ms (performance.now()) when start() was called. */
  readonly requestedAt: number;
  /** Epoch ms when start() was called. */
  readonly requestedAtEpoch: number;
  phase(): JobPhase;
  pid(): number | null;
  pgid(): number | null;
  /** Absolute monotonic deadline of the hard lifetime (from spawn), or null before spawn. */
  deadline(): number | null;
  figures(): JobFigures;
  /** The terminal result once ended, else null. */
  result(): ActorResult | null;
  /** Resolves exactly once with the terminal result; never rejects. */
  readonly done: Promise<ActorResult>;
  /** Called on the host thread once per output batch (after figures are updated). Returns an unsubscribe. */
  onOutput(listener: (batch: OutputBatch) => void): () => void;
  onNotice(listener: (notice: Notice) => void): () => void;
  /** Retained output decoded as text lines (bounded; for the console and reports). */
  retained(): { lines: RetainedLine[]; droppedLines: number; droppedBytes: number };
  write(bytes: Uint8Array): Promise<WriteAck>;
  endStdin(): Promise<WriteAck>;
  resize(cols: number, rows: number): Promise<WriteAck>;
  snapshot(): Promise<ActorSnapshot | null>;
  /** Stop the process group (signal, then SIGKILL after the grace) and resolve with the terminal result. */
  stop(signal?: StopSignal): Promise<ActorResult>;
}

export interface RetainedLine {
  source: "stdout" | "stderr" | "pty";
  text: string;
}

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
