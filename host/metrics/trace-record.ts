/**
 * The trace entries of an activity (request boundaries, first observations, tools, sample chunks), shaped from its
 * state, pure: each carries the run and request it belongs to and when it happened, on both clocks.
 */
import type { Activity, OpenRequest } from "./activity-state.ts";
import { observedChars } from "./activity-state.ts";
import { SCHEMA } from "./constants.ts";
import { obsRate } from "./obs-rate.ts";
import type { Sample, TraceRecord } from "./records.ts";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A trace entry without what every entry carries. */
export type TraceEvent = DistributiveOmit<TraceRecord, "schema" | "runId" | "requestId" | "at" | "atMs">;

/** The entry for `event` of `a` (and of request `r`, if it concerns one), at wall time `at` and monotonic `nowMono`. */
export function traceRecord(a: Activity, r: OpenRequest | null, at: string, nowMono: number, event: TraceEvent): TraceRecord {
  return { schema: SCHEMA, runId: a.runId, requestId: r?.requestId ?? null, at, atMs: nowMono - a.startMono, ...event } as TraceRecord;
}

/** The sample a sampler tick at `nowMono` takes of a streaming request. */
export function sampleAt(r: OpenRequest, nowMono: number): Sample {
  return { i: r.sampleCount, tMs: nowMono - r.startMono, obsTps: obsRate(r.obs, nowMono), chars: observedChars(r.observed) };
}

/** The entry that persists a request's pending samples as its next chunk; call it only with samples pending. */
export function samplesRecord(a: Activity, r: OpenRequest, at: string, nowMono: number): TraceRecord {
  const samples = r.pending;
  const first = samples[0] as Sample;
  return {
    schema: SCHEMA,
    kind: "samples",
    runId: a.runId,
    requestId: r.requestId,
    at,
    atMs: nowMono - a.startMono,
    chunkIndex: r.chunks,
    firstSampleIndex: first.i,
    sampleCount: samples.length,
    samples,
  };
}
