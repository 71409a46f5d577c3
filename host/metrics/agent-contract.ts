/**
 * Numeric external-agent contract v1: strict validation of one snapshot. Every field is required, only
 * these fields are allowed, and only identifiers, enums and numbers pass, so nothing but measurements can
 * ever be persisted. Pure.
 */

export type AgentState = "running" | "complete" | "interrupted";
export type TimingBasis = "context_with_system" | "external_request_start" | "unavailable";
export type AgentStop = "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";

export interface AgentSnapshot {
  version: 1;
  source: string;
  agentId: string;
  requestId: string;
  sessionId: string;
  anchorId: string;
  toolCallId: string | null;
  provider: string | null;
  model: string | null;
  sequence: number;
  state: AgentState;
  timingBasis: TimingBasis;
  elapsedMs: number | null;
  ttftMs: number | null;
  responseMs: number | null;
  outputTokens: number | null;
  reasoningTokens: number | null;
  stopReason: AgentStop | null;
}

export const AGENT_FIELDS: readonly (keyof AgentSnapshot)[] = [
  "version",
  "source",
  "agentId",
  "requestId",
  "sessionId",
  "anchorId",
  "toolCallId",
  "provider",
  "model",
  "sequence",
  "state",
  "timingBasis",
  "elapsedMs",
  "ttftMs",
  "responseMs",
  "outputTokens",
  "reasoningTokens",
  "stopReason",
];

export type AgentValidation = { ok: true; snapshot: AgentSnapshot } | { ok: false; reason: string };

const IDENT = /^[\p{L}\p{N}][\p{L}\p{N}._:/@+-]*$/u;

export function isIdentifier(v: unknown): v is string {
  if (typeof v !== "string" || !IDENT.test(v)) return false;
  let n = 0;
  for (const _ of v) if (++n > 256) return false;
  return true;
}

function isMs(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER;
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

const STATES = new Set(["running", "complete", "interrupted"]);
const BASES = new Set(["context_with_system", "external_request_start", "unavailable"]);
const STOPS = new Set(["stop", "length", "toolUse", "error", "aborted", "deferred"]);

export function validateAgentSnapshot(input: unknown): AgentValidation {
  const fail = (reason: string): AgentValidation => ({ ok: false, reason });
  if (typeof input !== "object" || input === null || Array.isArray(input)) return fail("not_object");
  const d = input as Record<string, unknown>;
  const allowed = new Set<string>(AGENT_FIELDS);
  for (const k of Object.keys(d)) if (!allowed.has(k)) return fail("unknown_field");
  for (const k of AGENT_FIELDS) if (!(k in d)) return fail("missing_field");
  if (d.version !== 1) return fail("version");
  for (const k of ["source", "agentId", "requestId", "sessionId", "anchorId"] as const) if (!isIdentifier(d[k])) return fail("identifier");
  for (const k of ["toolCallId", "provider", "model"] as const) if (d[k] !== null && !isIdentifier(d[k])) return fail("identifier");
  if (!isCount(d.sequence)) return fail("sequence");
  if (typeof d.state !== "string" || !STATES.has(d.state)) return fail("state");
  if (typeof d.timingBasis !== "string" || !BASES.has(d.timingBasis)) return fail("timing_basis");
  for (const k of ["elapsedMs", "ttftMs", "responseMs"] as const) if (d[k] !== null && !isMs(d[k])) return fail("timing_value");
  for (const k of ["outputTokens", "reasoningTokens"] as const) if (d[k] !== null && !isCount(d[k])) return fail("token_value");
  if (d.stopReason !== null && (typeof d.stopReason !== "string" || !STOPS.has(d.stopReason))) return fail("stop_reason");
  const s = d as unknown as AgentSnapshot;
  if (s.timingBasis === "unavailable") {
    if (s.elapsedMs !== null || s.ttftMs !== null || s.responseMs !== null) return fail("unavailable_timing");
  } else if (s.elapsedMs === null) return fail("missing_elapsed");
  if (s.ttftMs !== null && s.responseMs !== null && s.ttftMs > s.responseMs) return fail("timing_order");
  if (s.responseMs !== null && s.elapsedMs !== null && s.responseMs > s.elapsedMs) return fail("timing_order");
  if (s.ttftMs !== null && s.elapsedMs !== null && s.ttftMs > s.elapsedMs) return fail("timing_order");
  if (s.reasoningTokens !== null && (s.outputTokens === null || s.reasoningTokens > s.outputTokens)) return fail("reasoning_subset");
  if (s.state === "running") {
    if (s.responseMs !== null || s.outputTokens !== null || s.reasoningTokens !== null || s.stopReason !== null) return fail("running_final_fields");
  }
  if (s.state === "complete") {
    if (s.stopReason === null) return fail("complete_without_stop");
    if (s.timingBasis !== "unavailable" && s.responseMs === null) return fail("complete_without_response");
  }
  return { ok: true, snapshot: copySnapshot(s) };
}

/** A scalar copy in the contract's field order: nothing of the caller's object survives. */
export function copySnapshot(s: AgentSnapshot): AgentSnapshot {
  return {
    version: 1,
    source: s.source,
    agentId: s.agentId,
    requestId: s.requestId,
    sessionId: s.sessionId,
    anchorId: s.anchorId,
    toolCallId: s.toolCallId,
    provider: s.provider,
    model: s.model,
    sequence: s.sequence,
    state: s.state,
    timingBasis: s.timingBasis,
    elapsedMs: s.elapsedMs,
    ttftMs: s.ttftMs,
    responseMs: s.responseMs,
    outputTokens: s.outputTokens,
    reasoningTokens: s.reasoningTokens,
    stopReason: s.stopReason,
  };
}

export function sameSnapshot(a: AgentSnapshot, b: AgentSnapshot): boolean {
  return AGENT_FIELDS.every((k) => a[k] === b[k]);
}

/** EFF TPS of one agent request, derived here (the contract accepts no rate field). */
export function agentStreamMs(s: AgentSnapshot): number | null {
  if (s.ttftMs === null || s.responseMs === null) return null;
  return s.responseMs - s.ttftMs;
}
