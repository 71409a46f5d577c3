/**
 * Effective throughput (EFF TPS): reported output tokens divided by the observed stream time, from the
 * first observed non-empty delta to response completion. The wait before the first token is excluded
 * for every request, so a slow first token never changes the rate. Pure arithmetic, no clocks.
 */

/** Why a request cannot supply an effective rate. */
export type IneligibleReason =
  | "pending"
  | "error"
  | "aborted"
  | "deferred"
  | "unknown_stop"
  | "no_observed_token"
  | "zero_stream"
  | "unknown_output"
  | "zero_output"
  | "inconsistent_reasoning";

export interface ThroughputInput {
  /** Pi's stop reason, or null while the response has not completed. */
  readonly stopReason: string | null;
  readonly outputTokens: number | null;
  readonly reasoningTokens: number | null;
  /** First observed token → completion, in ms; null when no token was observed or the response is open. */
  readonly streamMs: number | null;
}

export type Eligibility =
  | { readonly eligible: true; readonly outputTokens: number; readonly streamMs: number; readonly tps: number }
  | { readonly eligible: false; readonly reason: IneligibleReason };

const ELIGIBLE_STOPS = new Set(["stop", "length", "toolUse"]);

/** Stream span from the first observed token to completion; unknown unless both ends are known. */
export function streamSpan(firstObservedMono: number | null, completedMono: number | null): number | null {
  if (firstObservedMono === null || completedMono === null) return null;
  return completedMono - firstObservedMono;
}

export function isCount(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
}

export function requestEligibility(r: ThroughputInput): Eligibility {
  if (r.stopReason === null || r.stopReason === "pending") return { eligible: false, reason: "pending" };
  if (r.stopReason === "error" || r.stopReason === "aborted" || r.stopReason === "deferred") {
    return { eligible: false, reason: r.stopReason };
  }
  if (!ELIGIBLE_STOPS.has(r.stopReason)) return { eligible: false, reason: "unknown_stop" };
  if (!isCount(r.outputTokens)) return { eligible: false, reason: "unknown_output" };
  // Pi also uses zero for "not reported", so zero output is treated as unknown, not as an infinitely slow stream.
  if (r.outputTokens === 0) return { eligible: false, reason: "zero_output" };
  if (r.reasoningTokens !== null && (!isCount(r.reasoningTokens) || r.reasoningTokens > r.outputTokens)) {
    return { eligible: false, reason: "inconsistent_reasoning" };
  }
  if (r.streamMs === null || !Number.isFinite(r.streamMs)) return { eligible: false, reason: "no_observed_token" };
  if (r.streamMs <= 0) return { eligible: false, reason: "zero_stream" };
  return { eligible: true, outputTokens: r.outputTokens, streamMs: r.streamMs, tps: r.outputTokens / (r.streamMs / 1000) };
}

export interface Aggregate {
  /** Σ output / Σ stream seconds over covered requests, or null when nothing is covered. */
  readonly tps: number | null;
  readonly outputTokens: number;
  readonly streamMs: number;
  readonly covered: number;
  readonly recorded: number;
}

/**
 * A stream-duration-weighted rate over the eligible requests, with an explicit covered/recorded count.
 * Ineligible requests are counted as recorded and left out; used by /metrics, never an unweighted mean.
 */
export function coveredAggregate(requests: readonly ThroughputInput[]): Aggregate {
  let outputTokens = 0;
  let streamMs = 0;
  let covered = 0;
  for (const r of requests) {
    const e = requestEligibility(r);
    if (!e.eligible) continue;
    outputTokens += e.outputTokens;
    streamMs += e.streamMs;
    covered++;
  }
  return { tps: covered > 0 ? outputTokens / (streamMs / 1000) : null, outputTokens, streamMs, covered, recorded: requests.length };
}

export type ActivityThroughput =
  | { readonly available: true; readonly tps: number; readonly outputTokens: number; readonly streamMs: number; readonly covered: number }
  | { readonly available: false; readonly reason: IneligibleReason | "no_requests"; readonly covered: number; readonly recorded: number };

/**
 * Activity EFF TPS: strict. One pending or ineligible request makes the whole activity unavailable, so a
 * failure is never silently dropped from its coverage.
 */
export function activityThroughput(requests: readonly ThroughputInput[]): ActivityThroughput {
  if (requests.length === 0) return { available: false, reason: "no_requests", covered: 0, recorded: 0 };
  let outputTokens = 0;
  let streamMs = 0;
  let covered = 0;
  for (const r of requests) {
    const e = requestEligibility(r);
    if (!e.eligible) return { available: false, reason: e.reason, covered, recorded: requests.length };
    outputTokens += e.outputTokens;
    streamMs += e.streamMs;
    covered++;
  }
  return { available: true, tps: outputTokens / (streamMs / 1000), outputTokens, streamMs, covered };
}

/**
 * The longest eligible prefix of an activity's finalized requests, in request order. Reload and branch
 * navigation rebuild the retained estimate from it, so an activity whose later request failed still
 * contributes its completed eligible start.
 */
export function eligiblePrefix(requests: readonly ThroughputInput[]): Aggregate {
  const prefix: ThroughputInput[] = [];
  for (const r of requests) {
    if (!requestEligibility(r).eligible) break;
    prefix.push(r);
  }
  return { ...coveredAggregate(prefix), recorded: requests.length };
}
