/**
 * Shapes of the persisted custom entries (parent schema 2). Only numbers, identifiers, enums and
 * timestamps: no prompt, answer, thinking text, tool argument or raw provider payload is ever copied.
 */
import type { IneligibleReason } from "./throughput.ts";
import type { NativeTotals, ReasoningBreakdown, UsageCopy } from "./usage.ts";

export type DeltaKind = "thinking" | "text" | "toolArgs";

export interface ContextSnapshot {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

export interface ObservedCounts {
  textChars: number;
  thinkingChars: number;
  toolArgsChars: number;
  textDeltas: number;
  thinkingDeltas: number;
  toolArgsDeltas: number;
  /** Exposed code points / 4: a rough size of what was visible, never a token count. */
  approxTokens: number;
}

/** One 250 ms sample of an open request; zero-rate samples during silence are kept. */
export interface Sample {
  /** Position in the request's sample sequence. */
  i: number;
  /** ms since request start on the monotonic clock; gaps reveal delayed timer ticks. */
  tMs: number;
  /** OBS TPS at that instant, null while unavailable. */
  obsTps: number | null;
  /** Cumulative exposed code points of the request so far. */
  chars: number;
}

export interface ToolRecord {
  toolCallId: string;
  toolName: string;
  parentToolCallId: string | null;
  requestId: string | null;
  /** ms since activity start. */
  startMs: number;
  endMs: number | null;
  elapsedMs: number | null;
  status: "running" | "finished" | "error" | "interrupted";
}

export interface RequestRecord {
  schema: 2;
  kind: "request";
  requestId: string;
  runId: string;
  requestIndex: number;
  messageEntryId: string | null;
  toolResultEntryIds: string[];
  startedAt: string;
  respondedAt: string | null;
  finalizedAt: string;
  timingBasis: "context_with_system";
  throughputBasis: string;
  ttftMs: number | null;
  firstThinkingMs: number | null;
  firstTextMs: number | null;
  firstToolArgsMs: number | null;
  responseMs: number | null;
  streamMs: number | null;
  finalizedMs: number;
  outputTps: number | null;
  unavailableReason: IneligibleReason | null;
  requestedProvider: string | null;
  requestedModel: string | null;
  provider: string | null;
  model: string | null;
  responseModel: string | null;
  api: string | null;
  stopReason: string | null;
  providerDurationMs: number | null;
  thinkingLevel: string | null;
  usage: UsageCopy | null;
  reasoningTokens: number | null;
  reasoningBreakdown: ReasoningBreakdown;
  hiddenReasoningTokens: null;
  hiddenReasoningMs: null;
  observed: ObservedCounts;
  sampleCount: number;
  sampleChunks: number;
  samplesComplete: boolean;
  /** Inline fallback: samples that could not be written as chunks. Joined after the chunks. */
  samples: Sample[];
  toolCallIds: string[];
  contextStart: ContextSnapshot | null;
  contextEnd: ContextSnapshot | null;
  sessionUsage: NativeTotals | null;
}

export type RunState = "running" | "settled" | "interrupted";

export interface RunRecord {
  schema: 2;
  kind: "run";
  runId: string;
  phase: "start" | "progress" | "final";
  state: RunState;
  aborted: boolean;
  /** True when the recorder attached after the activity had started: its start and TTFT are unknown. */
  partial: boolean;
  startedAt: string;
  endedAt: string | null;
  elapsedMs: number | null;
  ttftMs: number | null;
  firstThinkingMs: number | null;
  firstTextMs: number | null;
  firstToolArgsMs: number | null;
  requestCount: number;
  finalizedRequests: number;
  coveredRequests: number;
  outputTokens: number;
  coveredStreamMs: number;
  effTps: number | null;
  unavailableReason: IneligibleReason | "no_requests" | null;
  throughputBasis: string;
  measuredRequestMs: number;
  coveredRequestMs: number;
  toolCount: number;
  toolWallMs: number;
  continuations: number;
  /** False in progress snapshots: the id/tool lists are left out to avoid copying growing lists. */
  listsComplete: boolean;
  requestIds: string[] | null;
  tools: ToolRecord[] | null;
  samplingComplete: boolean;
  contextStart: ContextSnapshot | null;
  contextEnd: ContextSnapshot | null;
  sessionUsage: NativeTotals | null;
}

interface TraceBase {
  schema: 2;
  runId: string;
  requestId: string | null;
  at: string;
  /** ms since activity start. */
  atMs: number;
}

export type TraceRecord =
  | (TraceBase & { kind: "request_start"; requestIndex: number; requestedProvider: string | null; requestedModel: string | null })
  | (TraceBase & { kind: "first_observation"; ttftMs: number; deltaKind: DeltaKind })
  | (TraceBase & { kind: "samples"; chunkIndex: number; firstSampleIndex: number; sampleCount: number; samples: Sample[] })
  | (TraceBase & {
      kind: "response_checkpoint";
      provisional: true;
      ttftMs: number | null;
      responseMs: number;
      streamMs: number | null;
      stopReason: string | null;
      usage: UsageCopy | null;
    })
  | (TraceBase & { kind: "request_interrupted"; reason: string; ttftMs: number | null; elapsedMs: number })
  | (TraceBase & { kind: "tool_start"; toolCallId: string; toolName: string; parentToolCallId: string | null })
  | (TraceBase & { kind: "tool_end"; toolCallId: string; toolName: string; elapsedMs: number | null; isError: boolean });
