/**
 * The parent recorder: turns Pi's lifecycle (agent_start, context_with_system, deltas, message_end,
 * turn_end, tools, agent_settled) into activity and request measurements and persisted entries. It holds
 * no Pi objects, timers or I/O: the caller supplies a monotonic clock, a wall clock and a sink, so the
 * whole lifecycle is tested with a fake clock.
 */
import { ENTRY_REQUEST, ENTRY_RUN, ENTRY_TRACE, SAMPLE_CHUNK, SCHEMA, THROUGHPUT_BASIS, TIMING_BASIS } from "./constants.ts";
import { addDelta, createObsWindow, obsRate, type ObsWindow } from "./obs-rate.ts";
import type {
  ContextSnapshot,
  DeltaKind,
  ObservedCounts,
  RequestRecord,
  RunRecord,
  RunState,
  Sample,
  ToolRecord,
  TraceRecord,
} from "./records.ts";
import { activityInputs, coverageOf, rel, throughputInputOf } from "./run-figures.ts";
import { activityThroughput, eligiblePrefix, requestEligibility, streamSpan } from "./throughput.ts";
import { copyUsage, outputCounts, reasoningBreakdown, unionMs, type NativeTotals, type UsageCopy } from "./usage.ts";

export interface RecorderDeps {
  mono(): number;
  iso(): string;
  newId(): string;
  /** Persists one custom entry; throws when the session cannot save it. */
  append(customType: string, data: unknown): void;
  context(): ContextSnapshot | null;
  sessionUsage(): NativeTotals | null;
  /** Told once when a save fails; sampling stops afterwards so unsaved samples cannot pile up. */
  onStorageError(error: unknown): void;
}

export interface RequestMeta {
  provider: string | null;
  model: string | null;
  thinkingLevel: string | null;
}

interface OpenRequest {
  requestId: string;
  index: number;
  startMono: number;
  startIso: string;
  meta: RequestMeta;
  firstObs: number | null;
  first: Record<DeltaKind, number | null>;
  completedMono: number | null;
  completedIso: string | null;
  stopReason: string | null;
  observed: ObservedCounts;
  obs: ObsWindow;
  pending: Sample[];
  sampleCount: number;
  chunks: number;
  contextStart: ContextSnapshot | null;
  record: RequestRecord | null;
  interrupted: boolean;
}

interface Activity {
  runId: string;
  startMono: number;
  startIso: string;
  partial: boolean;
  firstObs: number | null;
  first: Record<DeltaKind, number | null>;
  requests: OpenRequest[];
  tools: Map<string, ToolRecord & { startMono: number; endMono: number | null }>;
  continuations: number;
  state: RunState;
  aborted: boolean;
  endMono: number | null;
  endIso: string | null;
  contextStart: ContextSnapshot | null;
}

/** The retained display estimate: the latest valid authoritative activity EFF TPS. */
export interface Retained {
  tps: number;
  runId: string;
}

export type EffQualifier = "final" | "so_far" | "last" | "pending" | "none";

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

function noFirsts(): Record<DeltaKind, number | null> {
  return { thinking: null, text: null, toolArgs: null };
}

function noCounts(): ObservedCounts {
  return { textChars: 0, thinkingChars: 0, toolArgsChars: 0, textDeltas: 0, thinkingDeltas: 0, toolArgsDeltas: 0, approxTokens: 0 };
}

export class Recorder {
  private readonly deps: RecorderDeps;
  private activity: Activity | null = null;
  private retained: Retained | null;
  private storageFailed = false;
  private lastStopReason: string | null = null;
  private lastUsage: UsageCopy | null = null;

  constructor(deps: RecorderDeps, retained: Retained | null = null) {
    this.deps = deps;
    this.retained = retained;
  }

  get retainedEstimate(): Retained | null {
    return this.retained;
  }

  get storageHealthy(): boolean {
    return !this.storageFailed;
  }

  /** Replaces the retained estimate after restore or branch navigation; the current activity is dropped. */
  reset(retained: Retained | null, lastUsage: UsageCopy | null = null): void {
    this.activity = null;
    // A fresh session or branch gets a fresh chance to save; a still-broken store fails and reports again.
    this.storageFailed = false;
    this.retained = retained;
    this.lastUsage = lastUsage;
    this.lastStopReason = null;
  }

