/**
 * What the monitor's and the shell tools' transcript renderers (host/console/monitor-renderers.ts, shell-renderers.ts) share: the key that
 * expands a row, shell highlighting, the part of Pi's render context and of a tool result they read, the band a row
 * is drawn in, and renderers that draw that band themselves.
 */
import { highlightCode, type ToolRenderers } from "@earendil-works/pi-coding-agent";
import type { Component } from "@earendil-works/pi-tui";
import { Band } from "../../ui/band.ts";
import type { UiTheme } from "../../ui/theme.ts";

export const EXPAND_KEYBINDING = "app.tools.expand";

/** Shell highlighting with Pi's highlighter under the active theme. */
export function highlightShell(code: string): string[] {
  return highlightCode(code, "bash");
}

/** The part of Pi's tool render context the renderers read (Pi does not export the type by name). */
export interface RenderContext<State = Record<string, unknown>> {
  /** Kept by Pi for the row across its renders. */
  state: State;
  expanded: boolean;
  isError: boolean;
  isPartial: boolean;
  lastComponent: Component | undefined;
  invalidate(): void;
  keyText(keybinding: string): string;
}

/** The part of a tool's result the renderers read. */
export interface RenderedResult {
  content: { type: string; text?: string }[];
  details?: unknown;
}

export interface ResultOptions {
  expanded: boolean;
  isPartial: boolean;
}

/** What an error result says, on one line. */
export function errorText(result: RenderedResult): string {
  return result.content.map((block) => block.text ?? "").join(" ");
}

/**
 * The band to draw a row in: the row's last one, given new content, or a new one. A band with a `stamp` (outside
 * state its lines depend on, see ui/band.ts) is always new.
 */
export function rowBand(
  last: Component | undefined,
  theme: UiTheme,
  build: (width: number) => string[],
  bg: Parameters<Band["update"]>[1],
  stamp?: () => string,
): Band {
  if (last instanceof Band && stamp === undefined) {
    last.update(build, bg);
    return last;
  }
  return new Band(build, bg, theme, 1, stamp);
}

/**
 * A tool's renderers that draw their own band (`renderShell: "self"`): the background follows the job's outcome, not
 * Pi's notion of a tool error. They are typed with the parts of Pi's arguments they read.
 */
export function selfRendered<State>(
  renderCall: (args: unknown, theme: UiTheme, context: RenderContext<State>) => Component,
  renderResult: (result: RenderedResult, options: ResultOptions, theme: UiTheme, context: RenderContext<State>) => Component,
): ToolRenderers {
  return { renderShell: "self", renderCall: renderCall as never, renderResult: renderResult as never };
}
