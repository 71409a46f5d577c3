/**
 * Draws the /monitor console for a width and height: a title row, the job list (status first, so a long description
 * cannot push it out of view), the selected job's details and a footer of keys that adapts to the width but always
 * keeps `? help`. Details put status, elapsed, exit code, reason and integrity warnings before name and payload, and
 * the possibly long command last; with complete values on, payload values follow the configuration so End reaches
 * their tail. Output stays hidden until Enter.
 */
import type { DetailField, JobsSnapshot, JobView, LiveFigures } from "./views.ts";
import { TONE_STYLE } from "./bands.ts";
import type { ConsoleState } from "./console-state.ts";
import { renderFields, type Highlighter } from "./fields.ts";
import { bytes, elapsed, percent, rate } from "../shared/format.ts";
import { safe } from "../shared/sanitize.ts";
import { titleCounts } from "./jobs-overlay.ts";
import { shownStatus } from "../shared/start-stage.ts";
import { fill, fit } from "./text.ts";
import type { UiTheme } from "./theme.ts";

export interface ConsoleViewOptions {
  width: number;
  height: number;
  theme: UiTheme;
  highlight?: Highlighter;
  /** A transient line for the footer (e.g. the answer to a stop). */
  notice?: string | null;
}

export interface ConsoleView {
  lines: string[];
  /** Detail (or help) lines visible: the page size for PageUp/PageDown. */
  page: number;
  /** The scroll position after clamping (the state may hold Infinity for "end"). */
  scroll: number;
}

const FOOTER_KEYS: readonly (readonly [string, string])[] = [
  ["↑↓", "select"],
  ["Enter", "output"],
  ["v", "values"],
  ["x", "stop"],
  ["a", "stop all"],
  ["PgUp/PgDn/Home/End", "scroll"],
  ["q", "close"],
];

export const HELP_LINES: readonly string[] = [
  "/monitor — live monitors and shell jobs of this session",
  "",
  "Up/Down        select a job (the selection stays when a job finishes)",
  "PageUp/PageDown scroll the details",
  "Home/End       top / end of the details",
  "Enter          show or hide the job's retained output",
  "v              value previews ↔ complete values",
  "x              stop the selected job",
  "a              stop all running jobs",
  "?              this help (scroll with the same keys)",
  "q/Escape       close",
  "",
  "Rows put the status first. Details show status, elapsed time, exit code,",
  "reason and integrity warnings before the name, payload and command.",
  "Live figures: output lines and bytes per second, retained and dropped",
  "lines, and the process group's CPU and memory (sampled at most every",
  "250 ms while the console is open).",
  "",
  "The console only reads: it never sends anything to the model.",
];

function footer(width: number, theme: UiTheme, notice: string | null | undefined): string {
  if (notice) return fit(theme.fg("warning", safe(notice)), width);
  const help = theme.fg("dim", "? help");
  let used = 6;
  const parts: string[] = [];
  for (const [key, what] of FOOTER_KEYS) {
    const text = `${key} ${what}`;
    if (used + text.length + 3 > width) continue;
    parts.push(theme.fg("dim", text));
    used += text.length + 3;
  }
  return fit([...parts, help].join(theme.fg("dim", " · ")), width);
}

function listRow(job: JobView, width: number, theme: UiTheme, selected: boolean): string {
  const style = TONE_STYLE[job.tone];
  const marker = selected ? "▸ " : "  ";
  const status = theme.fg(style.fg, shownStatus(job));
  const pressure = job.running ? job.live?.pressure ?? "none" : "none";
  const warning = pressure === "none" ? "" : ` ${theme.fg("warning", pressure === "runaway" ? "▲ runaway" : "▲ near limit")}`;
  const title = safe(job.kind === "shell" ? job.title.replace(/\s+/g, " ").trim() : job.title);
  const row = `${marker}${status}${warning} ${theme.fg("dim", "·")} ${theme.fg("muted", job.kind)} ${theme.fg("dim", "·")} ${title} ${theme.fg("dim", `· ${elapsed(job.elapsedMs)}`)}`;
  return selected ? theme.bg("selectedBg", fill(row, width)) : fit(row, width);
}

function liveFields(live: LiveFigures, running: boolean): DetailField[] {
  const fields: DetailField[] = [];
  if (running) {
    fields.push({ label: "Output rate", value: `${rate(live.linesPerSecond)} lines/s · ${bytes(live.bytesPerSecond)}/s`, layout: "inline" });
  }
  fields.push({
    label: "Retained",
    value: `${live.retainedLines} lines · dropped ${live.droppedLines} lines (${bytes(live.droppedBytes)}) · total ${live.totalLines} lines, ${bytes(live.totalBytes)}${live.paused ? " · paused" : ""}`,
    layout: "inline",
  });
  if (live.tree !== null) {
    const { tree } = live;
    fields.push({
      label: "Process tree",
      value: `${tree.processes} process${tree.processes === 1 ? "" : "es"} · CPU ${percent(tree.cpuPercent)} (${(tree.cpuMs / 1000).toFixed(1)} s) · memory ${bytes(tree.rssBytes)} (peak ${bytes(tree.peakRssBytes)})`,
      layout: "inline",
      ...(live.pressure !== "none" ? { tone: "warning" as const } : {}),
    });
  }
  if (live.limits !== null) {
    const { limits } = live;
    const set = [
      limits.memoryBytes === null ? null : `memory ${bytes(limits.memoryBytes)}`,
      limits.cpuMs === null ? null : `CPU ${limits.cpuMs / 1000} s`,
      limits.processes === null ? null : `${limits.processes} processes`,
    ].filter((part) => part !== null);
    fields.push({ label: "Limits", value: set.join(" · "), layout: "inline", ...(live.pressure === "near_limit" ? { tone: "warning" as const } : {}) });
  }
  if (live.pressure === "runaway" && running) {
    fields.push({ label: "Watchdog", value: "over its thresholds (not stopped: the watchdog only reports)", layout: "inline", tone: "warning" });
  }
  // The group's figures are the tree's above: its actor samples every process that carries the job's tag.
  if (running && live.pgid !== null) fields.push({ label: "Process group", value: String(live.pgid), layout: "inline" });
  return fields;
}

