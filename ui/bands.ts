/**
 * The monitor's transcript bands: the start band of a `monitor_start` call and the result band of a terminal result
 * (direct tool result or asynchronous custom message). Pure: facts in, styled lines out.
 *
 *   [monitor] started · run tests · ctrl+o to expand          pending role on toolPendingBg
 *   [monitor] failure · run tests                             error role on toolErrorBg
 *
 * Below 32 columns the heading is the compact `[outcome]`; below 60 the expand hint is left out so the state keeps
 * its room (expansion itself still works).
 */
import type { Tone } from "./views.ts";
import { renderFields, type Highlighter } from "./fields.ts";
import { elapsed } from "../shared/format.ts";
import { monitorHeadFields, monitorPayloadFields, monitorTone, startFields } from "./monitor-fields.ts";
import type { MonitorResultView, StartView } from "./monitor-view.ts";
import { safe } from "../shared/sanitize.ts";
import { fit } from "./text.ts";
import type { BgRole, FgRole, UiTheme } from "./theme.ts";

export const COMPACT_BELOW = 32;
export const HINT_BELOW = 60;

export interface BandOptions {
  width: number;
  expanded: boolean;
  /** The configured expand key, e.g. "ctrl+o"; empty when none is bound. */
  expandKey: string;
  theme: UiTheme;
  highlight?: Highlighter;
}

export const TONE_STYLE: Record<Tone, { fg: FgRole; bg: BgRole }> = {
  pending: { fg: "warning", bg: "toolPendingBg" },
  success: { fg: "success", bg: "toolSuccessBg" },
  error: { fg: "error", bg: "toolErrorBg" },
  stopped: { fg: "dim", bg: "toolPendingBg" },
};

/**
 * A band's first line: `[tag] outcome · fact · fact · <key> to expand`. Below COMPACT_BELOW columns only `[outcome]`;
 * below HINT_BELOW the expand hint is left out so the state keeps its room.
 */
export function bandHeading(tag: string, outcome: string, facts: readonly string[], options: BandOptions, fg: FgRole): string {
  const { width, theme } = options;
  if (width < COMPACT_BELOW) return fit(theme.fg(fg, theme.bold(`[${outcome}]`)), width);
  const hint = !options.expanded && width >= HINT_BELOW && options.expandKey !== "" ? ` · ${options.expandKey} to expand` : "";
  const head = theme.fg(fg, theme.bold(`[${tag}] ${outcome}`));
  const rest = facts.map((fact) => ` · ${safe(fact)}`).join("");
  return fit(`${head}${theme.fg(fg, rest)}${theme.fg("dim", hint)}`, width);
}

function heading(outcome: string, description: string, options: BandOptions, fg: FgRole): string {
  return bandHeading("monitor", outcome, [description], options, fg);
}

export function startBandLines(start: StartView, options: BandOptions): string[] {
  const lines = [heading("started", start.description, options, TONE_STYLE.pending.fg)];
  if (!options.expanded) return lines;
  lines.push(
    ...renderFields(startFields(start), {
      width: options.width,
      theme: options.theme,
      fullValues: true,
      ...(options.highlight ? { highlight: options.highlight } : {}),
    }),
  );
  return lines;
}

export interface ResultBandOptions extends BandOptions {
  /**
   * Whether complete values are still reachable in /monitor (the run is in this process's history). When they are,
   * long values show as previews pointing there; after a session reload or eviction from history the transcript is
   * the only place left, so expansion shows complete values.
   */
  inConsole: boolean;
}

export function resultTone(result: Pick<MonitorResultView, "status">): Tone {
  return monitorTone(result.status);
}

export function resultBandLines(result: MonitorResultView, options: ResultBandOptions): string[] {
  const tone = resultTone(result);
  const lines = [heading(result.status, result.description, options, TONE_STYLE[tone].fg)];
  if (!options.expanded) return lines;
  const fields = [
    { label: "Status", value: result.status, layout: "inline" as const },
    { label: "Elapsed", value: elapsed(result.elapsedMs), layout: "inline" as const },
    ...monitorHeadFields(result),
    ...monitorPayloadFields(result),
  ];
  lines.push(
    ...renderFields(fields, {
      width: options.width,
      theme: options.theme,
      fullValues: !options.inConsole,
      previewHint: "/monitor: v full values",
    }),
  );
  return lines;
}

/** The watchdog's wake about a running monitor: `[monitor] runaway · build · monitor_3`, its figures below. */
export function watchdogBandLines(view: { description: string; monitorId: string; figures: string }, options: BandOptions): string[] {
  const lines = [bandHeading("monitor", "runaway", [view.description, view.monitorId], { ...options, expandKey: "" }, TONE_STYLE.pending.fg)];
  if (options.width >= COMPACT_BELOW) lines.push(fit(options.theme.fg("dim", safe(`uses ${view.figures}; not stopped`)), options.width));
  return lines;
}
