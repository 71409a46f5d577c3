/**
 * The /monitor console as a pi-tui component. It owns only view state (selection, scroll, toggles); every job fact
 * comes from the snapshot source the host gives it, and stopping goes through the host's API. The host refreshes it
 * on its 250 ms timer while jobs run; a key press refreshes it at once.
 */
import type { Component } from "@earendil-works/pi-tui";
import type { JobsSnapshot } from "../host/ui/snapshot-types.ts";
import { initialState, reconcile, reduce, type ConsoleState } from "./console-state.ts";
import { renderConsole } from "./console-view.ts";
import type { Highlighter } from "./fields.ts";
import { consoleKey, type KeyMatcher } from "./keys.ts";
import type { UiTheme } from "./theme.ts";

export interface ConsoleSource {
  /** A fresh snapshot; retained output only for `outputFor` (the selection, when output is shown). */
  snapshot(request: { outputFor: string | null; resourcesFor: string | null }): JobsSnapshot;
  /** Stops one job; resolves with a short human answer. */
  stop(key: string): Promise<string>;
  stopAll(): Promise<string>;
}

export interface ConsoleHost {
  requestRender(): void;
  /** Rows the console may use (the terminal's height). */
  rows(): number;
}

export class MonitorConsole implements Component {
  private readonly source: ConsoleSource;
  private readonly host: ConsoleHost;
  private readonly theme: UiTheme;
  private readonly keys: KeyMatcher;
  private readonly onClose: () => void;
  private readonly highlight: Highlighter | undefined;
  private snapshot: JobsSnapshot;
  private state: ConsoleState;
  private page = 1;
  private notice: string | null = null;
  private closed = false;

  constructor(options: {
    source: ConsoleSource;
    host: ConsoleHost;
    theme: UiTheme;
    keys: KeyMatcher;
    onClose: () => void;
    highlight?: Highlighter;
  }) {
    this.source = options.source;
    this.host = options.host;
    this.theme = options.theme;
    this.keys = options.keys;
    this.onClose = options.onClose;
    this.highlight = options.highlight;
    this.snapshot = this.source.snapshot({ outputFor: null, resourcesFor: null });
    this.state = initialState(this.snapshot);
    this.refresh();
  }

  /** Whether any job is still running (the host keeps its refresh timer only while this holds). */
  hasRunning(): boolean {
    return this.snapshot.jobs.some((job) => job.running);
  }

  /** Takes a new snapshot and keeps the selection on the same job. */
  refresh(): void {
    if (this.closed) return;
    const key = this.state.selectedKey;
    this.snapshot = this.source.snapshot({ outputFor: this.state.showOutput ? key : null, resourcesFor: key });
    this.state = reconcile(this.state, this.snapshot);
    if (this.state.selectedKey !== key) {
      // The selected job left the list: read again so the new selection has its output and figures.
      const next = this.state.selectedKey;
      this.snapshot = this.source.snapshot({ outputFor: this.state.showOutput ? next : null, resourcesFor: next });
    }
  }

  view(): ConsoleState {
    return this.state;
  }

  render(width: number): string[] {
    const view = renderConsole(this.snapshot, this.state, {
      width,
      height: this.host.rows(),
      theme: this.theme,
      notice: this.notice,
      ...(this.highlight ? { highlight: this.highlight } : {}),
    });
    this.page = view.page;
    // Remember where "end" landed, so PageUp from the end moves up from there.
    if (this.state.help) this.state = { ...this.state, helpScroll: view.scroll };
    else this.state = { ...this.state, scroll: view.scroll };
    return view.lines;
  }

  handleInput(data: string): void {
    const key = consoleKey(data, this.keys);
    if (key === null) return;
    this.notice = null;
    if (key === "close") {
      if (this.state.help) this.state = { ...this.state, help: false };
      else return this.close();
    } else if (key === "stop" || key === "stopAll") {
      if (this.state.help) return;
      const target = this.state.selectedKey;
      if (key === "stop" && target === null) return;
      this.notice = key === "stop" ? `stopping ${target}…` : "stopping all running jobs…";
      const stopping = key === "stop" ? this.source.stop(target as string) : this.source.stopAll();
      void stopping.then(
        (answer) => this.answer(answer),
        (error: unknown) => this.answer(`stop failed: ${(error as Error).message}`),
      );
    } else {
      this.state = reduce(this.state, key, this.snapshot, this.page);
    }
    this.refresh();
    this.host.requestRender();
  }

  private answer(text: string): void {
    if (this.closed) return;
    this.notice = text;
    this.refresh();
    this.host.requestRender();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  invalidate(): void {}
}
