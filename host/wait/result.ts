/**
 * What wait_jobs answers, as structured data: the tool result's details and codemode's structuredContent. Its output
 * schema is host/wait/params.ts, its text for the model host/wait/result-text.ts, both functions of these values.
 */

import type { UsageFields } from "../runtime/usage-line.ts";

export type WaitUntil = "all" | "any" | "first_failure";

/**
 * How one job stands: ended well, ended badly, stopped on request, still running, or ended and collected so long ago
 * that only its log is left (`unknown`).
 */
export type Verdict = "success" | "failure" | "stopped" | "running" | "unknown";

/**
 * Who reports the job's result: this call (`now`), an earlier wait_jobs or write_stdin (`earlier`), its wake message
 * (`wake`: a monitor's report is then not repeated; a shell wake carries no output, so its last lines are this call's),
 * its own monitor_start call (`own_call`), nobody because it was stopped (`none`), or nobody yet: it still runs, or
 * this call was cancelled (`not_yet`).
 */
export type Collected = "now" | "earlier" | "wake" | "own_call" | "none" | "not_yet";

/**
 * Why the call returned: the condition of `until` held (`all_ended`, `one_ended`, `failed`), there was nothing to
 * wait for, its timeout passed, the user's new message, or the call was cancelled (then nothing is collected).
 */
export type WaitEndReason = "all_ended" | "one_ended" | "failed" | "nothing_to_wait_for" | "timeout" | "steered" | "cancelled";

export interface WaitJobLine {
  /** `job_N` for shell session N, `monitor_N` for a monitor: the ids the console and the logs use. */
  id: string;
  kind: "shell" | "monitor";
  /** A shell job's session_id. */
  session_id?: number;
  /** A monitor's description, a shell job's command (one line). */
  label: string;
  verdict: Verdict;
  /** The shell tools' status (`exited`, `timed_out`, …) or the monitor's (`success`, `failure`, …). */
  status: string;
  exit_code: number | null;
  /** From the start to the end, or to now while it runs. */
  duration_ms: number;
  collected: Collected;
  /**
   * What went wrong wherever the job printed it, before its last lines: a few blocks of its error-like lines, each
   * line `N: text` with N its line in the log (host/evidence-text.ts).
   */
  evidence?: string;
  /** A shell job's last output lines (rendered and redacted as write_stdin's), a failed monitor's output lines. */
  output?: string;
  /** Lines of the read left out before `output` (the whole read is replayed by write_stdin, the log keeps all). */
  output_lines_omitted?: number;
  /** A monitor's named captures and parsed result. */
  captures?: Record<string, string>;
  result?: unknown;
  /** A monitor's reason, or a shell job's failure reason, when it did not succeed. */
  reason?: string;
  redactions?: number;
  /** The job's process tree as last sampled (host/runtime/usage-line.ts); absent before the first sample. */
  usage?: UsageFields;
  log_path: string | null;
}

export interface WaitJobsResult {
  operation: "wait_jobs";
  until: WaitUntil;
  wait_status: WaitEndReason;
  /** How long the call waited. */
  waited_ms: number;
  jobs: WaitJobLine[];
  /** Ids of the jobs still running: they keep their own wake settings. */
  running: string[];
  /** `8 jobs: 7 success, 1 failure (job_3 exit 1) · 41.2s` */
  summary: string;
}
