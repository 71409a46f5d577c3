/**
 * The parent recorder: turns Pi's lifecycle (agent_start, context_with_system, deltas, message_end,
 * turn_end, tools, agent_settled) into activity and request measurements and persisted entries. It holds
 * no Pi objects, timers or I/O: the caller supplies a monotonic clock, a wall clock and a sink, so the
 * whole lifecycle is tested with a fake clock. The recorder decides when something happens and what is
 * saved; the state it keeps and the shapes of what it saves are pure modules of their own
 * (activity-state.ts, request-record.ts, run-record.ts, trace-record.ts, live-view.ts).
 */
import {
  closeTool,
  newActivity,
  newRequest,
  observeDelta,
  openTool,
  runningTool,
  streamingRequest,
  unfinalizedRequest,
  type Activity,
  type OpenRequest,
  type RequestMeta,
} from "./activity-state.ts";
import { ENTRY_REQUEST, ENTRY_RUN, ENTRY_TRACE, SAMPLE_CHUNK } from "./constants.ts";
import { liveView, retainedAfter, type LiveView, type Retained } from "./live-view.ts";
import { addDelta } from "./obs-rate.ts";
import type { ContextSnapshot, DeltaKind, RequestRecord, RunRecord, RunState } from "./records.ts";
import { requestRecord, type TurnEnd } from "./request-record.ts";
import { runRecord } from "./run-record.ts";
import { rel } from "./run-figures.ts";
import { streamSpan } from "./throughput.ts";
import { sampleAt, samplesRecord, traceRecord, type TraceEvent } from "./trace-record.ts";
import { copyUsage, type NativeTotals, type UsageCopy } from "./usage.ts";

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

  private trace(a: Activity, r: OpenRequest | null, event: TraceEvent): void {
    this.save(ENTRY_TRACE, traceRecord(a, r, this.deps.iso(), this.deps.mono(), event));
  }

  private saveRun(a: Activity, phase: RunRecord["phase"]): void {
    this.save(ENTRY_RUN, runRecord(a, phase, this.deps, !this.storageFailed));
  }

  // ---- activity boundaries -------------------------------------------------------------------------

  agentStart(): void {
    const a = this.activity;
    if (a !== null && a.state === "running") {
      // A continuation inside the same unsettled activity: the TTFT clock does not restart.
      a.continuations++;
      return;
    }
    this.startActivity(false);
  }

  private startActivity(partial: boolean): Activity {
    const d = this.deps;
    const a = (this.activity = newActivity({ runId: d.newId(), mono: d.mono(), iso: d.iso(), partial, context: d.context() }));
    this.saveRun(a, "start");
    return a;
  }

  agentSettled(aborted: boolean): void {
    this.endActivity("settled", aborted ? "aborted" : "no_turn_end", aborted);
  }

  /** Orderly shutdown or session replacement while an activity runs: close it as interrupted. */
  interrupt(reason: string): void {
    this.endActivity("interrupted", reason, false);
  }

  /** Ends the running activity: what is still open is interrupted (requests for `requestReason`), then saved. */
  private endActivity(state: Exclude<RunState, "running">, requestReason: string, aborted: boolean): void {
    const a = this.activity;
    if (a === null || a.state !== "running") return;
    for (const r of a.requests) if (r.record === null && !r.interrupted) this.interruptRequest(a, r, requestReason);
    for (const t of a.tools.values()) if (t.status === "running") closeTool(a, t, "interrupted", this.deps.mono());
    a.state = state;
    a.aborted = aborted;
    a.endMono = this.deps.mono();
    a.endIso = this.deps.iso();
    this.saveRun(a, "final");
  }

  // ---- requests ----------------------------------------------------------------------------------

  /** This extension's context_with_system handler ran: a provider request is about to start. */
  requestStart(meta: RequestMeta): void {
    let a = this.activity;
    if (a === null || a.state !== "running") {
      // Attached after the activity started (or a request outside agent_start): its start is unknown.
      a = this.startActivity(true);
    }
    // A previous request that never reached turn_end (a retried error, a lost boundary) is closed now, so
    // its samples are flushed and the gap is on record; it still counts against activity coverage.
    const prev = a.requests.at(-1);
    if (prev !== undefined && prev.record === null && !prev.interrupted) {
      this.interruptRequest(a, prev, prev.completedMono === null ? "superseded" : "no_turn_end");
    }
    const d = this.deps;
    const r = newRequest({ mono: d.mono(), requestId: d.newId(), index: a.requests.length, iso: d.iso(), meta, context: d.context() });
    a.requests.push(r);
    this.trace(a, r, { kind: "request_start", requestIndex: r.index, requestedProvider: meta.provider, requestedModel: meta.model });
  }

  delta(kind: DeltaKind, text: string): void {
    const a = this.activity;
    const r = streamingRequest(a);
    if (a === null || r === null) return;
    const now = this.deps.mono();
    const n = addDelta(r.obs, now, text);
    if (n === 0) return; // empty deltas, start markers and metadata never count as output
    if (observeDelta(a, r, kind, n, now)) this.trace(a, r, { kind: "first_observation", ttftMs: now - r.startMono, deltaKind: kind });
  }

  /** The assistant message ended: the response clock freezes here, before any tool runs. */
  responseEnd(message: { stopReason?: unknown; usage?: unknown }): void {
    const a = this.activity;
    const r = streamingRequest(a);
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
  turnEnd(turn: TurnEnd): RequestRecord | null {
    const a = this.activity;
    if (a === null || turn.message.role !== "assistant") return null;
    let r = unfinalizedRequest(a);
    if (r === null) {
      // message_end never arrived for the open request (unusual): completion time is unknown.
      const open = streamingRequest(a);
      if (open === null) return null;
      r = open;
      this.flushSamples(a, r);
    }
    const d = this.deps;
    const rec = requestRecord(a, r, turn, {
      nowMono: d.mono(),
      finalizedAt: d.iso(),
      samplesComplete: !this.storageFailed,
      contextEnd: d.context(),
      sessionUsage: d.sessionUsage(),
    });
    r.pending = [];
    if (!this.save(ENTRY_REQUEST, rec)) return null;
    r.record = rec;
    this.lastStopReason = rec.stopReason;
    this.lastUsage = rec.usage;
    // A valid authoritative estimate (the activity's eligible finalized prefix) replaces the retained one.
    this.retained = retainedAfter(a) ?? this.retained;
    this.saveRun(a, "progress");
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
    const owner = a.requests.at(-1) ?? null;
    openTool(a, owner, { toolCallId, toolName, parentToolCallId }, this.deps.mono());
    this.trace(a, owner, { kind: "tool_start", toolCallId, toolName, parentToolCallId });
  }

  toolEnd(toolCallId: string, isError: boolean): void {
    const a = this.activity;
    if (a === null) return;
    const t = runningTool(a, toolCallId);
    if (t === undefined) return;
    closeTool(a, t, isError ? "error" : "finished", this.deps.mono());
    const r = a.requests.find((q) => q.requestId === t.requestId) ?? null;
    this.trace(a, r, { kind: "tool_end", toolCallId, toolName: t.toolName, elapsedMs: t.elapsedMs, isError });
  }

  // ---- sampling ----------------------------------------------------------------------------------

  /** One sampler tick: a sample for the open request, silent or not. */
  tick(nowMono: number): void {
    const a = this.activity;
    const r = streamingRequest(a);
    if (a === null || r === null || this.storageFailed) return;
    r.pending.push(sampleAt(r, nowMono));
    r.sampleCount++;
    if (r.pending.length >= SAMPLE_CHUNK) this.flushSamples(a, r);
  }

  private flushSamples(a: Activity, r: OpenRequest): void {
    if (r.pending.length === 0 || this.storageFailed) return;
    // Kept pending when the save fails: they go inline into the request record as the fallback.
    if (!this.save(ENTRY_TRACE, samplesRecord(a, r, this.deps.iso(), this.deps.mono()))) return;
    r.chunks++;
    r.pending = [];
  }

  // ---- views -------------------------------------------------------------------------------------

  view(nowMono: number): LiveView {
    const { activity, retained, lastStopReason, lastUsage, storageFailed } = this;
    return liveView({ activity, retained, lastStopReason, lastUsage, storageFailed }, nowMono);
  }
}
