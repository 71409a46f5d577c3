import { describe, expect, it } from "vitest";
import { openTool, closeTool } from "../../host/metrics/activity-state.ts";
import { requestRecord, toolCallIdsOf } from "../../host/metrics/request-record.ts";
import { runRecord, type RunReadings } from "../../host/metrics/run-record.ts";
import { activity, context, finalize, iso, streamed, turn } from "../fixtures/metrics-activity.ts";

const at = (nowMono: number) => ({ nowMono, finalizedAt: iso(nowMono), samplesComplete: true, contextEnd: context, sessionUsage: null });

/** Readings that count how often each was taken. */
function readings(now: number) {
  const taken = { mono: 0, context: 0, sessionUsage: 0 };
  const read: RunReadings = {
    mono: () => (taken.mono++, now),
    context: () => (taken.context++, context),
    sessionUsage: () => (taken.sessionUsage++, { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, cost: 0.5 }),
  };
  return { read, taken };
}

describe("the request record", () => {
  it("measures from the request's start: TTFT, response and stream time, and EFF TPS over the stream only", () => {
    const a = activity();
    const r = streamed(a, 1_000, 21_000, 26_000);
    const rec = requestRecord(a, r, turn("stop", 200), at(26_500));
    expect(rec).toMatchObject({
      schema: 2,
      kind: "request",
      requestId: "req1",
      runId: "run1",
      requestIndex: 0,
      startedAt: iso(1_000),
      respondedAt: iso(26_000),
      finalizedAt: iso(26_500),
      timingBasis: "context_with_system",
      throughputBasis: "reported_output_tokens/observed_stream_elapsed_seconds",
      ttftMs: 20_000,
      firstTextMs: 20_000,
      firstThinkingMs: null,
      responseMs: 25_000,
      streamMs: 5_000,
      finalizedMs: 25_500,
      outputTps: 40,
      unavailableReason: null,
      messageEntryId: "m1",
      toolResultEntryIds: ["t1"],
      requestedProvider: "faux",
      requestedModel: "faux-1",
      thinkingLevel: "off",
      reasoningBreakdown: "zero_or_unreported",
      samplesComplete: true,
    });
  });

  it("says why a request has no rate, and takes the message's stop reason over message_end's", () => {
    const a = activity();
    const r = streamed(a, 0, 100, 200);
    r.stopReason = "stop";
    expect(requestRecord(a, r, turn("error", 200), at(300))).toMatchObject({ stopReason: "error", outputTps: null, unavailableReason: "error" });
    const fallback = turn("stop", 200);
    delete fallback.message.stopReason;
    expect(requestRecord(a, r, fallback, at(300))).toMatchObject({ stopReason: "stop", outputTps: 2000 });
    const silent = streamed(a, 400, null, 500);
    expect(requestRecord(a, silent, turn("stop", 10), at(600))).toMatchObject({ ttftMs: null, streamMs: null, unavailableReason: "no_observed_token" });
  });

  it("copies only typed fields of the message, never its text", () => {
    const a = activity();
    const r = streamed(a, 0, 10, 20);
    const rec = requestRecord(
      a,
      r,
      turn("toolUse", 5, {
        provider: "p",
        model: 7,
        api: "api",
        responseModel: null,
        durationMs: "slow",
        content: [{ type: "text", text: "the secret answer" }, { type: "toolCall", id: "call1", arguments: { path: "/secret" } }, { type: "toolCall" }, null],
      }),
      at(30),
    );
    expect(rec).toMatchObject({ provider: "p", model: null, api: "api", responseModel: null, providerDurationMs: null, toolCallIds: ["call1"] });
    expect(JSON.stringify(rec)).not.toMatch(/secret/);
    expect(toolCallIdsOf("not blocks")).toEqual([]);
  });

  it("carries the samples that could not be saved as chunks, as a copy", () => {
    const a = activity();
    const r = streamed(a, 0, 10, 20);
    r.pending = [{ i: 0, tMs: 250, obsTps: null, chars: 8 }];
    r.sampleCount = 1;
    const rec = requestRecord(a, r, turn("stop", 5), { ...at(30), samplesComplete: false });
    r.pending.length = 0;
    expect(rec).toMatchObject({ samples: [{ i: 0, tMs: 250, obsTps: null, chars: 8 }], sampleCount: 1, sampleChunks: 0, samplesComplete: false });
  });
});

