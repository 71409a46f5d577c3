/**
 * Rebuilds what the recorder needs from session entries: on the active branch, the finalized request
 * records, activity summaries and the retained EFF TPS estimate. Provisional checkpoints are never
 * promoted; rates are always recomputed from stored stream durations, never from a cached rate or a full
 * request time (older schema 2 records used that basis). Pure.
 */
import { ENTRY_LEGACY_V1, ENTRY_REQUEST, ENTRY_RUN, ENTRY_TRACE } from "./constants.ts";
import type { Retained } from "./live-view.ts";
import type { Sample } from "./records.ts";
import { coveredAggregate, eligiblePrefix, isCount, type Aggregate, type ThroughputInput } from "./throughput.ts";
import { copyUsage, type UsageCopy } from "./usage.ts";

type EntryLike = { type: string; customType?: string; data?: unknown; [k: string]: unknown };

/** A request measurement read from any schema this extension has written. */
export interface StoredRequest {
  schema: 1 | 2;
  requestId: string;
  runId: string | null;
  requestIndex: number;
  ttftMs: number | null;
  responseMs: number | null;
  streamMs: number | null;
  stopReason: string | null;
  usage: UsageCopy | null;
  outputTokens: number | null;
  reasoningTokens: number | null;
  provider: string | null;
  model: string | null;
}

export interface StoredRun {
  runId: string;
  state: "running" | "settled" | "interrupted";
  /** A run whose last record is not final lost its boundary: shown as interrupted, never as final. */
  incomplete: boolean;
  ttftMs: number | null;
  elapsedMs: number | null;
  aborted: boolean;
}

export interface History {
  requests: StoredRequest[];
  runs: StoredRun[];
  retained: Retained | null;
  lastUsage: UsageCopy | null;
}

const numOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const strOrNull = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function readStoredRequest(customType: string | undefined, data: unknown, fallbackId: string): StoredRequest | null {
  if (customType !== ENTRY_REQUEST && customType !== ENTRY_LEGACY_V1) return null;
  if (typeof data !== "object" || data === null) return null;
  const d = data as Record<string, unknown>;
  const schema = d.schema === 2 ? 2 : d.schema === 1 || customType === ENTRY_LEGACY_V1 ? 1 : null;
  if (schema === null) return null;
  if (schema === 2 && d.kind !== undefined && d.kind !== "request") return null;
  const usage = copyUsage(d.usage);
  const output = usage !== null ? usage.output : numOrNull(d.outputTokens);
  const reasoning = usage !== null ? usage.reasoning : numOrNull(d.reasoningTokens);
  return {
    schema,
    requestId: strOrNull(d.requestId) ?? fallbackId,
    runId: strOrNull(d.runId),
    requestIndex: numOrNull(d.requestIndex) ?? 0,
    ttftMs: numOrNull(d.ttftMs),
    responseMs: numOrNull(d.responseMs),
    // Only a stored stream span is a valid divisor; old cached rates and full response times are ignored.
    streamMs: numOrNull(d.streamMs),
    stopReason: strOrNull(d.stopReason),
    usage,
    outputTokens: isCount(output) ? output : null,
    reasoningTokens: isCount(reasoning) ? reasoning : null,
    provider: strOrNull(d.provider),
    model: strOrNull(d.model),
  };
}

export function inputOf(r: StoredRequest): ThroughputInput {
  return { stopReason: r.stopReason, outputTokens: r.outputTokens, reasoningTokens: r.reasoningTokens, streamMs: r.streamMs };
}

/** Reads the active branch (root → leaf order). */
export function readHistory(branch: readonly EntryLike[]): History {
  const requests: StoredRequest[] = [];
  const seen = new Set<string>();
  const runs = new Map<string, StoredRun>();
  for (const e of branch) {
    if (e.type !== "custom") continue;
    const req = readStoredRequest(e.customType, e.data, String(e.id ?? requests.length));
    if (req !== null) {
      // Resume and navigation never duplicate a request, even if a record was written twice.
      if (!seen.has(req.requestId)) {
        seen.add(req.requestId);
        requests.push(req);
      }
      continue;
    }
    if (e.customType === ENTRY_RUN && typeof e.data === "object" && e.data !== null) {
      const d = e.data as Record<string, unknown>;
      const runId = strOrNull(d.runId);
      if (runId === null) continue;
      const state = d.state === "settled" || d.state === "interrupted" ? d.state : "running";
      runs.set(runId, {
        runId,
        state: d.phase === "final" ? state : "running",
        incomplete: d.phase !== "final",
        ttftMs: numOrNull(d.ttftMs),
        elapsedMs: numOrNull(d.elapsedMs),
        aborted: d.aborted === true,
      });
    }
  }
  // A run that never wrote its final summary is shown as interrupted (restored history cannot still run).
  const runList = [...runs.values()].map((r) => (r.incomplete ? { ...r, state: "interrupted" as const } : r));
  return { requests, runs: runList, retained: retainedFrom(requests), lastUsage: requests.at(-1)?.usage ?? null };
}

/** Latest activity with an eligible finalized prefix supplies the retained estimate. */
export function retainedFrom(requests: readonly StoredRequest[]): Retained | null {
  const order: string[] = [];
  const byRun = new Map<string, StoredRequest[]>();
  for (const r of requests) {
    const key = r.runId ?? `request:${r.requestId}`;
    if (!byRun.has(key)) {
      byRun.set(key, []);
      order.push(key);
    }
    byRun.get(key)?.push(r);
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const key = order[i] as string;
    const list = [...(byRun.get(key) ?? [])].sort((x, y) => x.requestIndex - y.requestIndex);
    const agg = eligiblePrefix(list.map(inputOf));
    if (agg.tps !== null) return { tps: agg.tps, runId: key };
  }
  return null;
}

export function branchAggregate(requests: readonly StoredRequest[]): Aggregate {
  return coveredAggregate(requests.map(inputOf));
}

export function mean(values: readonly (number | null)[]): { mean: number | null; count: number } {
  const xs = values.filter((v): v is number => v !== null);
  return { mean: xs.length > 0 ? xs.reduce((s, v) => s + v, 0) / xs.length : null, count: xs.length };
}
