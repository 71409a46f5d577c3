/**
 * The shell tools' transcript renderers: one compact band per call of `exec_command`, `write_stdin`,
 * `list_sessions`, `set_on_exit` and `kill_session`, and one for the wake message. Like the monitor's they draw their
 * own band (`renderShell: "self"`) because the colour follows the job's outcome: a job that exited 1 is a
 * successful tool call with a failed result. The call row shows while the call runs; once the result is final the
 * result row replaces it. Every result row is drawn from the stored `details`, so a reloaded or restored session
 * draws the same rows: the details are handed to the rows as their views (ui/shell-view.ts) as they are, and the
 * compiler checks here that every result shape the tools store fits the view that draws it.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { Component } from "@earendil-works/pi-tui";
import { Band, EMPTY } from "../../ui/band.ts";
import { TONE_STYLE, type BandOptions } from "../../ui/bands.ts";
import {
  callRowLines,
  errorRowLines,
  killRowLines,
  killTone,
  listRowLines,
  processRowLines,
  setOnExitRowLines,
  setOnExitTone,
  shellTone,
  wakeRowLines,
  wakeTone,
} from "../../ui/shell-rows.ts";
import type { UiTheme } from "../../ui/theme.ts";
import type { Tone } from "../../ui/views.ts";
import { SHELL_TOOL_NAMES } from "../shell/install.ts";
import { WAKE_MESSAGE_TYPE, type WakeDetails } from "../delivery/wake-text.ts";
import type { KillResult, ListResult, ProcessResult, SetOnExitResult } from "../shell/result.ts";
import { errorText, EXPAND_KEYBINDING, highlightShell, rowBand, selfRendered } from "./transcript-rows.ts";

type ShellDetails = ProcessResult | ListResult | SetOnExitResult | KillResult;

function band(last: Component | undefined, theme: UiTheme, build: (width: number) => string[], tone: Tone): Band {
  return rowBand(last, theme, build, TONE_STYLE[tone].bg);
}

/** A stored result's row: its tone and its lines per width; null when the details are not a shell result. */
function resultRow(details: unknown): { tone: Tone; lines: (options: BandOptions) => string[] } | null {
  if (typeof details !== "object" || details === null) return null;
  const r = details as ShellDetails;
  switch (r.operation) {
    case "exec_command":
    case "write_stdin":
      return { tone: shellTone(r), lines: (o) => processRowLines(r, o) };
    case "list_sessions":
      return { tone: r.active_count > 0 ? "pending" : "success", lines: (o) => listRowLines(r, o) };
    case "set_on_exit":
      return { tone: setOnExitTone(r), lines: (o) => setOnExitRowLines(r, o) };
    case "kill_session":
      return { tone: killTone(r), lines: (o) => killRowLines(r, o) };
    default:
      return null;
  }
}

export function registerShellRenderers(pi: ExtensionAPI): void {
  const names: readonly string[] = SHELL_TOOL_NAMES;

  pi.registerToolRenderer((toolName, next) => {
    if (!names.includes(toolName)) return next();
    return selfRendered(
      (args, theme, context) => {
        // A final result (also a restored one) has its own row; the call row only stands in while the call runs.
        if (!context.isPartial) return EMPTY;
        const raw = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
        const expandKey = context.keyText(EXPAND_KEYBINDING);
        const build = (width: number) => callRowLines(toolName, raw, { width, expanded: context.expanded, expandKey, theme, highlight: highlightShell });
        return band(context.lastComponent, theme, build, "pending");
      },
      (result, options, theme, context) => {
        if (options.isPartial) return EMPTY;
        const expandKey = context.keyText(EXPAND_KEYBINDING);
        if (context.isError) {
          const text = errorText(result);
          return band(context.lastComponent, theme, (width) => errorRowLines(text, { width, expanded: false, expandKey, theme }), "error");
        }
        const row = resultRow(result.details);
        if (row === null) return EMPTY;
        const build = (width: number) => row.lines({ width, expanded: options.expanded, expandKey, theme, highlight: highlightShell });
        return band(context.lastComponent, theme, build, row.tone);
      },
    );
  });

  pi.registerMessageRenderer<WakeDetails>(WAKE_MESSAGE_TYPE, (message, options, theme) => {
    const details = message.details;
    if (details === undefined || !Array.isArray(details.sessions)) return undefined;
    const expandKey = options.keyText(EXPAND_KEYBINDING);
    const build = (width: number) => wakeRowLines(details, { width, expanded: options.expanded, expandKey, theme, highlight: highlightShell });
    return new Band(build, TONE_STYLE[wakeTone(details)].bg, theme, options.outputPad);
  });
}
