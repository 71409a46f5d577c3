/**
 * The monitor result contract as a pure state machine: a state, a `transition` that folds in what the matcher
 * found, and a `settle` that turns the final state and the way the process ended into the terminal outcome.
 * No timers, no workers, no I/O: the engine (actors/monitor/engine.ts) feeds it events in output order and this file
 * alone decides what they mean.
 *
 * The two completion modes differ in when a match may decide:
 *   - "match": the first terminal match wins, success or failure, from a complete record or from an idle
 *     unterminated line; nothing later can revise it.
 *   - "exit": only complete records count. The first success match becomes an immutable candidate that still
 *     needs exit code 0 (and a valid `json` capture when one took part); a failure match at any point, before or
 *     after the candidate, decides at once.
 * In both modes a failure match on a line beats a success match on the same line (the matcher checks the failure
 * pattern first), and the matcher's own limits (line, queue, errors) decide as failures.
 */
import { NO_HIT, type HitFields } from "../../mailbox/constants.ts";
import type { Completion, LineSource, MonitorOutcome } from "../../mailbox/monitor.ts";
import type { EndCause } from "../../mailbox/result.ts";
import { incompleteSuffix } from "../../shared/utf8.ts";
import type { MatchKind, MatchRedaction, RawMatch } from "../match/raw-match.ts";

/** The bounds a reported hit is held to, in UTF-8 bytes. */
export const HIT_LIMITS = {
  matchedBytes: 4 * 1024,
  captureBytes: 4 * 1024,
  jsonBytes: 32 * 1024,
  /** All captures together, the `json` one counted first. */
  capturesBytes: 32 * 1024,
} as const;

/**
 * How the process side ended: the job's end cause without the supervisor's own two (an actor that crashed or hung
 * settles no contract). `contract` means the engine's decision made the actor stop the group.
 */
export type ProcessEnd = { cause: Exclude<EndCause, "actor_crashed" | "actor_unresponsive">; exitCode: number | null; signal: string | null };

export type JsonResult =
  | { kind: "absent" }
  | { kind: "parsed"; value: unknown }
  | { kind: "invalid"; error: string };

/** A hit with every bound applied and its `json` capture parsed: what an outcome reports. */
export interface Hit {
  kind: MatchKind;
  source: LineSource;
  matched: string;
  matchedTruncated: boolean;
  captures: Record<string, string>;
  capturesTruncated: boolean;
  json: JsonResult;
  redaction: MatchRedaction | null;
}

/** Terminal decisions that come from the matcher's limits rather than from a pattern. */
export type LimitReason = "matcher_line_limit" | "matcher_queue_limit" | "matcher_error";

/**
 * Every machine reason an outcome can carry. A failure-pattern match, a non-zero exit and `result_missing` carry
 * none: the status, the match and the exit code already say it all.
 */
export type OutcomeReason =
  | LimitReason
  | "invalid_json_result"
  | "timeout"
  | "spawn_failed"
  | "log_quota"
  | "log_failed"
  | "stalled"
  | "waiting_for_input"
  | "memory_limit"
  | "cpu_limit"
  | "process_limit";

export type Decision =
  | { by: "match"; hit: Hit }
  | { by: "limit"; reason: LimitReason; detail: string | null };

export type ContractState =
  | { phase: "watching"; completion: Completion; candidate: Hit | null }
  | { phase: "decided"; completion: Completion; decision: Decision };

export type ContractEvent =
  /** A pattern matched a record; `partial` when it was an idle unterminated line (match mode only). */
  | { type: "match"; source: LineSource; match: RawMatch; partial: boolean }
  /** A physical line exceeded the matching bound: it is never matched in fragments. */
  | { type: "line_limit"; source: LineSource }
  | { type: "queue_limit" }
  | { type: "matcher_error"; message: string };

/** The outcome minus the diagnostic tail, which the engine owns. */
export type Verdict = Omit<MonitorOutcome, "output" | "outputTruncated">;

export function initialContract(completion: Completion): ContractState {
  return { phase: "watching", completion, candidate: null };
}

/**
 * Whether a success match could still change anything. Lets the matcher skip the success pattern once exit
 * mode holds its candidate (only failures matter from then on) and skip matching entirely once decided.
 */
export function wantsSuccess(state: ContractState): boolean {
  return state.phase === "watching" && (state.completion === "match" || state.candidate === null);
}

/** Folds one event in. Returns `state` itself when the event changes nothing, so callers can compare. */
export function transition(state: ContractState, event: ContractEvent): ContractState {
  if (state.phase === "decided") return state;
  const decide = (decision: Decision): ContractState => ({ phase: "decided", completion: state.completion, decision });
  switch (event.type) {
    case "match": {
      // Exit mode looks at complete records only; an idle partial could be the prefix of something else.
      if (event.partial && state.completion === "exit") return state;
      const kind = event.match.kind;
      if (state.completion === "exit" && kind === "success") {
        // The first candidate is immutable, including a JSON parse error it carries.
        if (state.candidate !== null) return state;
        return { ...state, candidate: boundHit(event.source, event.match) };
      }
      return decide({ by: "match", hit: boundHit(event.source, event.match) });
    }
    case "line_limit":
      return decide({ by: "limit", reason: "matcher_line_limit", detail: `a ${event.source} line exceeded the matching bound` });
    case "queue_limit":
      return decide({ by: "limit", reason: "matcher_queue_limit", detail: null });
    case "matcher_error":
      return decide({ by: "limit", reason: "matcher_error", detail: event.message });
  }
}

