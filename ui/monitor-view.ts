/**
 * What the monitor's bands and fields (ui/bands.ts, ui/monitor-fields.ts) draw: a monitor's terminal result and its
 * start configuration, as far as they read them. The host hands over its own records as they are — the stored result
 * and configuration in the transcript (host/console/monitor-renderers.ts), the service's in the console
 * (host/console/views.ts) — and the compiler checks there that they fit. Words the monitor stores (status,
 * completion, reason) are strings the renderers print; the few they compare are named where they do.
 */

/** One entry of a monitor's diagnostic output tail; adjacent identical lines are one entry with a count. */
export interface TailLineView {
  source: string;
  text: string;
  count: number;
  /** The text was cut at its display bound. */
  clipped: boolean;
}

/** A monitor's terminal result. */
export interface MonitorResultView {
  description: string;
  status: string;
  completion: string;
  elapsedMs: number;
  /** "match" when the contract, not the process, ended the run. */
  stoppedBy: string | null;
  exitCode: number | null;
  signal: string | null;
  reason: string | null;
  matched: string | null;
  matchedTruncated: boolean;
  captures: Readonly<Record<string, string>>;
  capturesTruncated: boolean;
  /** Whether a `json` capture parsed into `result` (`false`, `null` and `0` are results too). */
  hasResult: boolean;
  result?: unknown;
  resultParseError: string | null;
  output: readonly TailLineView[];
  outputTruncated: boolean;
}

/** The effective start configuration as the transcript and the console show it. */
export interface StartView {
  command: string;
  description: string;
  resultPattern: string;
  failurePattern: string | null;
  completion: string;
  timeoutMs: number;
}
