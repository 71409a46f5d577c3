/**
 * The arithmetic of an activity's figures, pure: what each request contributes to the activity's throughput and
 * how much of the activity the eligible requests cover. The recorder keeps the state; these only compute.
 */
import type { RequestRecord } from "./records.ts";
import { requestEligibility, type ThroughputInput } from "./throughput.ts";
import { outputCounts } from "./usage.ts";

/** `t` relative to `base`, or null when `t` is unknown. */
export function rel(t: number | null, base: number): number | null {
  return t === null ? null : t - base;
}

export function throughputInputOf(r: RequestRecord): ThroughputInput {
  const { output, reasoning } = outputCounts(r.usage);
  return { stopReason: r.stopReason, outputTokens: output, reasoningTokens: reasoning, streamMs: r.streamMs };
}

/** Throughput inputs of an activity's requests, in order; one that never finalized counts as pending/ineligible, so coverage never hides it. */
export function activityInputs(requests: readonly { record: RequestRecord | null }[]): ThroughputInput[] {
  return requests.map((q) =>
    q.record !== null ? throughputInputOf(q.record) : { stopReason: null, outputTokens: null, reasoningTokens: null, streamMs: null },
  );
}

export interface Coverage {
  /** Finalized requests whose throughput is eligible. */
  covered: number;
  outputTokens: number;
  coveredStreamMs: number;
  /** Response time of every finalized request. */
  measured: number;
  /** Response time of the eligible ones. */
  coveredReq: number;
}

export function coverageOf(finalized: readonly RequestRecord[]): Coverage {
  const coverage: Coverage = { covered: 0, outputTokens: 0, coveredStreamMs: 0, measured: 0, coveredReq: 0 };
  for (const r of finalized) {
    coverage.measured += r.responseMs ?? 0;
    const e = requestEligibility(throughputInputOf(r));
    if (!e.eligible) continue;
    coverage.covered++;
    coverage.outputTokens += e.outputTokens;
    coverage.coveredStreamMs += e.streamMs;
    coverage.coveredReq += r.responseMs ?? 0;
  }
  return coverage;
}
