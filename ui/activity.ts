/**
 * The activity rows above the editor while jobs run: one row per running monitor (`monitor · <description>`) and
 * shell job (`shell · <command>`), at most max(1, min(3, floor(terminal rows / 6))) rows; more jobs than that fold
 * into a count with a /monitor hint. Pure: the spinner frame comes from the clock, so rows keep Pi's native cadence
 * (the same frames, 80 ms apart) whenever Pi redraws, without a timer of their own.
 */
import type { JobKind } from "./views.ts";
import { elapsed } from "../shared/format.ts";
import { safe } from "../shared/sanitize.ts";
import { fit } from "./text.ts";
import type { UiTheme } from "./theme.ts";

/** Pi's own loader frames and interval (pi-tui Loader). */
export const SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] as const;
export const SPINNER_INTERVAL_MS = 80;

export interface ActivityJob {
  kind: JobKind;
  title: string;
  elapsedMs: number;
}

export function spinnerFrame(nowMs: number): string {
  const index = Math.floor(nowMs / SPINNER_INTERVAL_MS) % SPINNER_FRAMES.length;
  return SPINNER_FRAMES[index] ?? SPINNER_FRAMES[0];
}

export function activityBudget(terminalRows: number): number {
  return Math.max(1, Math.min(3, Math.floor(terminalRows / 6)));
}

export interface ActivityOptions {
  width: number;
  terminalRows: number;
  nowMs: number;
  theme: UiTheme;
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? text;
  return line.trim();
}

export function renderActivity(jobs: readonly ActivityJob[], options: ActivityOptions): string[] {
  if (jobs.length === 0) return [];
  const { width, theme } = options;
  const budget = activityBudget(options.terminalRows);
  const spinner = theme.fg("accent", spinnerFrame(options.nowMs));
  const shown = jobs.length <= budget ? jobs : jobs.slice(0, budget - 1);
  const rows = shown.map((job) => {
    const title = safe(job.kind === "shell" ? firstLine(job.title) : job.title);
    const time = theme.fg("dim", ` · ${elapsed(job.elapsedMs)}`);
    return fit(`${spinner} ${theme.fg("muted", job.kind)} ${theme.fg("dim", "·")} ${title}${time}`, width);
  });
  if (shown.length < jobs.length) {
    const rest = jobs.length - shown.length;
    const what = shown.length === 0 ? `${rest} jobs running` : `+${rest} more running`;
    rows.push(fit(`${spinner} ${theme.fg("muted", what)} ${theme.fg("dim", "· /monitor")}`, width));
  }
  return rows;
}
