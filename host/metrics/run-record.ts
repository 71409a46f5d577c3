/**
 * The record of an activity at one of its phases (start, progress after each finalized request, final), shaped
 * from the activity's state, pure. The readings it needs are passed in as functions and taken only for the phases
 * whose record carries them.
 */
import type { Activity } from "./activity-state.ts";
import { SCHEMA, THROUGHPUT_BASIS } from "./constants.ts";
import type { ContextSnapshot, RequestRecord, RunRecord } from "./records.ts";
import { activityInputs, coverageOf, rel } from "./run-figures.ts";
import { activityThroughput } from "./throughput.ts";
import { unionMs, type NativeTotals } from "./usage.ts";

export interface RunReadings {
  mono(): number;
  context(): ContextSnapshot | null;
  sessionUsage(): NativeTotals | null;
}

export function runRecord(a: Activity, phase: RunRecord["phase"], readings: RunReadings, samplingComplete: boolean): RunRecord {
  const finalized = a.requests.filter((q) => q.record !== null).map((q) => q.record as RequestRecord);
  const act = activityThroughput(activityInputs(a.requests));
  const { covered, outputTokens, coveredStreamMs, measured, coveredReq } = coverageOf(finalized);
  // A progress record is written after every request: the growing id and tool lists are left out of it.
  const full = phase !== "progress";
  const tools = [...a.tools.values()];
  const end = a.endMono ?? readings.mono();
  return {
    schema: SCHEMA,
    kind: "run",
    runId: a.runId,
    phase,
    state: a.state,
    aborted: a.aborted,
    partial: a.partial,
    startedAt: a.startIso,
    endedAt: a.endIso,
    elapsedMs: a.endMono === null ? null : a.endMono - a.startMono,
    ttftMs: a.partial ? null : rel(a.firstObs, a.startMono),
    firstThinkingMs: a.partial ? null : rel(a.first.thinking, a.startMono),
    firstTextMs: a.partial ? null : rel(a.first.text, a.startMono),
    firstToolArgsMs: a.partial ? null : rel(a.first.toolArgs, a.startMono),
    requestCount: a.requests.length,
    finalizedRequests: finalized.length,
    coveredRequests: covered,
    outputTokens,
    coveredStreamMs,
    effTps: act.available && !a.partial ? act.tps : null,
    unavailableReason: act.available ? null : act.reason,
    throughputBasis: THROUGHPUT_BASIS,
    measuredRequestMs: measured,
    coveredRequestMs: coveredReq,
    toolCount: tools.length,
    // Tools still running count up to now.
    toolWallMs: unionMs(tools.map((t) => ({ start: t.startMono, end: t.endMono ?? end }))),
    continuations: a.continuations,
    listsComplete: full,
    requestIds: full ? a.requests.map((q) => q.requestId) : null,
    tools: full ? tools.map(({ startMono: _s, endMono: _e, ...t }) => t) : null,
    samplingComplete,
    contextStart: a.contextStart,
    contextEnd: phase === "start" ? null : readings.context(),
    sessionUsage: phase === "final" ? readings.sessionUsage() : null,
  };
}