  private save(customType: string, data: unknown): boolean {
    try {
      this.deps.append(customType, data);
      return true;
    } catch (error) {
      if (!this.storageFailed) {
        this.storageFailed = true;
        this.deps.onStorageError(error);
      }
      return false;
    }
  }

  private trace(a: Activity, r: OpenRequest | null, body: Record<string, unknown>): void {
    const rec = { schema: SCHEMA, runId: a.runId, requestId: r?.requestId ?? null, at: this.deps.iso(), atMs: this.deps.mono() - a.startMono, ...body };
    this.save(ENTRY_TRACE, rec as TraceRecord);
  }

  // ---- activity boundaries -------------------------------------------------------------------------

  agentStart(): void {
    const a = this.activity;
    if (a !== null && a.state === "running") {
      // A continuation inside the same unsettled activity: the TTFT clock does not restart.
      a.continuations++;
      return;
    }
    this.activity = this.newActivity(false);
    this.save(ENTRY_RUN, this.runRecord(this.activity, "start"));
  }

  private newActivity(partial: boolean): Activity {
    return {
      runId: this.deps.newId(),
      startMono: this.deps.mono(),
      startIso: this.deps.iso(),
      partial,
      firstObs: null,
      first: noFirsts(),
      requests: [],
      tools: new Map(),
      continuations: 0,
      state: "running",
      aborted: false,
      endMono: null,
      endIso: null,
      contextStart: this.deps.context(),
    };
  }

  agentSettled(aborted: boolean): void {
    const a = this.activity;
    if (a === null || a.state !== "running") return;
    for (const r of a.requests) if (r.record === null && !r.interrupted) this.interruptRequest(a, r, aborted ? "aborted" : "no_turn_end");
    for (const t of a.tools.values()) if (t.status === "running") this.closeTool(a, t, "interrupted");
    a.state = "settled";
    a.aborted = aborted;
    a.endMono = this.deps.mono();
    a.endIso = this.deps.iso();
    this.save(ENTRY_RUN, this.runRecord(a, "final"));
  }

  /** Orderly shutdown or session replacement while an activity runs: close it as interrupted. */
  interrupt(reason: string): void {
    const a = this.activity;
    if (a === null || a.state !== "running") return;
    for (const r of a.requests) if (r.record === null && !r.interrupted) this.interruptRequest(a, r, reason);
    for (const t of a.tools.values()) if (t.status === "running") this.closeTool(a, t, "interrupted");
    a.state = "interrupted";
    a.endMono = this.deps.mono();
    a.endIso = this.deps.iso();
    this.save(ENTRY_RUN, this.runRecord(a, "final"));
  }

  // ---- requests ----------------------------------------------------------------------------------

  /** This extension's context_with_system handler ran: a provider request is about to start. */
  requestStart(meta: RequestMeta): void {
    let a = this.activity;
    if (a === null || a.state !== "running") {
      // Attached after the activity started (or a request outside agent_start): its start is unknown.
      a = this.activity = this.newActivity(true);
      this.save(ENTRY_RUN, this.runRecord(a, "start"));
    }
    // A previous request that never reached turn_end (a retried error, a lost boundary) is closed now, so
    // its samples are flushed and the gap is on record; it still counts against activity coverage.
    const prev = a.requests.at(-1);
    if (prev !== undefined && prev.record === null && !prev.interrupted) {
      this.interruptRequest(a, prev, prev.completedMono === null ? "superseded" : "no_turn_end");
    }
    const now = this.deps.mono();
    const r: OpenRequest = {
      requestId: this.deps.newId(),
      index: a.requests.length,
      startMono: now,
      startIso: this.deps.iso(),
      meta,
      firstObs: null,
      first: noFirsts(),
      completedMono: null,
      completedIso: null,
      stopReason: null,
      observed: noCounts(),
      obs: createObsWindow(now),
      pending: [],
      sampleCount: 0,
      chunks: 0,
      contextStart: this.deps.context(),
      record: null,
      interrupted: false,
    };
    a.requests.push(r);
    this.trace(a, r, { kind: "request_start", requestIndex: r.index, requestedProvider: meta.provider, requestedModel: meta.model });
  }

