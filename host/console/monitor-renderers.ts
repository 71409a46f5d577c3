/**
 * The monitor's transcript renderers: `monitor_start` calls and results (through a tool renderer resolver, so the
 * tool's own module stays free of presentation) and the asynchronous `pi-jobs.monitor` result message. They draw
 * their own band (`renderShell: "self"`) because the background follows the monitor's outcome, not Pi's notion of a
 * tool error: a monitor that reports `failure` is a successful tool call with a failed result. The stored result and
 * start configuration are handed to the bands as their views (ui/monitor-view.ts) as they are; the compiler checks
 * here that they fit.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Band, EMPTY } from "../../ui/band.ts";
import { resultBandLines, resultTone, startBandLines, TONE_STYLE, watchdogBandLines } from "../../ui/bands.ts";
import type { StartView } from "../../ui/monitor-view.ts";
import { sanitizeInline } from "../../shared/sanitize.ts";
import { fit } from "../../ui/text.ts";
import type { UiTheme } from "../../ui/theme.ts";
import { MONITOR_START, validateMonitorStart, type MonitorTerminalResult } from "../monitor/schemas.ts";
import { MONITOR_MESSAGE_TYPE, MONITOR_WATCHDOG_TYPE } from "../delivery/wake-text.ts";
import type { MonitorDetails, WatchdogDetails } from "../delivery/results.ts";
import { errorText, EXPAND_KEYBINDING, highlightShell, rowBand, selfRendered } from "./transcript-rows.ts";

interface StartDetails {
  description?: string;
  monitorId?: string;
  result?: MonitorTerminalResult;
  startConfiguration?: StartView;
}

interface RowState {
  start?: StartView;
}

// Renderers only draw; a pattern that would not compile still has a start band worth showing.
const anyPattern = (): { ok: true } => ({ ok: true });

/** The start configuration from the call's arguments (the stored one replaces it once the result is known). */
function startFromArgs(args: unknown): StartView | null {
  const verdict = validateMonitorStart(args, anyPattern);
  return verdict.ok ? verdict.value : null;
}

export interface RendererDeps {
  /** Whether the monitor is in this process's live state or history, where /monitor shows complete values. */
  inConsole(monitorId: string): boolean;
}

export function registerMonitorRenderers(pi: ExtensionAPI, deps: RendererDeps): void {
  /** The result band's lines for a width. `inConsole` is checked on every render: after eviction from history or a
   * reload, the transcript shows complete values. */
  const resultBuilder = (terminal: MonitorTerminalResult, expanded: boolean, expandKey: string, theme: UiTheme) =>
    (width: number) => resultBandLines(terminal, { width, expanded, expandKey, theme, inConsole: deps.inConsole(terminal.monitorId) });

  const renderers = selfRendered<RowState>(
    // The call: the start band, from the arguments until the stored configuration is known.
    (args, theme, context) => {
      const start = context.state.start ?? startFromArgs(args);
      const expandKey = context.keyText(EXPAND_KEYBINDING);
      if (start === null) {
        const build = (width: number) => [fit(theme.fg("warning", theme.bold("[monitor] starting")), width)];
        return rowBand(context.lastComponent, theme, build, "toolPendingBg");
      }
      const build = (width: number) =>
        startBandLines(start, { width, expanded: context.expanded, expandKey, theme, highlight: highlightShell });
      return rowBand(context.lastComponent, theme, build, TONE_STYLE.pending.bg);
    },
    // The result: the monitor's outcome, or the tool's error.
    (result, options, theme, context) => {
      const details = (result.details ?? {}) as StartDetails;
      if (details.startConfiguration !== undefined && context.state.start !== details.startConfiguration) {
        // The stored configuration is what ran; redraw the start band from it (it also survives a session reload).
        context.state.start = details.startConfiguration;
        context.invalidate();
      }
      if (context.isError) {
        const text = errorText(result);
        const build = (width: number) => [
          fit(`${theme.fg("error", theme.bold("[monitor] error"))}${theme.fg("error", ` · ${sanitizeInline(text).text}`)}`, width),
        ];
        return rowBand(context.lastComponent, theme, build, "toolErrorBg");
      }
      const terminal = details.result;
      if (terminal === undefined || options.isPartial) return EMPTY;
      const build = resultBuilder(terminal, options.expanded, context.keyText(EXPAND_KEYBINDING), theme);
      return rowBand(context.lastComponent, theme, build, TONE_STYLE[resultTone(terminal)].bg, () => String(deps.inConsole(terminal.monitorId)));
    },
  );
  pi.registerToolRenderer((toolName, next) => (toolName === MONITOR_START ? renderers : next()));

  pi.registerMessageRenderer<MonitorDetails>(MONITOR_MESSAGE_TYPE, (message, options, theme) => {
    const terminal = message.details?.result;
    if (terminal === undefined) return undefined;
    const build = resultBuilder(terminal, options.expanded, options.keyText(EXPAND_KEYBINDING), theme);
    return new Band(build, TONE_STYLE[resultTone(terminal)].bg, theme, options.outputPad, () => String(deps.inConsole(terminal.monitorId)));
  });

  pi.registerMessageRenderer<WatchdogDetails>(MONITOR_WATCHDOG_TYPE, (message, options, theme) => {
    const details = message.details;
    if (details === undefined || typeof details.figures !== "string") return undefined;
    const build = (width: number) => watchdogBandLines(details, { width, expanded: options.expanded, expandKey: "", theme });
    return new Band(build, TONE_STYLE.pending.bg, theme, options.outputPad, () => String(deps.inConsole(details.monitorId)));
  });
}
