/**
 * The /monitor console as a pi-tui component. It owns only view state (selection, scroll, toggles); every job fact
 * comes from the snapshot source the host gives it, and stopping goes through the host's API. The host refreshes it
 * on its 250 ms timer while jobs run; a key press refreshes it at once.
 */
import type { JobsSnapshot } from "./views.ts";
import { initialState, reconcile, reduce, type ConsoleState } from "./console-state.ts";
import { renderConsole } from "./console-view.ts";
import type { Highlighter } from "./fields.ts";
import { JobsOverlay, type OverlayOptions } from "./jobs-overlay.ts";
import { consoleKey } from "./keys.ts";

export class MonitorConsole extends JobsOverlay {
  private readonly highlight: Highlighter | undefined;
  private snapshot: JobsSnapshot;
  private state: ConsoleState;
  private page = 1;

  constructor(options: OverlayOptions & { highlight?: Highlighter }) {
    super(options);
    this.highlight = options.highlight;
    this.snapshot = this.source.snapshot({ outputFor: null });
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
    this.snapshot = this.source.snapshot({ outputFor: this.state.showOutput ? key : null });
    this.state = reconcile(this.state, this.snapshot);
    if (this.state.selectedKey !== key) {
      // The selected job left the list: read again so the new selection has its output and figures.
      const next = this.state.selectedKey;
      this.snapshot = this.source.snapshot({ outputFor: this.state.showOutput ? next : null });
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
      if (key === "stop") this.stop(`stopping ${target}…`, () => this.source.stop(target as string));
      else this.stop("stopping all running jobs…", () => this.source.stopAll());
    } else {
      this.state = reduce(this.state, key, this.snapshot, this.page);
    }
    this.refresh();
    this.host.requestRender();
  }
}
