/** The console's view state: selection by job key across snapshots, resets on selection change, help scrolling. */
import { describe, expect, it } from "vitest";
import { initialState, reconcile, reduce } from "../../ui/console-state.ts";
import { consoleKey } from "../../ui/keys.ts";
import { monitorJob, snapshotOf, terminalResult } from "../fixtures/ui-snapshots.ts";

const keys = { matches: () => false };

describe("console state", () => {
  it("keeps the selection on a job that finishes and moves in the list", () => {
    const a = monitorJob(1, null);
    const b = monitorJob(2, null);
    const before = snapshotOf([a, b]);
    let state = reduce(initialState(before), "down", before, 10);
    expect(state.selectedKey).toBe("monitor:monitor_2");
    // monitor_2 finished: running jobs come first now, so it moved below monitor_1 — and further down the list.
    const after = snapshotOf([monitorJob(3, null), a, monitorJob(2, terminalResult({ monitorId: "monitor_2", status: "failure" }))]);
    state = reconcile(state, after);
    expect(state.selectedKey).toBe("monitor:monitor_2");
    expect(state.selectedIndex).toBe(2);
  });

  it("lands on the job now at the old place when the selected one leaves the list", () => {
    const snap = snapshotOf([monitorJob(1, null), monitorJob(2, null), monitorJob(3, null)]);
    let state = reduce(reduce(initialState(snap), "down", snap, 10), "down", snap, 10);
    state = reconcile(state, snapshotOf([monitorJob(1, null), monitorJob(2, null)]));
    expect(state.selectedKey).toBe("monitor:monitor_2");
  });

  it("a new selection starts at the top with previews; output visibility is independent", () => {
    const snap = snapshotOf([monitorJob(1, null), monitorJob(2, null)]);
    let state = initialState(snap);
    expect(state.showOutput).toBe(false);
    state = reduce(state, "toggleOutput", snap, 10);
    state = reduce(state, "toggleValues", snap, 10);
    state = reduce(state, "pageDown", snap, 10);
    expect(state).toMatchObject({ showOutput: true, fullValues: true, scroll: 9 });
    state = reduce(state, "down", snap, 10);
    expect(state).toMatchObject({ selectedKey: "monitor:monitor_2", showOutput: true, fullValues: false, scroll: 0 });
    expect(reduce(state, "end", snap, 10).scroll).toBe(Number.POSITIVE_INFINITY);
    expect(reduce(reduce(state, "end", snap, 10), "home", snap, 10).scroll).toBe(0);
  });

  it("help scrolls with the same keys and closes with ?", () => {
    const snap = snapshotOf([monitorJob(1, null)]);
    let state = reduce(initialState(snap), "toggleHelp", snap, 5);
    state = reduce(state, "down", snap, 5);
    expect(state).toMatchObject({ help: true, helpScroll: 1, selectedKey: "monitor:monitor_1" });
    expect(reduce(state, "toggleHelp", snap, 5).help).toBe(false);
  });

  it("maps keys: q and Escape close, letters act, arrows move", () => {
    expect(["q", "\u001b", "x", "a", "v", "?", "\r", "\u001b[A", "\u001b[B", "\u001b[5~", "\u001b[6~", "\u001b[H", "\u001b[F"].map((d) => consoleKey(d, keys))).toEqual([
      "close", "close", "stop", "stopAll", "toggleValues", "toggleHelp", "toggleOutput", "up", "down", "pageUp", "pageDown", "home", "end",
    ]);
  });
});
