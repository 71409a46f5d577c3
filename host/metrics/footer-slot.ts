/**
 * Metrics' use of Pi's one footer slot: claiming it, giving it back only while it is still ours, the
 * collapsed/expanded layout (in memory only), the clickable button and the statuses of other extensions.
 * Another extension replacing the footer disposes ours; from then on we neither draw nor restore anything
 * until the user explicitly turns the footer on again.
 */
import type { ExtensionContext, ReadonlyFooterDataProvider, Theme } from "@earendil-works/pi-coding-agent";
import type { TUI, TuiMouseEvent, TuiMouseEventResult } from "@earendil-works/pi-tui";
import { isKnownIdle, sanitizeStatus } from "./statuses.ts";
import { renderFooter, type FooterStyle } from "./footer.ts";
import type { FooterModel, StatusItem } from "./views.ts";

/** Our own status key; drawn as a warning by the footer, so it is not repeated as a status. */
export const STATUS_KEY = "pi-metrics";

/** The footer's styles in Pi's theme. */
export function footerStyle(theme: Theme): FooterStyle {
  return {
    accent: (s) => theme.fg("accent", s),
    bold: (s) => theme.bold(s),
    dim: (s) => theme.fg("dim", s),
    muted: (s) => theme.fg("muted", s),
    warning: (s) => theme.fg("warning", s),
    error: (s) => theme.fg("error", s),
  };
}

export class FooterSlot {
  /** The user wants the Metrics footer (flag, then /metrics footer on|off). */
  enabled = true;
  /** Metrics currently occupies the slot. */
  owned = false;
  collapsed = false;
  private tui: TUI | null = null;
  private data: ReadonlyFooterDataProvider | null = null;
  private button: { start: number; end: number } | null = null;
  private readonly model: () => FooterModel;

  constructor(model: () => FooterModel) {
    this.model = model;
  }

  requestRender(): void {
    this.tui?.requestRender();
  }

  toggle(): void {
    this.collapsed = !this.collapsed;
    this.requestRender();
  }

  gitBranch(): string | null {
    return this.data?.getGitBranch() ?? null;
  }

  /** Every extension status (sanitized), and the ones the footer shows: known idle pairs are hidden. */
  statuses(): { shown: StatusItem[]; all: StatusItem[] } {
    const all: StatusItem[] = [];
    const map = this.data?.getExtensionStatuses();
    if (map) for (const [key, text] of map) all.push({ key, text: sanitizeStatus(text) });
    const shown = all.filter((s) => s.key !== STATUS_KEY && !isKnownIdle(s.key, s.text));
    return { shown, all };
  }

  claim(ctx: ExtensionContext): void {
    if (ctx.mode !== "tui") return;
    ctx.ui.setFooter((tui, theme, data) => {
      this.tui = tui;
      this.data = data;
      this.owned = true;
      const style = footerStyle(theme);
      const unsubBranch = data.onBranchChange(() => tui.requestRender());
      let disposed = false;
      return {
        invalidate() {},
        render: (width: number): string[] => {
          const layout = renderFooter(this.model(), width, style);
          this.button = layout.button;
          return layout.lines;
        },
        handleMouse: (event: TuiMouseEvent): TuiMouseEventResult | undefined => {
          const b = this.button;
          if (event.button !== "left" || event.y !== 0 || b === null || event.x < b.start || event.x >= b.end) return undefined;
          // The whole click is ours, so it never starts a transcript selection; keyboard focus stays in the editor.
          if (event.type === "click") this.toggle();
          return event.type === "press" || event.type === "click" || event.type === "release" ? { handled: true } : undefined;
        },
        dispose: () => {
          if (disposed) return;
          disposed = true;
          unsubBranch();
          this.owned = false;
          this.tui = null;
          this.data = null;
          this.button = null;
        },
      };
    });
  }

  /** Restores Pi's own footer only if the slot is still ours; another extension's replacement is left alone. */
  release(ctx: ExtensionContext): void {
    if (ctx.mode === "tui" && this.owned) ctx.ui.setFooter(undefined);
  }
}
