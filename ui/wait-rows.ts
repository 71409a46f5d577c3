/**
 * The wait_jobs transcript row: one compact band per job, in the shell rows' vocabulary, then the summary. Pure:
 * the stored result in, styled lines out.
 *
 *   [wait] job_1 exited 0 · npm test · 12.4s                       success
 *   [wait] job_3 exited 1 · npm run lint · 3.1s · ctrl+o to expand error, with its last output lines
 *     src/a.ts:3 'x' is unused
 *   [wait] monitor_2 success · build · 41.2s                       success
 *   [wait] 3 jobs: 2 success, 1 failure (job_3 exit 1) · 41.2s     error
 *
 * Collapsed, a job's band is its heading, and a failed job's last output lines (at most five); expanded, it adds
 * every output line the result kept, its captures, its reason and its log path.
 */
import { bandHeading, TONE_STYLE, type BandOptions } from "./bands.ts";
import { renderFields } from "./fields.ts";
import { elapsed } from "../shared/format.ts";
import { safe, sanitizeBlock } from "../shared/sanitize.ts";
import { COLLAPSED_OUTPUT_LINES } from "./shell-rows.ts";
import { fit } from "./text.ts";
import type { DetailField, Tone } from "./views.ts";
import type { WaitJobView, WaitRowView } from "./wait-view.ts";

export const WAIT_TAG = "wait";

export function waitJobTone(job: Pick<WaitJobView, "verdict">): Tone {
  switch (job.verdict) {
    case "success":
      return "success";
    case "failure":
      return "error";
    case "running":
      return "pending";
    default:
      return "stopped";
  }
}

/** The summary band's tone: a failure colours it, then a job still running, then success. */
export function waitSummaryTone(r: Pick<WaitRowView, "jobs">): Tone {
  if (r.jobs.some((j) => j.verdict === "failure")) return "error";
  if (r.jobs.some((j) => j.verdict === "running")) return "pending";
  return "success";
}

function outcome(job: WaitJobView): string {
  if (job.verdict === "running") return `${job.id} running`;
  if (job.status === "exited") return `${job.id} exited ${job.exit_code ?? "on a signal"}`;
  return `${job.id} ${job.status}`;
}

const COLLECTED_WORDS: Record<string, string> = { earlier: "collected earlier", wake: "reported by its wake", own_call: "reported by its call", none: "stopped" };

export function waitJobLines(job: WaitJobView, options: BandOptions): string[] {
  const tone = waitJobTone(job);
  const facts = [safe(job.label), job.duration_ms > 0 ? elapsed(job.duration_ms) : "", COLLECTED_WORDS[job.collected] ?? ""].filter((f) => f !== "");
  const lines = [bandHeading(WAIT_TAG, outcome(job), facts, options, TONE_STYLE[tone].fg)];
  const output = sanitizeBlock(job.output ?? "").lines.filter((line, i, all) => i < all.length - 1 || line.trim() !== "");
  if (!options.expanded) {
    if (job.verdict !== "failure") return lines;
    const indent = options.width >= 24 ? "  " : "";
    return [...lines, ...output.slice(-COLLAPSED_OUTPUT_LINES).map((line) => fit(indent + options.theme.fg("toolOutput", line), options.width))];
  }
  const list: DetailField[] = [];
  if (job.reason !== undefined) list.push({ label: "Reason", value: job.reason, layout: "inline" });
  if (job.captures !== undefined) list.push({ label: "Captures", value: JSON.stringify(job.captures), layout: "inline" });
  list.push({ label: "Log path", value: job.log_path ?? "none", layout: "inline" });
  if (output.length > 0) {
    const omitted = job.output_lines_omitted ? ` (${job.output_lines_omitted} earlier lines in the log)` : "";
    list.push({ label: `Last lines${omitted}`, value: output.join("\n"), layout: "block" });
  }
  return [...lines, ...renderFields(list, { width: options.width, theme: options.theme, fullValues: true })];
}

export function waitSummaryLines(r: WaitRowView, options: BandOptions): string[] {
  const facts = [`until ${r.until}`, r.wait_status.replace(/_/g, " ")];
  return [bandHeading(WAIT_TAG, r.summary, facts, { ...options, expanded: true }, TONE_STYLE[waitSummaryTone(r)].fg)];
}

/** The call's row while it waits: what it waits for. */
export function waitCallLines(args: Record<string, unknown>, options: BandOptions): string[] {
  const ids = Array.isArray(args.ids) ? args.ids.map(String) : null;
  const what = ids === null ? "every uncollected job" : ids.join(", ");
  const until = typeof args.until === "string" ? args.until : "all";
  return [bandHeading(WAIT_TAG, "waiting", [what, `until ${until}`], options, TONE_STYLE.pending.fg)];
}
