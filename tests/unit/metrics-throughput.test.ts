import { describe, expect, it } from "vitest";
import {
  activityThroughput,
  coveredAggregate,
  eligiblePrefix,
  requestEligibility,
  streamSpan,
  type ThroughputInput,
} from "../../host/metrics/throughput.ts";

/** A request's own EFF TPS, as its eligibility gives it (null when it has none). */
const requestEffTps = (r: ThroughputInput): number | null => {
  const e = requestEligibility(r);
  return e.eligible ? e.tps : null;
};

const req = (over: Partial<ThroughputInput> = {}): ThroughputInput => ({ stopReason: "stop", outputTokens: 200, reasoningTokens: null, streamMs: 5000, ...over });

describe("EFF TPS: request", () => {
  it("20 s wait + 200 tokens over a 5 s stream is 40 tok/s, not 8", () => {
    const requestStart = 1000;
    const firstToken = requestStart + 20_000;
    const completion = firstToken + 5_000;
    const streamMs = streamSpan(firstToken, completion);
    expect(streamMs).toBe(5000);
    expect(requestEffTps(req({ streamMs }))).toBe(40);
  });

  it("does not change when only the initial wait grows", () => {
    for (const wait of [0, 1000, 20_000, 600_000]) {
      expect(requestEffTps(req({ streamMs: streamSpan(wait, wait + 5000) }))).toBe(40);
    }
  });

  it("1,200 reported tokens including 1,000 hidden reasoning over 5 s is 240 tok/s (reasoning is not added again)", () => {
    expect(requestEffTps(req({ outputTokens: 1200, reasoningTokens: 1000 }))).toBe(240);
  });

  it("accepts stop, length and toolUse", () => {
    for (const stopReason of ["stop", "length", "toolUse"]) expect(requestEligibility(req({ stopReason })).eligible).toBe(true);
  });

  it.each([
    ["error", "error"],
    ["aborted", "aborted"],
    ["deferred", "deferred"],
    ["pending", "pending"],
    ["weird", "unknown_stop"],
  ])("stop reason %s is ineligible (%s)", (stopReason, reason) => {
    expect(requestEligibility(req({ stopReason }))).toEqual({ eligible: false, reason });
  });

  it("an open response (null stop) is pending", () => {
    expect(requestEligibility(req({ stopReason: null }))).toEqual({ eligible: false, reason: "pending" });
  });

  it("zero output is treated as unknown, never as a rate", () => {
    expect(requestEligibility(req({ outputTokens: 0 }))).toEqual({ eligible: false, reason: "zero_output" });
  });

  it("unknown or invalid output is ineligible", () => {
    expect(requestEligibility(req({ outputTokens: null })).eligible).toBe(false);
    expect(requestEligibility(req({ outputTokens: 1.5 })).eligible).toBe(false);
    expect(requestEligibility(req({ outputTokens: -3 })).eligible).toBe(false);
  });

  it("reasoning larger than output is inconsistent", () => {
    expect(requestEligibility(req({ outputTokens: 100, reasoningTokens: 101 }))).toEqual({ eligible: false, reason: "inconsistent_reasoning" });
  });

  it("a usage-only response with no observed delta has no rate and no fallback to full request time", () => {
    expect(streamSpan(null, 9000)).toBeNull();
    expect(requestEligibility(req({ streamMs: null }))).toEqual({ eligible: false, reason: "no_observed_token" });
  });

  it("a zero-length stream is ineligible", () => {
    expect(requestEligibility(req({ streamMs: 0 }))).toEqual({ eligible: false, reason: "zero_stream" });
  });

  it("a single buffered chunk still has a rate when completion is later than its arrival", () => {
    expect(requestEffTps(req({ outputTokens: 50, streamMs: 500 }))).toBe(100);
  });
});

describe("EFF TPS: activity and aggregates", () => {
  it("activity rate is Σ output / Σ stream seconds, not a mean of rates", () => {
    const a = activityThroughput([req({ outputTokens: 200, streamMs: 5000 }), req({ outputTokens: 100, streamMs: 1000 })]);
    expect(a).toMatchObject({ available: true, outputTokens: 300, streamMs: 6000, covered: 2 });
    if (a.available) expect(a.tps).toBe(50); // the mean of 40 and 100 would be 70
  });

  it("one pending or ineligible request makes the activity unavailable", () => {
    expect(activityThroughput([req(), req({ stopReason: null })])).toMatchObject({ available: false, reason: "pending", covered: 1, recorded: 2 });
    expect(activityThroughput([req(), req({ stopReason: "error" })])).toMatchObject({ available: false, reason: "error" });
    expect(activityThroughput([])).toMatchObject({ available: false, reason: "no_requests" });
  });

  it("/metrics aggregate is stream-weighted with covered/recorded counts", () => {
    const agg = coveredAggregate([req({ outputTokens: 200, streamMs: 5000 }), req({ stopReason: "aborted" }), req({ outputTokens: 100, streamMs: 1000 })]);
    expect(agg).toEqual({ tps: 50, outputTokens: 300, streamMs: 6000, covered: 2, recorded: 3 });
    expect(coveredAggregate([req({ stopReason: "error" })]).tps).toBeNull();
  });

  it("eligible prefix stops at the first ineligible request", () => {
    const p = eligiblePrefix([req({ outputTokens: 100, streamMs: 1000 }), req({ stopReason: "error" }), req({ outputTokens: 900, streamMs: 1000 })]);
    expect(p).toMatchObject({ tps: 100, covered: 1, recorded: 3 });
  });
});