describe("the run record", () => {
  it("at the start carries no end context and takes no reading it does not need", () => {
    const a = activity();
    const { read, taken } = readings(50);
    expect(runRecord(a, "start", read, true)).toMatchObject({
      schema: 2,
      kind: "run",
      runId: "run1",
      phase: "start",
      state: "running",
      requestCount: 0,
      effTps: null,
      unavailableReason: "no_requests",
      listsComplete: true,
      requestIds: [],
      tools: [],
      contextStart: context,
      contextEnd: null,
      sessionUsage: null,
    });
    expect(taken).toEqual({ mono: 1, context: 0, sessionUsage: 0 });
  });

  it("covers the finalized eligible requests, and leaves the growing lists out of progress records", () => {
    const a = activity();
    finalize(a, streamed(a, 0, 1_000, 3_000), turn("stop", 100), 3_100);
    finalize(a, streamed(a, 4_000, 4_500, 5_500), turn("length", 60), 5_600);
    const { read, taken } = readings(6_000);
    const progress = runRecord(a, "progress", read, true);
    expect(progress).toMatchObject({
      ttftMs: 1_000,
      finalizedRequests: 2,
      coveredRequests: 2,
      outputTokens: 160,
      coveredStreamMs: 3_000,
      effTps: 160 / 3,
      measuredRequestMs: 4_500,
      coveredRequestMs: 4_500,
      listsComplete: false,
      requestIds: null,
      tools: null,
      contextEnd: context,
      sessionUsage: null,
    });
    expect(taken).toEqual({ mono: 1, context: 1, sessionUsage: 0 });
    expect(runRecord(a, "final", read, false)).toMatchObject({ requestIds: ["req1", "req2"], samplingComplete: false, sessionUsage: { cost: 0.5 } });
  });

  it("is unavailable while a request is not finalized, and knows no TTFT for an activity it joined late", () => {
    const a = activity(true);
    finalize(a, streamed(a, 0, 1_000, 3_000), turn("stop", 100), 3_100);
    streamed(a, 4_000, null, null);
    expect(runRecord(a, "progress", readings(5_000).read, true)).toMatchObject({
      partial: true,
      ttftMs: null,
      firstTextMs: null,
      effTps: null,
      unavailableReason: "pending",
      coveredRequests: 1,
    });
  });

  it("counts parallel tools' wall time once, a running one up to now, and lists tools without their clocks", () => {
    const a = activity();
    const r = streamed(a, 0, 10, 20);
    openTool(a, r, { toolCallId: "a", toolName: "bash", parentToolCallId: null }, 100);
    openTool(a, r, { toolCallId: "b", toolName: "read", parentToolCallId: null }, 150);
    closeTool(a, a.tools.get("req1/a")!, "finished", 300);
    openTool(a, r, { toolCallId: "c", toolName: "bash", parentToolCallId: null }, 400);
    const rec = runRecord(a, "final", readings(450).read, true);
    // [100, 300] ∪ [150, 450] ∪ [400, 450]: the running ones end now.
    expect(rec.toolWallMs).toBe(350);
    expect(rec.toolCount).toBe(3);
    expect(rec.tools?.[0]).toEqual({ toolCallId: "a", toolName: "bash", parentToolCallId: null, requestId: "req1", startMs: 100, endMs: 300, elapsedMs: 200, status: "finished" });
    a.endMono = 420;
    a.endIso = iso(420);
    expect(runRecord(a, "final", readings(450).read, true)).toMatchObject({ toolWallMs: 320, elapsedMs: 420, endedAt: iso(420) });
  });
});
