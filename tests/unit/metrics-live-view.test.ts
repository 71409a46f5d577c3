import { describe, expect, it } from "vitest";
import { openTool } from "../../host/metrics/activity-state.ts";
import { effectiveRate, liveView, retainedAfter, type ViewedState } from "../../host/metrics/live-view.ts";
import { addDelta } from "../../host/metrics/obs-rate.ts";
import { activity, finalize, streamed, turn } from "../fixtures/metrics-activity.ts";

const retained = { tps: 12, runId: "earlier" };

describe("the effective rate shown", () => {
  it("is none without anything to show, and pending while an activity has no rate yet", () => {
    expect(effectiveRate(null, null)).toEqual({ effTps: null, effQualifier: "none" });
    const a = activity();
    streamed(a, 0, 100, null);
    expect(effectiveRate(a, null)).toEqual({ effTps: null, effQualifier: "pending" });
    a.state = "interrupted";
    expect(effectiveRate(a, null)).toEqual({ effTps: null, effQualifier: "none" });
  });

  it("is the activity's own, so far while it runs and final after, else the last retained one", () => {
    const a = activity();
    finalize(a, streamed(a, 0, 1_000, 3_000), turn("stop", 100), 3_100);
    expect(effectiveRate(a, retained)).toEqual({ effTps: 50, effQualifier: "so_far" });
    streamed(a, 4_000, null, null);
    expect(effectiveRate(a, retained)).toEqual({ effTps: 12, effQualifier: "last" });
    a.requests.pop();
    a.state = "settled";
    expect(effectiveRate(a, retained)).toEqual({ effTps: 50, effQualifier: "final" });
    // An activity joined late has no rate of its own.
    const late = activity(true);
    finalize(late, streamed(late, 0, 1_000, 3_000), turn("stop", 100), 3_100);
    expect(effectiveRate(late, retained)).toEqual({ effTps: 12, effQualifier: "last" });
  });

  it("is retained from an activity only while every finalized request of it is eligible", () => {
    const a = activity();
    expect(retainedAfter(a)).toBeNull();
    finalize(a, streamed(a, 0, 1_000, 3_000), turn("stop", 100), 3_100);
    streamed(a, 4_000, 4_100, null);
    expect(retainedAfter(a)).toEqual({ tps: 50, runId: "run1" });
    finalize(a, a.requests[1]!, turn("error", 10), 4_200);
    expect(retainedAfter(a)).toBeNull();
  });
});

describe("the live view", () => {
  const state = (over: Partial<ViewedState>): ViewedState => ({
    activity: null,
    retained: null,
    lastStopReason: null,
    lastUsage: null,
    storageFailed: false,
    ...over,
  });

  it("is idle without an activity", () => {
    expect(liveView(state({ retained, lastStopReason: "stop", storageFailed: true }), 1_000)).toEqual({
      activityState: "idle",
      activityPartial: false,
      activityTtftMs: null,
      activityElapsedMs: null,
      requestOpen: false,
      requestCount: 0,
      effTps: 12,
      effQualifier: "last",
      obsTps: null,
      toolsRunning: 0,
      lastStopReason: "stop",
      lastUsage: null,
      storageFailed: true,
    });
  });

  it("shows a running activity's figures, its open request and a positive observed rate only", () => {
    const a = activity();
    const r = streamed(a, 100, 300, null);
    openTool(a, r, { toolCallId: "t", toolName: "bash", parentToolCallId: null }, 350);
    addDelta(r.obs, 300, "x".repeat(400));
    addDelta(r.obs, 600, "x".repeat(400));
    expect(liveView(state({ activity: a }), 700)).toMatchObject({
      activityState: "running",
      activityTtftMs: 300,
      activityElapsedMs: 700,
      requestOpen: true,
      requestCount: 1,
      effQualifier: "pending",
      obsTps: 800 / 4 / 0.6,
      toolsRunning: 1,
    });
    // Silence decays the rate to zero, which is hidden.
    expect(liveView(state({ activity: a }), 10_000).obsTps).toBeNull();
    a.state = "settled";
    a.endMono = 800;
    expect(liveView(state({ activity: a }), 10_000)).toMatchObject({ activityState: "settled", activityElapsedMs: 800 });
  });
});
