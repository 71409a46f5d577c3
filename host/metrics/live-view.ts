/**
 * What the footer and /metrics show of the recorder's state at one instant, pure: the activity's figures, the
 * effective rate with how far it can be trusted, and the live observed rate.
 */
import { streamingRequest, type Activity } from "./activity-state.ts";
import { obsRate } from "./obs-rate.ts";
import type { RunState } from "./records.ts";
import { activityInputs, rel, throughputInputOf } from "./run-figures.ts";
import { activityThroughput, eligiblePrefix } from "./throughput.ts";
import type { UsageCopy } from "./usage.ts";

/** The retained display estimate: the latest valid authoritative activity EFF TPS. */
export interface Retained {
  tps: number;
  runId: string;
}

export type EffQualifier = "final" | "so_far" | "last" | "pending" | "none";

const EFF_QUALIFIER_TEXT: Readonly<Record<EffQualifier, string>> = { final: "", so_far: "so far", last: "last", pending: "pending", none: "" };

/** The words beside EFF TPS that say how far it can be trusted; none for a final rate. */
export function effQualifierText(q: EffQualifier): string {
  return EFF_QUALIFIER_TEXT[q];
}

export interface LiveView {
  activityState: "idle" | RunState;
  activityPartial: boolean;
  activityTtftMs: number | null;
  /** ms since activity start while it runs; its final elapsed after settlement. */
  activityElapsedMs: number | null;
  requestOpen: boolean;
  requestCount: number;
  effTps: number | null;
  effQualifier: EffQualifier;
  /** Positive live OBS TPS only; null hides it. */
  obsTps: number | null;
  toolsRunning: number;
  lastStopReason: string | null;
  lastUsage: UsageCopy | null;
  storageFailed: boolean;
}

/** The recorder's state a view is drawn from. */
export interface ViewedState {
  activity: Activity | null;
  retained: Retained | null;
  lastStopReason: string | null;
  lastUsage: UsageCopy | null;
  storageFailed: boolean;
}

/**
 * The estimate an activity leaves once a request of it is finalized: its EFF TPS over the finalized requests, when
 * all of them are eligible (an authoritative estimate); null when it leaves none and the retained one stands.
 */
export function retainedAfter(a: Activity): Retained | null {
  const finalized = a.requests.filter((q) => q.record !== null).map((q) => throughputInputOf(q.record!));
  const prefix = eligiblePrefix(finalized);
  return prefix.tps !== null && prefix.covered === finalized.length ? { tps: prefix.tps, runId: a.runId } : null;
}

/**
 * The effective rate to show: the activity's own while every request of it is eligible (so far while it runs), else
 * the retained estimate of an earlier activity, else nothing (pending while an activity runs).
 */
export function effectiveRate(a: Activity | null, retained: Retained | null): { effTps: number | null; effQualifier: EffQualifier } {
  if (a !== null) {
    const act = activityThroughput(activityInputs(a.requests));
    if (act.available && !a.partial) return { effTps: act.tps, effQualifier: a.state === "running" ? "so_far" : "final" };
  }
  if (retained !== null) return { effTps: retained.tps, effQualifier: "last" };
  return { effTps: null, effQualifier: a !== null && a.state === "running" ? "pending" : "none" };
}

export function liveView(s: ViewedState, nowMono: number): LiveView {
  const a = s.activity;
  const r = streamingRequest(a);
  const rate = r === null ? null : obsRate(r.obs, nowMono);
  return {
    activityState: a === null ? "idle" : a.state,
    activityPartial: a?.partial ?? false,
    activityTtftMs: a === null || a.partial ? null : rel(a.firstObs, a.startMono),
    activityElapsedMs: a === null ? null : (a.endMono ?? nowMono) - a.startMono,
    requestOpen: r !== null,
    requestCount: a?.requests.length ?? 0,
    ...effectiveRate(a, s.retained),
    obsTps: rate !== null && rate > 0 ? rate : null,
    toolsRunning: a === null ? 0 : [...a.tools.values()].filter((t) => t.status === "running").length,
    lastStopReason: s.lastStopReason,
    lastUsage: s.lastUsage,
    storageFailed: s.storageFailed,
  };
}
