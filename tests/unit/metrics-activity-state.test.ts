import { describe, expect, it } from "vitest";
import {
  closeTool,
  observeDelta,
  openTool,
  runningTool,
  streamingRequest,
  unfinalizedRequest,
} from "../../host/metrics/activity-state.ts";
import { addDelta, createObsWindow } from "../../host/metrics/obs-rate.ts";
import { sampleAt, samplesRecord, traceRecord } from "../../host/metrics/trace-record.ts";
import { activity, finalize, iso, streamed, turn } from "../fixtures/metrics-activity.ts";

describe("activity state", () => {
  it("knows which request streams and which waits for turn_end", () => {
    const a = activity();
    expect([streamingRequest(a), unfinalizedRequest(a), streamingRequest(null)]).toEqual([null, null, null]);
    const r = streamed(a, 100, 200, null);
    expect([streamingRequest(a), unfinalizedRequest(a)]).toEqual([r, null]);
    r.completedMono = 300;
    expect([streamingRequest(a), unfinalizedRequest(a)]).toEqual([null, r]);
    finalize(a, r, turn("stop", 10), 400);
    expect([streamingRequest(a), unfinalizedRequest(a)]).toEqual([null, null]);
    const next = streamed(a, 500, null, null);
    next.interrupted = true;
    expect([streamingRequest(a), unfinalizedRequest(a)]).toEqual([null, null]);
  });

  it("counts deltas per kind and fixes each first observation once", () => {
    const a = activity();
    const r = streamed(a, 100, null, null);
    expect(observeDelta(a, r, "thinking", 12, 150)).toBe(true);
    expect(observeDelta(a, r, "text", 4, 180)).toBe(false);
    expect(observeDelta(a, r, "text", 4, 190)).toBe(false);
    expect(observeDelta(a, r, "toolArgs", 20, 200)).toBe(false);
    expect(r.observed).toEqual({ textChars: 8, thinkingChars: 12, toolArgsChars: 20, textDeltas: 2, thinkingDeltas: 1, toolArgsDeltas: 1, approxTokens: 10 });
    expect([r.firstObs, r.first]).toEqual([150, { thinking: 150, text: 180, toolArgs: 200 }]);
    // A later request has firsts of its own; the activity keeps its earliest.
    const later = streamed(a, 300, null, null);
    expect(observeDelta(a, later, "text", 1, 350)).toBe(true);
    expect([later.first.text, a.first.text, a.firstObs]).toEqual([350, 180, 150]);
  });

  it("scopes a tool call id to the request that issued it, and closes the latest running call", () => {
    const a = activity();
    const first = streamed(a, 0, null, 10);
    openTool(a, first, { toolCallId: "call", toolName: "bash", parentToolCallId: null }, 20);
    const second = streamed(a, 30, null, 40);
    openTool(a, second, { toolCallId: "call", toolName: "read", parentToolCallId: "outer" }, 50);
    expect([...a.tools.keys()]).toEqual(["req1/call", "req2/call"]);
    const latest = runningTool(a, "call");
    expect(latest?.requestId).toBe("req2");
    closeTool(a, latest!, "error", 80);
    expect(a.tools.get("req2/call")).toEqual({
      toolCallId: "call",
      toolName: "read",
      parentToolCallId: "outer",
      requestId: "req2",
      startMs: 50,
      endMs: 80,
      elapsedMs: 30,
      status: "error",
      startMono: 50,
      endMono: 80,
    });
    expect(runningTool(a, "call")?.requestId).toBe("req1");
    openTool(a, null, { toolCallId: "orphan", toolName: "bash", parentToolCallId: null }, 90);
    expect(a.tools.get("-/orphan")?.requestId).toBeNull();
  });
});

describe("trace records", () => {
  it("carry the run, the request and both clocks", () => {
    const a = activity();
    const r = streamed(a, 100, null, null);
    expect(traceRecord(a, r, iso(250), 250, { kind: "request_interrupted", reason: "superseded", ttftMs: null, elapsedMs: 150 })).toEqual({
      schema: 2,
      runId: "run1",
      requestId: "req1",
      at: iso(250),
      atMs: 250,
      kind: "request_interrupted",
      reason: "superseded",
      ttftMs: null,
      elapsedMs: 150,
    });
    expect(traceRecord(a, null, iso(5), 5, { kind: "tool_start", toolCallId: "c", toolName: "bash", parentToolCallId: null }).requestId).toBeNull();
  });

  it("sample a streaming request and persist its pending samples as the next chunk", () => {
    const a = activity();
    const r = streamed(a, 100, null, null);
    observeDelta(a, r, "text", 6, 120);
    observeDelta(a, r, "thinking", 4, 130);
    expect(sampleAt(r, 350)).toEqual({ i: 0, tMs: 250, obsTps: null, chars: 10 });
    r.obs = createObsWindow(100);
    addDelta(r.obs, 120, "x".repeat(400));
    addDelta(r.obs, 400, "x".repeat(400));
    expect(sampleAt(r, 600).obsTps).toBe(800 / 4 / 0.5);
    r.pending = [
      { i: 5, tMs: 250, obsTps: null, chars: 10 },
      { i: 6, tMs: 500, obsTps: 0, chars: 10 },
    ];
    r.chunks = 3;
    expect(samplesRecord(a, r, iso(700), 700)).toEqual({
      schema: 2,
      kind: "samples",
      runId: "run1",
      requestId: "req1",
      at: iso(700),
      atMs: 700,
      chunkIndex: 3,
      firstSampleIndex: 5,
      sampleCount: 2,
      samples: r.pending,
    });
  });
});
