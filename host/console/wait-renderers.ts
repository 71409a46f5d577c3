/**
 * wait_jobs' transcript renderer: while the call waits, one pending band saying what it waits for; once its result
 * is final, one band per job (coloured by the job's verdict, as a shell row is) and the summary's band. Drawn from
 * the stored `details`, so a restored session draws the same row; the compiler checks here that the result the tool
 * stores fits the view (ui/wait-view.ts).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { Component } from "@earendil-works/pi-tui";
import { Band, EMPTY } from "../../ui/band.ts";
import { TONE_STYLE, type BandOptions } from "../../ui/bands.ts";
import { errorRowLines } from "../../ui/shell-rows.ts";
import type { UiTheme } from "../../ui/theme.ts";
import { waitCallLines, waitJobLines, waitJobTone, waitSummaryLines, waitSummaryTone } from "../../ui/wait-rows.ts";
import type { WaitRowView } from "../../ui/wait-view.ts";
import type { WaitJobsResult } from "../wait/result.ts";
import { WAIT_JOBS } from "../wait/validate.ts";
import { errorText, EXPAND_KEYBINDING, rowBand, selfRendered } from "./transcript-rows.ts";

// The stored result must fit the view that draws it.
const fits = (r: WaitJobsResult): WaitRowView => r;

/** Bands stacked into one row. */
function stack(bands: readonly Component[]): Component {
  return {
    render: (width) => bands.flatMap((band) => band.render(width)),
    invalidate: () => bands.forEach((band) => band.invalidate()),
  };
}

function isWaitResult(details: unknown): details is WaitJobsResult {
  return typeof details === "object" && details !== null && (details as { operation?: unknown }).operation === WAIT_JOBS && Array.isArray((details as { jobs?: unknown }).jobs);
}

export function registerWaitRenderers(pi: ExtensionAPI): void {
  pi.registerToolRenderer((toolName, next) => {
    if (toolName !== WAIT_JOBS) return next();
    return selfRendered(
      (args, theme, context) => {
        if (!context.isPartial) return EMPTY;
        const raw = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
        const expandKey = context.keyText(EXPAND_KEYBINDING);
        const build = (width: number) => waitCallLines(raw, { width, expanded: context.expanded, expandKey, theme });
        return rowBand(context.lastComponent, theme, build, TONE_STYLE.pending.bg);
      },
      (result, options, theme, context) => {
        if (options.isPartial) return EMPTY;
        const expandKey = context.keyText(EXPAND_KEYBINDING);
        const opts = (width: number): BandOptions => ({ width, expanded: options.expanded, expandKey, theme: theme as UiTheme });
        if (context.isError) {
          const text = errorText(result);
          return rowBand(context.lastComponent, theme, (width) => errorRowLines(text, { ...opts(width), expanded: false }), TONE_STYLE.error.bg);
        }
        if (!isWaitResult(result.details)) return EMPTY;
        const view = fits(result.details);
        const bands = view.jobs.map((job) => new Band((width) => waitJobLines(job, opts(width)), TONE_STYLE[waitJobTone(job)].bg, theme));
        bands.push(new Band((width) => waitSummaryLines(view, opts(width)), TONE_STYLE[waitSummaryTone(view)].bg, theme));
        return stack(bands);
      },
    );
  });
}
