/**
 * How long one tool call waits before it answers. A wait is attachment, not lifetime: it ends early on exit,
 * cancellation or steering and never stops the job. Pure arithmetic on the validated parameters and a clock value.
 */
import { MIN_EMPTY_POLL_MS, type EmptyPollCap } from "../config.ts";
import { DEFAULT_EXEC_WAIT_MS, DEFAULT_INPUT_WAIT_MS, MAX_ACTIVE_WAIT_MS, MAX_TIMEOUT_SECONDS, MIN_ACTIVE_WAIT_MS } from "./limits.ts";

export type WaitMode = "immediate" | "relative" | "absolute";

export type WaitPlan =
  | { mode: "immediate"; durationMs: 0 }
  | { mode: "relative"; durationMs: number }
  | { mode: "absolute"; durationMs: number; untilEpochMs: number };

export type WaitKind =
  /** The initial wait of exec_command. */
  | "exec"
  /** write_stdin carrying chars, chars_b64, end_stdin or a resize. */
  | "input"
  /** write_stdin with nothing to send: a poll. */
  | "empty";

export interface WaitRequest {
  kind: WaitKind;
  yieldTimeMs?: number | undefined;
  yieldUntil?: string | undefined;
  /** The operator's cap on relative empty polls; an invalid setting fails only the polls it would cap. */
  emptyPollCap: EmptyPollCap;
  nowEpochMs: number;
}

export type WaitPlanResult = { ok: true; plan: WaitPlan } | { ok: false; error: string };

/** No relative wait needs to outlast the longest job lifetime. */
const LONGEST_WAIT_MS = MAX_TIMEOUT_SECONDS * 1000;

const UTC_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]00:?00)$/i;

/** Parses an absolute UTC instant; a local time without a zone would silently mean a different moment per machine. */
export function parseUtcInstant(text: string): number | null {
  if (!UTC_INSTANT.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

export function planWait(request: WaitRequest): WaitPlanResult {
  const { kind, yieldTimeMs, yieldUntil } = request;
  if (yieldTimeMs !== undefined && (!Number.isFinite(yieldTimeMs) || yieldTimeMs < 0)) {
    return { ok: false, error: `yield_time_ms must be a non-negative number of milliseconds (got ${yieldTimeMs})` };
  }
  if (yieldUntil !== undefined) {
    if (kind !== "empty") return { ok: false, error: "yield_until cannot be combined with input (chars, chars_b64, end_stdin, cols/rows)" };
    if (yieldTimeMs !== undefined) return { ok: false, error: "yield_until and yield_time_ms are mutually exclusive" };
    const until = parseUtcInstant(yieldUntil);
    if (until === null) {
      return { ok: false, error: `yield_until must be an absolute UTC time such as 2030-01-01T12:00:00Z (got ${JSON.stringify(yieldUntil)})` };
    }
    return { ok: true, plan: { mode: "absolute", untilEpochMs: until, durationMs: Math.max(0, until - request.nowEpochMs) } };
  }
  if (kind === "exec" || kind === "input") {
    const requested = yieldTimeMs ?? (kind === "exec" ? DEFAULT_EXEC_WAIT_MS : DEFAULT_INPUT_WAIT_MS);
    return { ok: true, plan: { mode: "relative", durationMs: Math.round(clamp(requested, MIN_ACTIVE_WAIT_MS, MAX_ACTIVE_WAIT_MS)) } };
  }
  // Only an explicit zero is a snapshot; a positive fraction is still a real wait.
  if (yieldTimeMs === 0) return { ok: true, plan: { mode: "immediate", durationMs: 0 } };
  let durationMs = Math.min(LONGEST_WAIT_MS, Math.max(MIN_EMPTY_POLL_MS, Math.ceil(yieldTimeMs ?? MIN_EMPTY_POLL_MS)));
  const cap = request.emptyPollCap;
  if (!cap.ok) return { ok: false, error: cap.error };
  if (cap.capMs !== null) durationMs = Math.min(durationMs, cap.capMs);
  return { ok: true, plan: { mode: "relative", durationMs } };
}
