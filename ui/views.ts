/**
 * What the UI draws: plain data the host builds from the runtime, the monitor service and the shell service at
 * human rate. The renderers in ui/ read these and nothing else; no job state lives in the UI.
 *
 * Values are raw (unsanitized, unpreviewed): sanitizing and previews are presentation, done by the renderers.
 */
import type { JobKind, Phase, RetainedWindow, StartStage } from "../host/runtime/api.ts";
import type { MonitorTerminalResult } from "../host/monitor/schemas.ts";
import type { ProcessStatus } from "../host/shell/supervision.ts";

export type { JobKind };

/** The colour role of a job's state. */
export type Tone = "pending" | "success" | "error" | "stopped";

export interface DetailField {
  /** Starts with an uppercase letter; drawn as `Label: value`. */
  label: string;
  value: string;
  /** inline: value beside its label; block: label alone, value lines below; code: like block, highlighted as shell. */
  layout: "inline" | "block" | "code";
  /** A result or capture value: long ones are previewed unless complete values are asked for. */
  previewable?: boolean;
  /** `warning`: the value is drawn in the theme's warning colour (a job near a limit, a runaway). */
  tone?: "warning";
}

/** Live figures the seeds do not have: throughput, retention and the job's process tree. */
export interface LiveFigures {
  linesPerSecond: number | null;
  bytesPerSecond: number | null;
  totalLines: number;
  totalBytes: number;
  retainedLines: number;
  droppedLines: number;
  droppedBytes: number;
  paused: boolean;
  pgid: number | null;
  /** The job's whole tree (every process carrying its tag), as its actor samples it; null before the first sample. */
  tree: TreeFigures | null;
  /** The job's resource limits as set; null when it has none. */
  limits: LimitFigures | null;
  /** Whether to warn: a tree figure at NEAR_LIMIT of its limit or more, or a runaway by the watchdog's thresholds. */
  pressure: Pressure;
}

export interface TreeFigures {
  rssBytes: number;
  peakRssBytes: number;
  /** Of one core, over the actor's last sample interval; null until two samples exist. */
  cpuPercent: number | null;
  cpuMs: number;
  processes: number;
}

/** Each null when not set. */
export interface LimitFigures {
  memoryBytes: number | null;
  cpuMs: number | null;
  processes: number | null;
}

export type Pressure = "none" | "near_limit" | "runaway";

export interface JobView {
  /** Stable selection key across snapshots, e.g. `monitor:monitor_3`, `shell:2`. */
  key: string;
  kind: JobKind;
  /** The id the tools use: `monitor_3`, `2`. */
  id: string;
  /** Description (monitor) or command (shell job). */
  title: string;
  running: boolean;
  /**
   * Its phase while it lives (mailbox/lifecycle.ts: `starting`, `running`, and for a shell job `stopping` once a stop
   * was asked for), then how it ended in its tool's words: a monitor's (`success`, `failure`, `result_missing`,
   * `timeout`, `stopped`) or the shell tools' (`exited`, `failed`, `timed_out`, `stopped`).
   */
  status: ProcessStatus | Extract<Phase, "stopping"> | MonitorTerminalResult["status"];
  /** Present while the status is `starting`: why the job has no process yet. */
  startStage?: StartStage;
  tone: Tone;
  elapsedMs: number;
  /** Exit code, signal, reason, stopped-by and integrity warnings: shown right after status and elapsed. */
  head: DetailField[];
  /** Name, id, payload. */
  body: DetailField[];
  /** Command and configuration: last, because it may be long. */
  config: DetailField[];
  live: LiveFigures | null;
  /** Retained output, as the actor's window holds it; present only when the snapshot was asked for it. */
  output?: RetainedWindow;
}

export interface JobsSnapshot {
  /** Epoch ms. */
  takenAt: number;
  /** Running jobs first (oldest first), then finished ones (newest first). */
  jobs: JobView[];
}