/** Every detail line of one job, before scrolling. */
export function detailLines(job: JobView, state: ConsoleState, options: { width: number; theme: UiTheme; highlight?: Highlighter }): string[] {
  const { theme, width } = options;
  const style = TONE_STYLE[job.tone];
  const fieldOptions = {
    width,
    theme,
    fullValues: state.fullValues,
    previewHint: "v full values",
    ...(options.highlight ? { highlight: options.highlight } : {}),
  };
  const lines = [fit(`${theme.fg("muted", "Status:")} ${theme.fg(style.fg, shownStatus(job))}`, width)];
  lines.push(fit(`${theme.fg("muted", "Elapsed:")} ${elapsed(job.elapsedMs)}`, width));
  const head = [...job.head, ...(job.live ? liveFields(job.live, job.running) : [])];
  const ordered = state.fullValues ? [...head, ...job.config, ...job.body] : [...head, ...job.body, ...job.config];
  lines.push(...renderFields(ordered, fieldOptions));
  const output = job.output;
  if (!state.showOutput || output === undefined) {
    const retained = job.live?.retainedLines;
    const count = retained === undefined ? "" : ` (${retained} retained lines)`;
    lines.push(fit(`${theme.fg("muted", "Output:")} ${theme.fg("dim", `hidden · Enter shows it${count}`)}`, width));
  } else {
    const dropped = output.droppedLines > 0 ? ` · ${output.droppedLines} earlier lines dropped (${bytes(output.droppedBytes)})` : "";
    lines.push(fit(theme.fg("muted", `Output: ${output.lines.length} retained lines${dropped}`), width));
    for (const line of output.lines) {
      const source = theme.fg(line.source === "stderr" ? "warning" : "dim", `[${line.source}]`);
      lines.push(fit(`${source} ${safe(line.text)}`, width));
    }
  }
  return lines;
}

export function renderConsole(snapshot: JobsSnapshot, state: ConsoleState, options: ConsoleViewOptions): ConsoleView {
  const { width, theme } = options;
  const height = Math.max(3, options.height);
  const title = fit(theme.fg("accent", theme.bold("Jobs")) + theme.fg("dim", titleCounts(snapshot.jobs)), width);
  const bottom = footer(width, theme, options.notice);
  const body = height - 2;

  if (state.help) {
    const help = HELP_LINES.flatMap((line) => (line === "" ? [""] : [fit(theme.fg("text", line), width)]));
    const max = Math.max(0, help.length - body);
    const scroll = Math.min(state.helpScroll, max);
    const shown = help.slice(scroll, scroll + body);
    while (shown.length < body) shown.push("");
    const helpTitle = fit(theme.fg("accent", theme.bold("Help")) + theme.fg("dim", " · ? or q back"), width);
    return { lines: [helpTitle, ...shown, bottom], page: body, scroll };
  }

  const jobs = snapshot.jobs;
  if (jobs.length === 0) {
    const empty = [fit(theme.fg("dim", "No monitors or shell jobs in this session."), width)];
    while (empty.length < body) empty.push("");
    return { lines: [title, ...empty, bottom], page: body, scroll: 0 };
  }

  const listRows = Math.min(jobs.length, Math.max(1, Math.floor(body / 3)));
  const detailRows = Math.max(0, body - listRows);
  const selected = Math.min(Math.max(0, state.selectedIndex), jobs.length - 1);
  const first = Math.min(Math.max(0, selected - listRows + 1), Math.max(0, jobs.length - listRows));
  const list = jobs.slice(first, first + listRows).map((job, i) => listRow(job, width, theme, first + i === selected));
  if (first + listRows < jobs.length && list.length > 0) {
    // The last visible row says how many more are below, so a long list never looks complete.
    const more = jobs.length - first - listRows;
    const last = list.length - 1;
    if (first + last !== selected) list[last] = fit(theme.fg("dim", `  … ${more + 1} more`), width);
  }

  const job = jobs[selected] as JobView;
  const details = detailLines(job, state, { width, theme, ...(options.highlight ? { highlight: options.highlight } : {}) });
  const max = Math.max(0, details.length - detailRows);
  const scroll = Math.min(state.scroll, max);
  const shown = details.slice(scroll, scroll + detailRows);
  while (shown.length < detailRows) shown.push("");
  return { lines: [title, ...list, ...shown, bottom], page: Math.max(1, detailRows), scroll };
}
