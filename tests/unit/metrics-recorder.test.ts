import { describe, expect, it } from "vitest";
import { ENTRY_REQUEST, ENTRY_RUN, ENTRY_TRACE } from "../../host/metrics/constants.ts";
import { readHistory } from "../../host/metrics/history.ts";
import { Recorder, type RecorderDeps } from "../../host/metrics/recorder.ts";
import type { RequestRecord, RunRecord, Sample } from "../../host/metrics/records.ts";

interface Harness {
  rec: Recorder;
  entries: { type: "custom"; id: string; customType: string; data: any }[];
  clock: { t: number };
  failSaves: { on: boolean };
  errors: unknown[];
}

/**
 * All samples of one request as a reader of the session file gets them back: its trace chunks in chunkIndex order,
 * then the finalized record's inline fallback. Provisional checkpoints carry no samples, so nothing counts twice.
 */
function reconstructSamples(entries: Harness["entries"], requestId: string): Sample[] {
  const chunks: { chunkIndex: number; samples: Sample[] }[] = [];
  let inline: Sample[] = [];
  for (const e of entries) {
    const d = e.data as Record<string, unknown>;
    if (typeof d !== "object" || d === null || d.requestId !== requestId) continue;
    if (e.customType === ENTRY_TRACE && d.kind === "samples" && Array.isArray(d.samples)) {
      chunks.push({ chunkIndex: typeof d.chunkIndex === "number" ? d.chunkIndex : 0, samples: d.samples as Sample[] });
    } else if (e.customType === ENTRY_REQUEST && Array.isArray(d.samples)) inline = d.samples as Sample[];
  }
  chunks.sort((a, b) => a.chunkIndex - b.chunkIndex);
  return [...chunks.flatMap((c) => c.samples), ...inline];
}

function harness(): Harness {
  const clock = { t: 0 };
  const entries: Harness["entries"] = [];
  const failSaves = { on: false };
  const errors: unknown[] = [];
  let n = 0;
  const deps: RecorderDeps = {
    mono: () => clock.t,
    iso: () => new Date(1_700_000_000_000 + clock.t).toISOString(),
    newId: () => `id${++n}`,
    append: (customType, data) => {
      if (failSaves.on) throw new Error("disk full");
      entries.push({ type: "custom", id: `e${entries.length}`, customType, data: structuredClone(data) });
    },
    context: () => ({ tokens: 1000, contextWindow: 10_000, percent: 10 }),
    sessionUsage: () => null,
    onStorageError: (e) => errors.push(e),
  };
  return { rec: new Recorder(deps), entries, clock, failSaves, errors };
}

const usage = (output: number, reasoning?: number) => ({
  input: 10,
  output,
  cacheRead: 5,
  cacheWrite: 0,
  totalTokens: 15 + output,
  ...(reasoning === undefined ? {} : { reasoning }),
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.01 },
});

const meta = { provider: "faux", model: "faux-1", thinkingLevel: "off" };

function finalMessage(stopReason: string, output: number, reasoning?: number) {
  return { role: "assistant", stopReason, usage: usage(output, reasoning), provider: "faux", model: "faux-1", api: "faux", content: [{ type: "text", text: "secret answer" }] };
}

/** One request: wait, then deltas over `streamMs`, then message_end and turn_end. */
function request(h: Harness, waitMs: number, streamMs: number, output: number, stopReason = "stop") {
  h.rec.requestStart(meta);
  h.clock.t += waitMs;
  h.rec.delta("text", "hello ");
  h.clock.t += streamMs;
  h.rec.delta("text", "world");
  h.rec.responseEnd({ stopReason, usage: usage(output) });
  return h.rec.turnEnd({ message: finalMessage(stopReason, output), messageEntryId: `m${h.clock.t}`, toolResultEntryIds: [] });
}

/** Ends the open request: message_end without usage, then turn_end with the final message. */
function finish(h: Harness, stopReason: string, output: number, messageEntryId = "m", reasoning?: number): RequestRecord {
  h.rec.responseEnd({ stopReason });
  return h.rec.turnEnd({ message: finalMessage(stopReason, output, reasoning), messageEntryId, toolResultEntryIds: [] }) as RequestRecord;
}

/** Starts an activity (on a new harness unless given one) and opens its first request. */
function openRequest(h = harness()): Harness {
  h.rec.agentStart();
  h.rec.requestStart(meta);
  return h;
}

/** One whole activity: a single request, then the activity settles. */
function settledActivity(h: Harness, waitMs: number, streamMs: number, output: number): void {
  h.rec.agentStart();
  request(h, waitMs, streamMs, output);
  h.rec.agentSettled(false);
}

const of = (h: Harness, type: string) => h.entries.filter((e) => e.customType === type).map((e) => e.data);

