/**
 * The /monitor console's state as a pure reducer: selection by job key (so it survives a job finishing and moving
 * in the list), detail scrolling, output shown only after Enter, previews ↔ complete values, and the help page.
 */
import type { JobsSnapshot } from "./views.ts";

export interface ConsoleState {
  selectedKey: string | null;
  /** Index of the selection last time it was seen, to land near it if the job leaves the list. */
  selectedIndex: number;
  /** First detail line shown; `Infinity` means "the end" until the next render clamps it. */
  scroll: number;
  showOutput: boolean;
  fullValues: boolean;
  help: boolean;
  helpScroll: number;
}

export type ConsoleAction =
  | "up"
  | "down"
  | "pageUp"
  | "pageDown"
  | "home"
  | "end"
  | "toggleOutput"
  | "toggleValues"
  | "toggleHelp";

export function initialState(snapshot: JobsSnapshot): ConsoleState {
  const first = snapshot.jobs[0];
  return {
    selectedKey: first?.key ?? null,
    selectedIndex: 0,
    scroll: 0,
    showOutput: false,
    fullValues: false,
    help: false,
    helpScroll: 0,
  };
}

/** Re-finds the selection in a new snapshot: same key if it is still listed, else the job now at its old place. */
export function reconcile(state: ConsoleState, snapshot: JobsSnapshot): ConsoleState {
  const jobs = snapshot.jobs;
  if (jobs.length === 0) return { ...state, selectedKey: null, selectedIndex: 0 };
  const index = state.selectedKey === null ? -1 : jobs.findIndex((job) => job.key === state.selectedKey);
  if (index >= 0) return index === state.selectedIndex ? state : { ...state, selectedIndex: index };
  const fallback = Math.min(Math.max(0, state.selectedIndex), jobs.length - 1);
  return { ...state, selectedKey: jobs[fallback]?.key ?? null, selectedIndex: fallback, scroll: 0, fullValues: false };
}

/** `page` is the number of detail (or help) lines visible. */
export function reduce(state: ConsoleState, action: ConsoleAction, snapshot: JobsSnapshot, page: number): ConsoleState {
  const step = Math.max(1, page - 1);
  if (state.help) {
    switch (action) {
      case "toggleHelp":
        return { ...state, help: false };
      case "up":
        return { ...state, helpScroll: Math.max(0, state.helpScroll - 1) };
      case "down":
        return { ...state, helpScroll: state.helpScroll + 1 };
      case "pageUp":
        return { ...state, helpScroll: Math.max(0, state.helpScroll - step) };
      case "pageDown":
        return { ...state, helpScroll: state.helpScroll + step };
      case "home":
        return { ...state, helpScroll: 0 };
      case "end":
        return { ...state, helpScroll: Number.POSITIVE_INFINITY };
      default:
        return state;
    }
  }
  const jobs = snapshot.jobs;
  const select = (index: number): ConsoleState => {
    if (jobs.length === 0) return state;
    const next = Math.min(Math.max(0, index), jobs.length - 1);
    const key = jobs[next]?.key ?? null;
    if (key === state.selectedKey) return state;
    // A new selection starts at its top, with previews (complete values are asked for per job).
    return { ...state, selectedKey: key, selectedIndex: next, scroll: 0, fullValues: false };
  };
  const current = reconcile(state, snapshot);
  switch (action) {
    case "up":
      return select(current.selectedIndex - 1);
    case "down":
      return select(current.selectedIndex + 1);
    case "pageUp":
      return { ...current, scroll: Math.max(0, Math.min(current.scroll, 1e9) - step) };
    case "pageDown":
      return { ...current, scroll: Math.min(current.scroll, 1e9) + step };
    case "home":
      return { ...current, scroll: 0 };
    case "end":
      return { ...current, scroll: Number.POSITIVE_INFINITY };
    case "toggleOutput":
      return { ...current, showOutput: !current.showOutput };
    case "toggleValues":
      return { ...current, fullValues: !current.fullValues };
    case "toggleHelp":
      return { ...current, help: true, helpScroll: 0 };
  }
}
