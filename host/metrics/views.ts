/**
 * The view models of the metrics footer and /metrics: plain read-only values the host builds on each render, which
 * `host/metrics/footer.ts` and `host/metrics/report.ts` draw without keeping any measurement state of their own.
 */
import type { EffQualifier } from "./live-view.ts";

/** The job runtime as a whole over one sampler interval (one job's own figures are `JobFigures`, host/runtime/api.ts). */
export interface JobRates {
  running: number;
  linesPerSecond: number;
  bytesPerSecond: number;
  eventLoopDelayP99Ms: number | null;
}

export interface StatusItem {
  key: string;
  text: string;
}

export interface AgentGlance {
  label: string;
  ttftMs: number | null;
  effTps: number | null;
  state: "running" | "complete" | "interrupted";
  active: number;
}

export interface FooterModel {
  cwd: string;
  gitBranch: string | null;
  sessionName: string | null;
  /** provider/model of the selected model. */
  model: string | null;
  thinkingLevel: string | null;
  activity: "idle" | "running" | "settled" | "interrupted";
  /** A label for the latest response when it did not end normally: "error", "aborted", "deferred", "length". */
  responseLabel: string | null;
  ttftMs: number | null;
  effTps: number | null;
  effQualifier: EffQualifier;
  obsTps: number | null;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  cacheRead: number;
  cacheWrite: number;
  cacheHit: number | null;
  contextPercent: number | null;
  contextTokens: number | null;
  contextWindow: number | null;
  agent: AgentGlance | null;
  jobs: JobRates | null;
  /** Already sanitized and idle-filtered. */
  statuses: StatusItem[];
  /** Our own warnings (save failure, rejected agent snapshots). */
  warnings: string[];
  collapsed: boolean;
}