  /** The request whose response is still streaming (started, not completed, not interrupted). */
  private openRequest(): OpenRequest | null {
    const last = this.activity?.requests.at(-1);
    return last && last.completedMono === null && !last.interrupted ? last : null;
  }

  /** The request that completed but has not been finalized by turn_end yet. */
  private completedRequest(): OpenRequest | null {
    const last = this.activity?.requests.at(-1);
    return last && last.completedMono !== null && last.record === null && !last.interrupted ? last : null;
  }

  delta(kind: DeltaKind, text: string): void {
    const a = this.activity;
    const r = this.openRequest();
    if (a === null || r === null) return;
    const now = this.deps.mono();
    const n = addDelta(r.obs, now, text);
    if (n === 0) return; // empty deltas, start markers and metadata never count as output
    const c = r.observed;
    if (kind === "text") (c.textChars += n), c.textDeltas++;
    else if (kind === "thinking") (c.thinkingChars += n), c.thinkingDeltas++;
    else (c.toolArgsChars += n), c.toolArgsDeltas++;
    c.approxTokens = (c.textChars + c.thinkingChars + c.toolArgsChars) / 4;
    if (r.first[kind] === null) r.first[kind] = now;
    if (a.first[kind] === null) a.first[kind] = now;
    if (a.firstObs === null) a.firstObs = now;
    if (r.firstObs === null) {
      r.firstObs = now;
      this.trace(a, r, { kind: "first_observation", ttftMs: now - r.startMono, deltaKind: kind });
    }
  }

  /** The assistant message ended: the response clock freezes here, before any tool runs. */
  responseEnd(message: { stopReason?: unknown; usage?: unknown }): void {
    const a = this.activity;
    const r = this.openRequest();
    if (a === null || r === null) return;
    r.completedMono = this.deps.mono();
    r.completedIso = this.deps.iso();
    r.stopReason = typeof message.stopReason === "string" ? message.stopReason : null;
    this.flushSamples(a, r);
    this.trace(a, r, {
      kind: "response_checkpoint",
      provisional: true,
      ttftMs: rel(r.firstObs, r.startMono),
      responseMs: r.completedMono - r.startMono,
      streamMs: streamSpan(r.firstObs, r.completedMono),
      stopReason: r.stopReason,
      usage: copyUsage(message.usage),
    });
  }

