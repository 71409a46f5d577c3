/**
 * What the /monitor console (console.ts) and the shell sessions picker (sessions-picker.ts) share: both draw the
 * snapshots of the host's source, stop jobs through it and show its answer as a one-line notice, and close once.
 * They own only view state.
 */
import type { Component } from "@earendil-works/pi-tui";
import type { JobsSnapshot, JobView } from "./views.ts";
import type { KeyMatcher } from "./keys.ts";
import { startingOf } from "../shared/start-stage.ts";
import type { UiTheme } from "./theme.ts";

export interface ConsoleSource {
  /** A fresh snapshot; retained output only for `outputFor` (the selection, when output is shown). */
  snapshot(request: { outputFor: string | null }): JobsSnapshot;
  /** Stops one job; resolves with a short human answer. */
  stop(key: string): Promise<string>;
  stopAll(): Promise<string>;
}

/**
 * The counts after an overlay's title: ` · 3 running · 1 finished`, and while jobs start, how many are in each stage
 * (` · 2 starting: 1 waiting for a thread, 1 booting`; they are counted among the running ones), so a burst says how
 * far along it is.
 */
export function titleCounts(jobs: readonly JobView[]): string {
  const running = jobs.filter((job) => job.running).length;
  const starting = startingOf(jobs);
  return ` · ${running} running · ${jobs.length - running} finished${starting === null ? "" : ` · ${starting}`}`;
}

export interface ConsoleHost {
  requestRender(): void;
  /** Rows the overlay may use (the terminal's height). */
  rows(): number;
}

export interface OverlayOptions {
  source: ConsoleSource;
  host: ConsoleHost;
  theme: UiTheme;
  keys: KeyMatcher;
  onClose: () => void;
}

export abstract class JobsOverlay implements Component {
  protected readonly source: ConsoleSource;
  protected readonly host: ConsoleHost;
  protected readonly theme: UiTheme;
  protected readonly keys: KeyMatcher;
  private readonly onClose: () => void;
  /** A line under the view: a stop under way, its answer, or why it failed. */
  protected notice: string | null = null;
  protected closed = false;

  constructor(options: OverlayOptions) {
    this.source = options.source;
    this.host = options.host;
    this.theme = options.theme;
    this.keys = options.keys;
    this.onClose = options.onClose;
  }

  /** Whether any job it shows is still running (the host keeps its refresh timer only while this holds). */
  abstract hasRunning(): boolean;
  /** Takes a new snapshot. */
  abstract refresh(): void;
  abstract render(width: number): string[];
  abstract handleInput(data: string): void;

  /** Says `pending`, sends the stop, and shows the host's answer (or why the stop failed) when it comes. */
  protected stop(pending: string, send: () => Promise<string>): void {
    this.notice = pending;
    void send().then(
      (answer) => this.answer(answer),
      (error: unknown) => this.answer(`stop failed: ${(error as Error).message}`),
    );
  }

  private answer(text: string): void {
    if (this.closed) return;
    this.notice = text;
    this.refresh();
    this.host.requestRender();
  }

  protected close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  invalidate(): void {}
}
