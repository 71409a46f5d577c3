/**
 * What the wait_jobs transcript row (ui/wait-rows.ts) draws: the tool's stored result as far as the row reads it. The
 * host hands the stored `details` over as they are (host/console/wait-renderers.ts, where the compiler checks that
 * the result fits), so a restored session draws what it drew.
 */

export interface WaitJobView {
  id: string;
  label: string;
  /** `success`, `failure`, `stopped`, `running`, `unknown`. */
  verdict: string;
  status: string;
  exit_code: number | null;
  duration_ms: number;
  collected: string;
  output?: string;
  output_lines_omitted?: number;
  captures?: Record<string, string>;
  reason?: string;
  log_path: string | null;
}

export interface WaitRowView {
  until: string;
  wait_status: string;
  jobs: readonly WaitJobView[];
  summary: string;
}