  /**
   * turn_end: the authoritative usage after message transformations, and the durable entry ids. Returns
   * the finalized record, or null when there was no request to finalize.
   */
  turnEnd(ev: {
    message: { role?: unknown; stopReason?: unknown; usage?: unknown; provider?: unknown; model?: unknown; responseModel?: unknown; api?: unknown; durationMs?: unknown; content?: unknown };
    messageEntryId: string | null;
    toolResultEntryIds: string[];
  }): RequestRecord | null {
    const a = this.activity;
    if (a === null || ev.message.role !== "assistant") return null;
    let r = this.completedRequest();
    if (r === null) {
      // message_end never arrived for the open request (unusual): completion time is unknown.
      const open = this.openRequest();
      if (open === null) return null;
      r = open;
      this.flushSamples(a, r);
    }
    const m = ev.message;
    const usage = copyUsage(m.usage);
    const stopReason = typeof m.stopReason === "string" ? m.stopReason : r.stopReason;
    const { output, reasoning } = outputCounts(usage);
    const streamMs = streamSpan(r.firstObs, r.completedMono);
    const elig = requestEligibility({ stopReason, outputTokens: output, reasoningTokens: reasoning, streamMs });
    const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
    const toolCallIds = Array.isArray(m.content)
      ? (m.content as { type?: unknown; id?: unknown }[]).filter((b) => b?.type === "toolCall" && typeof b.id === "string").map((b) => b.id as string)
      : [];
    const now = this.deps.mono();
    const rec: RequestRecord = {
      schema: SCHEMA,
      kind: "request",
      requestId: r.requestId,
      runId: a.runId,
      requestIndex: r.index,
      messageEntryId: ev.messageEntryId,
      toolResultEntryIds: [...ev.toolResultEntryIds],
      startedAt: r.startIso,
      respondedAt: r.completedIso,
      finalizedAt: this.deps.iso(),
      timingBasis: TIMING_BASIS,
      throughputBasis: THROUGHPUT_BASIS,
      ttftMs: rel(r.firstObs, r.startMono),
      firstThinkingMs: rel(r.first.thinking, r.startMono),
      firstTextMs: rel(r.first.text, r.startMono),
      firstToolArgsMs: rel(r.first.toolArgs, r.startMono),
      responseMs: rel(r.completedMono, r.startMono),
      streamMs,
      finalizedMs: now - r.startMono,
      outputTps: elig.eligible ? elig.tps : null,
      unavailableReason: elig.eligible ? null : elig.reason,
      requestedProvider: r.meta.provider,
      requestedModel: r.meta.model,
      provider: str(m.provider),
      model: str(m.model),
      responseModel: str(m.responseModel),
      api: str(m.api),
      stopReason,
      providerDurationMs: typeof m.durationMs === "number" ? m.durationMs : null,
      thinkingLevel: r.meta.thinkingLevel,
      usage,
      reasoningTokens: reasoning,
      reasoningBreakdown: reasoningBreakdown(reasoning),
      hiddenReasoningTokens: null,
      hiddenReasoningMs: null,
      observed: { ...r.observed },
      sampleCount: r.sampleCount,
      sampleChunks: r.chunks,
      samplesComplete: !this.storageFailed,
      samples: [...r.pending],
      toolCallIds,
      contextStart: r.contextStart,
      contextEnd: this.deps.context(),
      sessionUsage: this.deps.sessionUsage(),
    };
    r.pending = [];
    if (!this.save(ENTRY_REQUEST, rec)) return null;
    r.record = rec;
    this.lastStopReason = stopReason;
    this.lastUsage = usage;
    // A valid authoritative estimate (the activity's eligible finalized prefix) replaces the retained one.
    const finalized = a.requests.filter((q) => q.record !== null).map((q) => throughputInputOf(q.record as RequestRecord));
    const prefix = eligiblePrefix(finalized);
    if (prefix.tps !== null && prefix.covered === finalized.length) this.retained = { tps: prefix.tps, runId: a.runId };
    this.save(ENTRY_RUN, this.runRecord(a, "progress"));
    return rec;
  }

  private interruptRequest(a: Activity, r: OpenRequest, reason: string): void {
    r.interrupted = true;
    this.flushSamples(a, r);
    this.trace(a, r, { kind: "request_interrupted", reason, ttftMs: rel(r.firstObs, r.startMono), elapsedMs: this.deps.mono() - r.startMono });
  }

  // ---- tools -------------------------------------------------------------------------------------

  toolStart(toolCallId: string, toolName: string, parentToolCallId: string | null): void {
    const a = this.activity;
    if (a === null || a.state !== "running") return;
    const now = this.deps.mono();
    const owner = a.requests.at(-1);
    // Providers may reuse tool ids across requests: the key is scoped to the request that issued it.
    const key = `${owner?.requestId ?? "-"}/${toolCallId}`;
    a.tools.set(key, {
      toolCallId,
      toolName,
      parentToolCallId,
      requestId: owner?.requestId ?? null,
      startMs: now - a.startMono,
      endMs: null,
      elapsedMs: null,
      status: "running",
      startMono: now,
      endMono: null,
    });
    this.trace(a, owner ?? null, { kind: "tool_start", toolCallId, toolName, parentToolCallId });
  }

  toolEnd(toolCallId: string, isError: boolean): void {
    const a = this.activity;
    if (a === null) return;
    const t = [...a.tools.values()].reverse().find((x) => x.toolCallId === toolCallId && x.status === "running");
    if (t === undefined) return;
    this.closeTool(a, t, isError ? "error" : "finished");
    const r = a.requests.find((q) => q.requestId === t.requestId) ?? null;
    this.trace(a, r, { kind: "tool_end", toolCallId, toolName: t.toolName, elapsedMs: t.elapsedMs, isError });
  }