/**
 * The terminal verdict from the contract's final state and the way the process ended.
 *
 * The job actor keeps the first cause that ends a run, and the engine reports a decision the moment it is made, so
 * a decision made before a timeout, a manual stop or a log failure arrives here as cause "contract". With any of
 * those causes a decision can only have come from output drained after that cause, and it cannot revise it.
 */
export function settle(state: ContractState, end: ProcessEnd): Verdict {
  const exit = { completion: state.completion, exitCode: end.exitCode, signal: end.signal };
  if (state.phase === "decided" && (end.cause === "exit" || end.cause === "contract")) {
    const decision = state.decision;
    if (decision.by === "match") {
      // "match" says the contract, not the process, ended the run: the process did not get to exit on its own.
      const stoppedBy = end.cause === "exit" ? null : "match";
      return { status: decision.hit.kind, stoppedBy, reason: null, ...exit, ...hitFields(decision.hit) };
    }
    return { status: "failure", stoppedBy: null, reason: decision.reason, ...exit, ...hitFields(null) };
  }
  const without = (status: Verdict["status"], reason: OutcomeReason | null): Verdict => ({
    status,
    stoppedBy: null,
    reason,
    ...exit,
    ...hitFields(null),
  });
  switch (end.cause) {
    case "timeout":
      return without("timeout", "timeout");
    case "stopped":
      return without("stopped", null);
    case "spawn_failed":
    case "log_quota":
    case "log_failed":
    case "stalled":
    case "waiting_for_input":
    case "memory_limit":
    case "cpu_limit":
    case "process_limit":
      return without("failure", end.cause);
    case "exit":
    case "contract": {
      // A non-zero exit or a signal overrides an exit-mode candidate.
      if (end.exitCode !== 0 || end.signal !== null) return without("failure", null);
      const candidate = state.phase === "watching" && state.completion === "exit" ? state.candidate : null;
      if (candidate === null) return without("result_missing", null);
      if (candidate.json.kind === "invalid") {
        return { status: "failure", stoppedBy: null, reason: "invalid_json_result", ...exit, ...hitFields(candidate) };
      }
      return { status: "success", stoppedBy: null, reason: null, ...exit, ...hitFields(candidate) };
    }
  }
}

function hitFields(hit: Hit | null): HitFields {
  if (hit === null) return { ...NO_HIT, captures: {} };
  const fields: HitFields = {
    matched: hit.matched,
    matchedTruncated: hit.matchedTruncated,
    matchedSource: hit.source,
    captures: hit.captures,
    capturesTruncated: hit.capturesTruncated,
    hasResult: hit.json.kind === "parsed",
    resultParseError: hit.json.kind === "invalid" ? hit.json.error : null,
  };
  // `result` is present exactly when a value parsed, so `false`, `null` and `0` stay distinguishable from none.
  if (hit.json.kind === "parsed") fields.result = hit.json.value;
  if (hit.redaction !== null && hit.redaction.count > 0) fields.redactions = hit.redaction.count;
  if (hit.redaction?.captures) fields.capturesRedacted = true;
  return fields;
}

/** Applies the matched-text and capture bounds and parses the `json` capture. */
export function boundHit(source: LineSource, match: RawMatch): Hit {
  const matched = clipUtf8(match.text, HIT_LIMITS.matchedBytes);
  const entries: [string, string][] = [];
  let truncated = false;
  let budget = HIT_LIMITS.capturesBytes;
  let json: JsonResult = { kind: "absent" };
  const groups = match.groups;
  if (groups !== null) {
    // The JSON capture is the payload the caller asked for, so it takes the shared budget first.
    const raw = groups.json;
    if (raw !== undefined) {
      const clipped = clipUtf8(raw, HIT_LIMITS.jsonBytes);
      entries.push(["json", clipped.text]);
      budget -= clipped.bytes;
      truncated = clipped.clipped;
      json = clipped.clipped
        ? { kind: "invalid", error: `JSON capture exceeds ${HIT_LIMITS.jsonBytes} bytes and was clipped` }
        : parseJson(raw);
    }
    for (const name of Object.keys(groups)) {
      const value = groups[name];
      if (name === "json" || value === undefined) continue;
      const clipped = clipUtf8(value, Math.min(HIT_LIMITS.captureBytes, budget));
      if (clipped.clipped) truncated = true;
      // A capture with nothing left of it is omitted rather than reported as an empty string it never was.
      if (clipped.clipped && clipped.bytes === 0) continue;
      entries.push([name, clipped.text]);
      budget -= clipped.bytes;
    }
  }
  return {
    kind: match.kind,
    source,
    matched: matched.text,
    matchedTruncated: matched.clipped,
    // fromEntries defines own properties, so a group named `__proto__` stays an ordinary capture.
    captures: Object.fromEntries(entries),
    capturesTruncated: truncated,
    json,
    redaction: match.redaction ?? null,
  };
}

export function parseJson(raw: string): JsonResult {
  if (raw.trim() === "") return { kind: "invalid", error: "JSON capture is empty" };
  try {
    return { kind: "parsed", value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { kind: "invalid", error: error instanceof Error ? error.message : String(error) };
  }
}

/** `text` cut to at most `maxBytes` UTF-8 bytes on a code-point boundary, with the bytes it kept. */
export function clipUtf8(text: string, maxBytes: number): { text: string; bytes: number; clipped: boolean } {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return { text, bytes, clipped: false };
  const encoded = Buffer.from(text, "utf8");
  const limit = Math.max(0, maxBytes);
  // The cut never splits a character.
  const cut = limit - incompleteSuffix(encoded, limit);
  return { text: encoded.toString("utf8", 0, cut), bytes: cut, clipped: true };
}
