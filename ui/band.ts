/**
 * A transcript band: lines drawn on one background role across the full width, with the configured horizontal
 * padding. The content is built per width and cached until the width or the content changes.
 */
import type { Component } from "@earendil-works/pi-tui";
import { fill } from "./text.ts";
import type { BgRole, UiTheme } from "./theme.ts";

export class Band implements Component {
  private build: (innerWidth: number) => string[];
  private bg: BgRole;
  private readonly theme: UiTheme;
  private readonly padX: number;
  private readonly stamp: () => string;
  private cache: { width: number; stamp: string; lines: string[] } | null = null;

  /** `stamp` names outside state the content depends on; a new stamp rebuilds the lines on the next render. */
  constructor(build: (innerWidth: number) => string[], bg: BgRole, theme: UiTheme, padX = 1, stamp: () => string = () => "") {
    this.build = build;
    this.bg = bg;
    this.theme = theme;
    this.padX = padX;
    this.stamp = stamp;
  }

  /** Replaces the content (the component is reused across renders of the same row). */
  update(build: (innerWidth: number) => string[], bg: BgRole): void {
    this.build = build;
    this.bg = bg;
    this.cache = null;
  }

  render(width: number): string[] {
    const stamp = this.stamp();
    if (this.cache?.width === width && this.cache.stamp === stamp) return this.cache.lines;
    const pad = Math.max(0, Math.min(this.padX, Math.floor((width - 1) / 2)));
    const inner = Math.max(1, width - 2 * pad);
    const padding = " ".repeat(pad);
    const lines = this.build(inner).map((line) => this.theme.bg(this.bg, padding + fill(line, inner) + padding));
    this.cache = { width, stamp, lines };
    return lines;
  }

  invalidate(): void {
    this.cache = null;
  }
}

/** A component that draws nothing (a slot with no visible content). */
export const EMPTY: Component = { render: () => [], invalidate: () => {} };