  private closeTool(a: Activity, t: ToolRecord & { startMono: number; endMono: number | null }, status: ToolRecord["status"]): void {
    const now = this.deps.mono();
    t.endMono = now;
    t.endMs = now - a.startMono;
    t.elapsedMs = now - t.startMono;
    t.status = status;
  }

  // ---- sampling ----------------------------------------------------------------------------------

  /** One sampler tick: a sample for the open request, silent or not. */
  tick(nowMono: number): void {
    const a = this.activity;
    const r = this.openRequest();
    if (a === null || r === null || this.storageFailed) return;
    const c = r.observed;
    r.pending.push({ i: r.sampleCount, tMs: nowMono - r.startMono, obsTps: obsRate(r.obs, nowMono), chars: c.textChars + c.thinkingChars + c.toolArgsChars });
    r.sampleCount++;
    if (r.pending.length >= SAMPLE_CHUNK) this.flushSamples(a, r);
  }

  private flushSamples(a: Activity, r: OpenRequest): void {
    if (r.pending.length === 0 || this.storageFailed) return;
    const samples = r.pending;
    const first = samples[0] as Sample;
    const ok = this.save(ENTRY_TRACE, {
      schema: SCHEMA,
      kind: "samples",
      runId: a.runId,
      requestId: r.requestId,
      at: this.deps.iso(),
      atMs: this.deps.mono() - a.startMono,
      chunkIndex: r.chunks,
      firstSampleIndex: first.i,
      sampleCount: samples.length,
      samples,
    } satisfies TraceRecord);
    if (!ok) return; // kept pending: they go inline into the request record as the fallback
    r.chunks++;
    r.pending = [];
  }

  // ---- views -------------------------------------------------------------------------------------

  private runRecord(a: Activity, phase: RunRecord["phase"]): RunRecord {
    const finalized = a.requests.filter((q) => q.record !== null).map((q) => q.record as RequestRecord);
    const act = activityThroughput(activityInputs(a.requests));
    const { covered, outputTokens, coveredStreamMs, measured, coveredReq } = coverageOf(finalized);
    const full = phase !== "progress";
    const tools = [...a.tools.values()];
    const end = a.endMono ?? this.deps.mono();
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
      toolWallMs: unionMs(tools.map((t) => ({ start: t.startMono, end: t.endMono ?? end }))),
      continuations: a.continuations,
      listsComplete: full,
      requestIds: full ? a.requests.map((q) => q.requestId) : null,
      tools: full ? tools.map(({ startMono: _s, endMono: _e, ...t }) => t) : null,
      samplingComplete: !this.storageFailed,
      contextStart: a.contextStart,
      contextEnd: phase === "start" ? null : this.deps.context(),
      sessionUsage: phase === "final" ? this.deps.sessionUsage() : null,
    };
  }

  view(nowMono: number): LiveView {
    const a = this.activity;
    const r = this.openRequest();
    let effTps: number | null = null;
    let effQualifier: EffQualifier = "none";
    if (a !== null) {
      const act = activityThroughput(activityInputs(a.requests));
      if (act.available && !a.partial) {
        effTps = act.tps;
        effQualifier = a.state === "running" ? "so_far" : "final";
      }
    }
    if (effTps === null) {
      if (this.retained !== null) {
        effTps = this.retained.tps;
        effQualifier = "last";
      } else if (a !== null && a.state === "running") effQualifier = "pending";
    }
    let obs: number | null = null;
    if (r !== null) {
      const rate = obsRate(r.obs, nowMono);
      if (rate !== null && rate > 0) obs = rate;
    }
    return {
      activityState: a === null ? "idle" : a.state,
      activityPartial: a?.partial ?? false,
      activityTtftMs: a === null || a.partial ? null : rel(a.firstObs, a.startMono),
      activityElapsedMs: a === null ? null : (a.endMono ?? nowMono) - a.startMono,
      requestOpen: r !== null,
      requestCount: a?.requests.length ?? 0,
      effTps,
      effQualifier,
      obsTps: obs,
      toolsRunning: a === null ? 0 : [...a.tools.values()].filter((t) => t.status === "running").length,
      lastStopReason: this.lastStopReason,
      lastUsage: this.lastUsage,
      storageFailed: this.storageFailed,
    };
  }
}
