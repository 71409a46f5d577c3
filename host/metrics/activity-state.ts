/**
 * An activity (one agent run, from agent_start to its settlement) with its requests and tools, as the recorder
 * tracks it, pure: the state's shapes, which request a stream event belongs to, and what a delta or a tool's end
 * changes in it. The recorder (recorder.ts) supplies the clocks and ids and persists what these describe.
 */
import { createObsWindow, type ObsWindow } from "./obs-rate.ts";
import type { ContextSnapshot, DeltaKind, ObservedCounts, RequestRecord, RunState, Sample, ToolRecord } from "./records.ts";

export interface RequestMeta {
  provider: string | null;
  model: string | null;
  thinkingLevel: string | null;
}

/** Monotonic time of the first non-empty delta of each kind, null until one came. */
export type Firsts = Record<DeltaKind, number | null>;

export interface OpenRequest {
  requestId: string;
  index: number;
  startMono: number;
  startIso: string;
  meta: RequestMeta;
  firstObs: number | null;
  first: Firsts;
  completedMono: number | null;
  completedIso: string | null;
  stopReason: string | null;
  observed: ObservedCounts;
  obs: ObsWindow;
  /** Samples not persisted yet: the next chunk, or the request record's inline fallback. */
  pending: Sample[];
  sampleCount: number;
  chunks: number;
  contextStart: ContextSnapshot | null;
  /** The finalized record, once turn_end has been saved. */
  record: RequestRecord | null;
  interrupted: boolean;
}

/** A tool call with its monotonic interval, which only the wall-time union needs. */
export type OpenTool = ToolRecord & { startMono: number; endMono: number | null };

export interface Activity {
  runId: string;
  startMono: number;
  startIso: string;
  /** The recorder attached after the activity had started: its start, and so its TTFT, is unknown. */
  partial: boolean;
  firstObs: number | null;
  first: Firsts;
  requests: OpenRequest[];
  /** Keyed by issuing request and tool call id: providers may reuse ids across requests. */
  tools: Map<string, OpenTool>;
  continuations: number;
  state: RunState;
  aborted: boolean;
  endMono: number | null;
  endIso: string | null;
  contextStart: ContextSnapshot | null;
}

const noFirsts = (): Firsts => ({ thinking: null, text: null, toolArgs: null });

export function newActivity(start: { runId: string; mono: number; iso: string; partial: boolean; context: ContextSnapshot | null }): Activity {
  return {
    runId: start.runId,
    startMono: start.mono,
    startIso: start.iso,
    partial: start.partial,
    firstObs: null,
    first: noFirsts(),
    requests: [],
    tools: new Map(),
    continuations: 0,
    state: "running",
    aborted: false,
    endMono: null,
    endIso: null,
    contextStart: start.context,
  };
}

export function newRequest(start: {
  mono: number;
  requestId: string;
  index: number;
  iso: string;
  meta: RequestMeta;
  context: ContextSnapshot | null;
}): OpenRequest {
  return {
    requestId: start.requestId,
    index: start.index,
    startMono: start.mono,
    startIso: start.iso,
    meta: start.meta,
    firstObs: null,
    first: noFirsts(),
    completedMono: null,
    completedIso: null,
    stopReason: null,
    observed: { textChars: 0, thinkingChars: 0, toolArgsChars: 0, textDeltas: 0, thinkingDeltas: 0, toolArgsDeltas: 0, approxTokens: 0 },
    obs: createObsWindow(start.mono),
    pending: [],
    sampleCount: 0,
    chunks: 0,
    contextStart: start.context,
    record: null,
    interrupted: false,
  };
}

/** The request whose response is still streaming (started, not completed, not interrupted). */
export function streamingRequest(a: Activity | null): OpenRequest | null {
  const last = a?.requests.at(-1);
  return last && last.completedMono === null && !last.interrupted ? last : null;
}

/** The request that completed but has not been finalized by turn_end yet. */
export function unfinalizedRequest(a: Activity | null): OpenRequest | null {
  const last = a?.requests.at(-1);
  return last && last.completedMono !== null && last.record === null && !last.interrupted ? last : null;
}

/**
 * A non-empty delta of `chars` code points arrived at `now`: counts it and fixes the first observations it is the
 * first of. True when it is the request's first observation, its TTFT.
 */
export function observeDelta(a: Activity, r: OpenRequest, kind: DeltaKind, chars: number, now: number): boolean {
  const c = r.observed;
  if (kind === "text") (c.textChars += chars), c.textDeltas++;
  else if (kind === "thinking") (c.thinkingChars += chars), c.thinkingDeltas++;
  else (c.toolArgsChars += chars), c.toolArgsDeltas++;
  c.approxTokens = observedChars(c) / 4;
  if (r.first[kind] === null) r.first[kind] = now;
  if (a.first[kind] === null) a.first[kind] = now;
  if (a.firstObs === null) a.firstObs = now;
  if (r.firstObs !== null) return false;
  r.firstObs = now;
  return true;
}

/** Code points of every kind the request has exposed so far. */
export function observedChars(c: ObservedCounts): number {
  return c.textChars + c.thinkingChars + c.toolArgsChars;
}

/** Opens a tool call at `now`, on behalf of `owner`, the request that issued it (null: none is known). */
export function openTool(
  a: Activity,
  owner: OpenRequest | null,
  call: { toolCallId: string; toolName: string; parentToolCallId: string | null },
  now: number,
): void {
  a.tools.set(`${owner?.requestId ?? "-"}/${call.toolCallId}`, {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    parentToolCallId: call.parentToolCallId,
    requestId: owner?.requestId ?? null,
    startMs: now - a.startMono,
    endMs: null,
    elapsedMs: null,
    status: "running",
    startMono: now,
    endMono: null,
  });
}

/** The latest call of `toolCallId` still running, if any. */
export function runningTool(a: Activity, toolCallId: string): OpenTool | undefined {
  return [...a.tools.values()].reverse().find((t) => t.toolCallId === toolCallId && t.status === "running");
}

export function closeTool(a: Activity, t: OpenTool, status: ToolRecord["status"], now: number): void {
  t.endMono = now;
  t.endMs = now - a.startMono;
  t.elapsedMs = now - t.startMono;
  t.status = status;
}
