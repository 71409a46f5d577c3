/**
 * /shell-jobs-sessions: pick a shell job, see its state and the tail of its output, stop it. Like the console, it
 * holds only view state; the jobs and the stop come from the host.
 */
import type { JobsSnapshot, JobView } from "./views.ts";
import { TONE_STYLE } from "./bands.ts";
import { renderFields } from "./fields.ts";
import { elapsed } from "../shared/format.ts";
import { JobsOverlay, titleCounts, type OverlayOptions } from "./jobs-overlay.ts";
import { consoleKey } from "./keys.ts";
import { safe } from "../shared/sanitize.ts";
import { shownStatus } from "../shared/start-stage.ts";
import { fill, fit } from "./text.ts";
import type { UiTheme } from "./theme.ts";

export interface PickerState {
  selectedKey: string | null;
  selectedIndex: number;
  /** Waiting for y/n to stop the selection. */
  confirming: boolean;
}

function shellJobs(snapshot: JobsSnapshot): JobView[] {
  return snapshot.jobs.filter((job) => job.kind === "shell");
}

export function renderPicker(snapshot: JobsSnapshot, state: PickerState, options: { width: number; height: number; theme: UiTheme; notice?: string | null }): string[] {
  const { width, theme } = options;
  const height = Math.max(3, options.height);
  const jobs = shellJobs(snapshot);
  const title = fit(theme.fg("accent", theme.bold("Shell jobs")) + theme.fg("dim", titleCounts(jobs)), width);
  const footerText = state.confirming
    ? theme.fg("warning", `Stop ${state.selectedKey?.replace("shell:", "session ") ?? ""}? y to stop · any other key keeps it`)
    : options.notice
      ? theme.fg("warning", safe(options.notice))
      : theme.fg("dim", "↑↓ select · x stop · q close");
  const footer = fit(footerText, width);
  const body = height - 2;
  if (jobs.length === 0) {
    const lines = [fit(theme.fg("dim", "No shell jobs in this session."), width)];
    while (lines.length < body) lines.push("");
    return [title, ...lines, footer];
  }
  const listRows = Math.min(jobs.length, Math.max(1, Math.floor(body / 3)));
  const selected = Math.min(Math.max(0, state.selectedIndex), jobs.length - 1);
  const first = Math.min(Math.max(0, selected - listRows + 1), Math.max(0, jobs.length - listRows));
  const list = jobs.slice(first, first + listRows).map((job, i) => {
    const mark = first + i === selected;
    const row = `${mark ? "▸ " : "  "}${theme.fg(TONE_STYLE[job.tone].fg, shownStatus(job))} ${theme.fg("dim", "·")} ${job.id} ${theme.fg("dim", "·")} ${safe(job.title.replace(/\s+/g, " ").trim())} ${theme.fg("dim", `· ${elapsed(job.elapsedMs)}`)}`;
    return mark ? theme.bg("selectedBg", fill(row, width)) : fit(row, width);
  });
  const job = jobs[selected] as JobView;
  const detailRows = Math.max(0, body - listRows);
  const state_ = [
    fit(`${theme.fg("muted", "Status:")} ${theme.fg(TONE_STYLE[job.tone].fg, shownStatus(job))} ${theme.fg("dim", `· ${elapsed(job.elapsedMs)}`)}`, width),
    ...renderFields([...job.head, ...job.body.filter((field) => field.label !== "Session")], { width, theme, fullValues: false }),
  ];
  // The tail gets what the state leaves, at least a third of the rows when output exists.
  const output = job.output?.lines ?? [];
  const tailRows = output.length === 0 ? 0 : Math.max(Math.ceil(detailRows / 3), detailRows - state_.length - 1);
  const stateRows = Math.max(0, detailRows - tailRows - (tailRows > 0 ? 1 : 0));
  const details = state_.slice(0, stateRows);
  if (tailRows > 0) {
    details.push(fit(theme.fg("muted", "Tail:"), width));
    for (const line of output.slice(-tailRows)) details.push(fit(`${theme.fg("dim", `[${line.source}]`)} ${safe(line.text)}`, width));
  }
  const shown = details.slice(0, detailRows);
  while (shown.length < detailRows) shown.push("");
  return [title, ...list, ...shown, footer];
}

export class SessionsPicker extends JobsOverlay {
  private snapshot: JobsSnapshot;
  private state: PickerState;

  constructor(options: OverlayOptions) {
    super(options);
    this.snapshot = this.source.snapshot({ outputFor: null });
    const first = shellJobs(this.snapshot)[0];
    this.state = { selectedKey: first?.key ?? null, selectedIndex: 0, confirming: false };
    this.refresh();
  }

  hasRunning(): boolean {
    return shellJobs(this.snapshot).some((job) => job.running);
  }

  refresh(): void {
    if (this.closed) return;
    this.snapshot = this.source.snapshot({ outputFor: this.state.selectedKey });
    const jobs = shellJobs(this.snapshot);
    const index = jobs.findIndex((job) => job.key === this.state.selectedKey);
    if (index >= 0) {
      this.state = { ...this.state, selectedIndex: index };
      return;
    }
    const fallback = Math.min(this.state.selectedIndex, Math.max(0, jobs.length - 1));
    const key = jobs[fallback]?.key ?? null;
    this.state = { ...this.state, selectedKey: key, selectedIndex: fallback, confirming: false };
    if (key !== null) this.snapshot = this.source.snapshot({ outputFor: key });
  }

  render(width: number): string[] {
    return renderPicker(this.snapshot, this.state, { width, height: this.host.rows(), theme: this.theme, notice: this.notice });
  }

  handleInput(data: string): void {
    if (this.state.confirming) {
      const target = this.state.selectedKey;
      this.state = { ...this.state, confirming: false };
      if ((data === "y" || data === "Y") && target !== null) {
        this.stop(`stopping ${target.replace("shell:", "session ")}…`, () => this.source.stop(target));
      } else {
        this.notice = null;
      }
      this.host.requestRender();
      return;
    }
    const key = consoleKey(data, this.keys);
    const jobs = shellJobs(this.snapshot);
    this.notice = null;
    if (key === "close") return this.close();
    if (key === "up" || key === "down") {
      const next = Math.min(Math.max(0, this.state.selectedIndex + (key === "up" ? -1 : 1)), Math.max(0, jobs.length - 1));
      this.state = { ...this.state, selectedIndex: next, selectedKey: jobs[next]?.key ?? null };
    } else if (key === "stop") {
      const job = jobs[this.state.selectedIndex];
      if (job?.running) this.state = { ...this.state, confirming: true };
      else this.notice = "that job is not running";
    } else {
      return;
    }
    this.refresh();
    this.host.requestRender();
  }
}