describe("recorder lifecycle", () => {
  it("records the 20 s wait / 5 s stream request: TTFT 20 s, EFF TPS 40, full response 25 s", () => {
    const h = harness();
    h.rec.agentStart();
    const r = request(h, 20_000, 5_000, 200) as RequestRecord;
    expect(r.ttftMs).toBe(20_000);
    expect(r.streamMs).toBe(5_000);
    expect(r.responseMs).toBe(25_000);
    expect(r.outputTps).toBe(40);
    expect(r.throughputBasis).toBe("reported_output_tokens/observed_stream_elapsed_seconds");
    expect(r.hiddenReasoningTokens).toBeNull();
    expect(r.hiddenReasoningMs).toBeNull();
    expect(r.reasoningBreakdown).toBe("zero_or_unreported");
    h.rec.agentSettled(false);
    const final = of(h, ENTRY_RUN).at(-1) as RunRecord;
    expect(final).toMatchObject({ phase: "final", state: "settled", ttftMs: 20_000, effTps: 40, coveredRequests: 1, coveredStreamMs: 5000, listsComplete: true });
    expect(h.rec.view(h.clock.t)).toMatchObject({ effTps: 40, effQualifier: "final" });
  });

  it("reasoning breakdown: positive only for a positive count; output already includes it", () => {
    const h = openRequest();
    h.clock.t += 100;
    h.rec.delta("thinking", "…");
    h.clock.t += 5000;
    const r = finish(h, "stop", 1200, "m", 1000);
    expect(r.reasoningTokens).toBe(1000);
    expect(r.reasoningBreakdown).toBe("positive");
    expect(r.outputTps).toBe(240);
  });

  it("activity TTFT is fixed by the first non-empty delta and not reset by tools or continuations", () => {
    const h = openRequest();
    h.clock.t += 300;
    h.rec.delta("thinking", ""); // empty deltas never count
    h.clock.t += 200;
    h.rec.delta("toolArgs", '{"a":1}');
    h.clock.t += 100;
    h.rec.responseEnd({ stopReason: "toolUse" });
    h.rec.toolStart("call1", "bash", null);
    h.clock.t += 10_000; // tool time: excluded from the response clock
    h.rec.toolEnd("call1", false);
    const r0 = h.rec.turnEnd({ message: finalMessage("toolUse", 10), messageEntryId: "m0", toolResultEntryIds: ["t0"] }) as RequestRecord;
    expect(r0.ttftMs).toBe(500);
    expect(r0.firstToolArgsMs).toBe(500);
    expect(r0.firstTextMs).toBeNull();
    expect(r0.responseMs).toBe(600); // frozen at message_end, before the tool ran
    expect(r0.finalizedMs).toBe(10_600);
    h.rec.agentStart(); // continuation inside the same activity
    h.rec.requestStart(meta);
    h.clock.t += 50;
    h.rec.delta("text", "done");
    h.clock.t += 50;
    finish(h, "stop", 5, "m1");
    h.rec.agentSettled(false);
    const final = of(h, ENTRY_RUN).at(-1) as RunRecord;
    expect(final.ttftMs).toBe(500);
    expect(final.firstToolArgsMs).toBe(500);
    expect(final.firstTextMs).toBe(10_650);
    expect(final.continuations).toBe(1);
    expect(final.toolCount).toBe(1);
    expect(final.toolWallMs).toBe(10_000);
    expect(final.requestCount).toBe(2);
    // Σ output / Σ stream: (10 + 5) / ((100 + 50) / 1000)
    expect(final.effTps).toBeCloseTo(100, 9);
  });

  it("samples every tick including silent ones, in chunks of 128, joined losslessly", () => {
    const h = openRequest();
    for (let i = 0; i < 300; i++) {
      h.clock.t += 250;
      if (i % 50 === 10) h.rec.delta("text", "abcdefgh");
      h.rec.tick(h.clock.t);
    }
    const r = finish(h, "stop", 20);
    const chunks = of(h, ENTRY_TRACE).filter((d) => d.kind === "samples");
    expect(chunks.map((c) => [c.chunkIndex, c.firstSampleIndex, c.sampleCount])).toEqual([
      [0, 0, 128],
      [1, 128, 128],
      [2, 256, 44],
    ]);
    expect(r).toMatchObject({ sampleCount: 300, sampleChunks: 3, samplesComplete: true, samples: [] });
    const all = reconstructSamples(h.entries, r.requestId);
    expect(all.map((s) => s.i)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(all.some((s) => s.obsTps === 0)).toBe(true); // silence is kept as zero samples
    expect(all.at(-1)?.chars).toBe(48);
  });

  it("writes no text of prompts, answers or arguments", () => {
    const h = openRequest();
    h.clock.t += 10;
    h.rec.delta("text", "TOP-SECRET-DELTA");
    h.clock.t += 300;
    h.rec.delta("toolArgs", '{"password":"hunter2"}');
    finish(h, "stop", 9);
    h.rec.agentSettled(false);
    const dump = JSON.stringify(h.entries);
    expect(dump).not.toContain("TOP-SECRET");
    expect(dump).not.toContain("hunter2");
    expect(dump).not.toContain("secret answer");
  });

  it("qualifiers: pending before any estimate, so far inside, final after, last while a new request is open", () => {
    const h = harness();
    h.rec.agentStart();
    expect(h.rec.view(0)).toMatchObject({ effTps: null, effQualifier: "pending" });
    h.rec.requestStart(meta);
    h.clock.t += 100;
    h.rec.delta("text", "aaaa");
    h.clock.t += 1000;
    h.rec.delta("text", "bbbb");
    finish(h, "toolUse", 50, "m0");
    expect(h.rec.view(h.clock.t)).toMatchObject({ effTps: 50, effQualifier: "so_far" });
    h.rec.requestStart(meta); // a continuation request is open: coverage unavailable, retained shown as last
    expect(h.rec.view(h.clock.t)).toMatchObject({ effTps: 50, effQualifier: "last" });
    h.clock.t += 10;
    finish(h, "error", 0, "m1");
    h.rec.agentSettled(false);
    expect(h.rec.view(h.clock.t)).toMatchObject({ effTps: 50, effQualifier: "last" });
    // A new activity keeps the retained estimate until a new valid one arrives.
    h.rec.agentStart();
    expect(h.rec.view(h.clock.t)).toMatchObject({ effTps: 50, effQualifier: "last" });
    request(h, 100, 1000, 80);
    h.rec.agentSettled(false);
    expect(h.rec.view(h.clock.t)).toMatchObject({ effTps: 80, effQualifier: "final" });
  });

  it("OBS TPS is shown only while positive and hidden after completion", () => {
    const h = openRequest();
    h.clock.t += 100;
    h.rec.delta("text", "x".repeat(40));
    h.clock.t += 300;
    h.rec.delta("text", "x".repeat(40));
    expect(h.rec.view(h.clock.t).obsTps).toBeGreaterThan(0);
    h.clock.t += 5000;
    expect(h.rec.view(h.clock.t).obsTps).toBeNull(); // decayed to zero: hidden
    h.rec.delta("text", "x".repeat(40));
    h.clock.t += 100;
    expect(h.rec.view(h.clock.t).obsTps).toBeGreaterThan(0); // reappears
    h.rec.responseEnd({ stopReason: "stop" });
    expect(h.rec.view(h.clock.t).obsTps).toBeNull();
  });

  it("aborted activity: open request interrupted, activity unavailable, retained estimate kept", () => {
    const h = harness();
    settledActivity(h, 10, 1000, 100);
    openRequest(h);
    h.clock.t += 500;
    h.rec.agentSettled(true);
    const traces = of(h, ENTRY_TRACE);
    expect(traces.at(-1)).toMatchObject({ kind: "request_interrupted", reason: "aborted", ttftMs: null, elapsedMs: 500 });
    expect(of(h, ENTRY_RUN).at(-1)).toMatchObject({ state: "settled", aborted: true, effTps: null, unavailableReason: "pending" });
    expect(h.rec.view(h.clock.t)).toMatchObject({ effTps: 100, effQualifier: "last" });
  });

  it("a storage failure stops sampling, marks capture incomplete and is reported once", () => {
    const h = openRequest();
    h.failSaves.on = true;
    h.clock.t += 10;
    h.rec.delta("text", "ab");
    h.rec.tick(h.clock.t);
    h.rec.tick(h.clock.t + 250);
    expect(h.errors).toHaveLength(1);
    expect(h.rec.storageHealthy).toBe(false);
    h.failSaves.on = false;
    const r = finish(h, "stop", 3);
    expect(r.samplesComplete).toBe(false);
    expect(r.sampleCount).toBe(0);
  });

  it("parallel tools count their union of wall time, and reused ids are scoped to their request", () => {
    const h = openRequest();
    h.clock.t += 10;
    h.rec.delta("toolArgs", "{}");
    h.clock.t += 10;
    h.rec.responseEnd({ stopReason: "toolUse" });
    h.rec.toolStart("a", "bash", null);
    h.clock.t += 100;
    h.rec.toolStart("b", "bash", null);
    h.clock.t += 100;
    h.rec.toolEnd("a", false);
    h.clock.t += 100;
    h.rec.toolEnd("b", true);
    h.rec.turnEnd({ message: finalMessage("toolUse", 3), messageEntryId: "m", toolResultEntryIds: [] });
    h.rec.requestStart(meta);
    h.rec.toolStart("a", "bash", null); // same provider id in a later request
    h.clock.t += 50;
    h.rec.toolEnd("a", false);
    h.rec.agentSettled(false);
    const final = of(h, ENTRY_RUN).at(-1) as RunRecord;
    expect(final.toolCount).toBe(3);
    expect(final.toolWallMs).toBe(350);
    expect(final.tools?.map((t) => t.status)).toEqual(["finished", "error", "finished"]);
  });
});

describe("history", () => {
  it("rebuilds the retained estimate from finalized records only, never from provisional checkpoints", () => {
    const h = harness();
    settledActivity(h, 100, 1000, 40);
    openRequest(h);
    h.clock.t += 10;
    h.rec.delta("text", "aa");
    h.clock.t += 100;
    h.rec.responseEnd({ stopReason: "stop", usage: usage(999) }); // checkpoint only, no turn_end
    const hist = readHistory(h.entries);
    expect(hist.retained?.tps).toBe(40);
    expect(hist.requests).toHaveLength(1);
    expect(hist.runs.map((r) => r.state)).toEqual(["settled", "interrupted"]);
  });

  it("uses the eligible prefix of a later-incomplete activity", () => {
    const h = harness();
    settledActivity(h, 100, 1000, 40);
    h.rec.agentStart();
    request(h, 100, 1000, 70, "toolUse");
    request(h, 100, 1000, 10, "error");
    expect(readHistory(h.entries).retained?.tps).toBe(70);
  });

  it("a branch that lacks a later request record restores the earlier estimate", () => {
    const h = harness();
    settledActivity(h, 100, 1000, 40);
    const cut = h.entries.length;
    settledActivity(h, 100, 1000, 90);
    expect(readHistory(h.entries).retained?.tps).toBe(90);
    expect(readHistory(h.entries.slice(0, cut)).retained?.tps).toBe(40);
  });

  it("reads older records: rates recomputed from streamMs, never a cached rate or full response time", () => {
    const legacy = [
      { type: "custom", id: "a", customType: ENTRY_REQUEST, data: { schema: 2, kind: "request", requestId: "r1", runId: "x", requestIndex: 0, stopReason: "stop", usage: usage(100), responseMs: 25_000, outputTps: 4 } },
      { type: "custom", id: "b", customType: "orbit.pi-metrics", data: { schema: 1, requestId: "r0", stopReason: "stop", outputTokens: 100, streamMs: 2000 } },
    ];
    const hist = readHistory(legacy);
    expect(hist.requests.map((r) => r.schema)).toEqual([2, 1]);
    expect(hist.requests[0]?.streamMs).toBeNull();
    expect(hist.retained?.tps).toBe(50); // only the schema 1 record has a stream span
  });

  it("never duplicates a request written twice", () => {
    const h = harness();
    h.rec.agentStart();
    request(h, 100, 1000, 40);
    const dup = h.entries.find((e) => e.customType === ENTRY_REQUEST);
    expect(readHistory([...h.entries, dup as never]).requests).toHaveLength(1);
  });
});

describe("request boundaries", () => {
  it("a retried request without turn_end is interrupted when the next starts, and keeps the activity unavailable", () => {
    const h = openRequest();
    h.clock.t += 100;
    h.rec.responseEnd({ stopReason: "error" }); // Pi retries: no turn_end for this attempt
    h.rec.requestStart(meta);
    expect(of(h, ENTRY_TRACE).filter((t) => t.kind === "request_interrupted").map((t) => t.reason)).toEqual(["no_turn_end"]);
    h.clock.t += 50;
    h.rec.delta("text", "ok");
    h.clock.t += 500;
    const r = finish(h, "stop", 50);
    expect(r.requestIndex).toBe(1);
    expect(r.outputTps).toBe(100);
    h.rec.agentSettled(false);
    expect(of(h, ENTRY_RUN).at(-1)).toMatchObject({ requestCount: 2, finalizedRequests: 1, coveredRequests: 1, effTps: null, unavailableReason: "pending" });
  });

  it("a request seen without agent_start is recorded as partial: its activity TTFT is unknown", () => {
    const h = harness();
    h.rec.requestStart(meta);
    h.clock.t += 30;
    h.rec.delta("text", "late");
    h.clock.t += 300;
    finish(h, "stop", 30);
    expect(h.rec.view(h.clock.t)).toMatchObject({ activityPartial: true, activityTtftMs: null });
    h.rec.agentSettled(false);
    expect(of(h, ENTRY_RUN).at(-1)).toMatchObject({ partial: true, ttftMs: null, effTps: null });
  });
});
