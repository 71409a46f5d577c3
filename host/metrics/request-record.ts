/**
 * The record that finalizes a request at turn_end, shaped from what the recorder measured and what the turn's
 * message says, pure. Only numbers, identifiers, enums and timestamps are copied from the message (records.ts):
 * never its text, its thinking or a tool's arguments.
 */
import type { Activity, OpenRequest } from "./activity-state.ts";
import { SCHEMA, THROUGHPUT_BASIS, TIMING_BASIS } from "./constants.ts";
import type { ContextSnapshot, RequestRecord } from "./records.ts";
import { rel } from "./run-figures.ts";
import { requestEligibility, streamSpan } from "./throughput.ts";
import { copyUsage, outputCounts, reasoningBreakdown, type NativeTotals } from "./usage.ts";

/** What Pi's turn_end says about the turn; every field of the message is checked before it is used. */
export interface TurnEnd {
  message: {
    role?: unknown;
    stopReason?: unknown;
    usage?: unknown;
    provider?: unknown;
    model?: unknown;
    responseModel?: unknown;
    api?: unknown;
    durationMs?: unknown;
    content?: unknown;
  };
  messageEntryId: string | null;
  toolResultEntryIds: string[];
}

/** The readings taken when the request is finalized. */
export interface Finalization {
  nowMono: number;
  finalizedAt: string;
  /** No sample was lost to a failed save. */
  samplesComplete: boolean;
  contextEnd: ContextSnapshot | null;
  sessionUsage: NativeTotals | null;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** Ids of the tool calls a message's content blocks ask for. */
export function toolCallIdsOf(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return (content as { type?: unknown; id?: unknown }[])
    .filter((b) => b?.type === "toolCall" && typeof b.id === "string")
    .map((b) => b.id as string);
}

export function requestRecord(a: Activity, r: OpenRequest, turn: TurnEnd, at: Finalization): RequestRecord {
  const m = turn.message;
  const usage = copyUsage(m.usage);
  // The message's own stop reason, else the one message_end reported.
  const stopReason = typeof m.stopReason === "string" ? m.stopReason : r.stopReason;
  const { output, reasoning } = outputCounts(usage);
  const streamMs = streamSpan(r.firstObs, r.completedMono);
  const elig = requestEligibility({ stopReason, outputTokens: output, reasoningTokens: reasoning, streamMs });
  return {
    schema: SCHEMA,
    kind: "request",
    requestId: r.requestId,
    runId: a.runId,
    requestIndex: r.index,
    messageEntryId: turn.messageEntryId,
    toolResultEntryIds: [...turn.toolResultEntryIds],
    startedAt: r.startIso,
    respondedAt: r.completedIso,
    finalizedAt: at.finalizedAt,
    timingBasis: TIMING_BASIS,
    throughputBasis: THROUGHPUT_BASIS,
    ttftMs: rel(r.firstObs, r.startMono),
    firstThinkingMs: rel(r.first.thinking, r.startMono),
    firstTextMs: rel(r.first.text, r.startMono),
    firstToolArgsMs: rel(r.first.toolArgs, r.startMono),
    responseMs: rel(r.completedMono, r.startMono),
    streamMs,
    finalizedMs: at.nowMono - r.startMono,
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
    samplesComplete: at.samplesComplete,
    samples: [...r.pending],
    toolCallIds: toolCallIdsOf(m.content),
    contextStart: r.contextStart,
    contextEnd: at.contextEnd,
    sessionUsage: at.sessionUsage,
  };
}
