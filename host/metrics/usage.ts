/**
 * Usage accounting helpers: an allowlisted copy of Pi's normalized usage, the reasoning breakdown that
 * never guesses, Pi-native whole-session totals, and the union of tool intervals. Pure.
 */
import { isCount } from "./throughput.ts";

export interface UsageCopy {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  reasoning: number | null;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

export type ReasoningBreakdown = "positive" | "zero_or_unreported";

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Copies only the numeric fields of a Pi Usage object; anything else it may carry is left behind. */
export function copyUsage(u: unknown): UsageCopy | null {
  if (typeof u !== "object" || u === null) return null;
  const r = u as Record<string, unknown>;
  const c = (typeof r.cost === "object" && r.cost !== null ? r.cost : {}) as Record<string, unknown>;
  return {
    input: num(r.input),
    output: num(r.output),
    cacheRead: num(r.cacheRead),
    cacheWrite: num(r.cacheWrite),
    totalTokens: num(r.totalTokens),
    reasoning: typeof r.reasoning === "number" && Number.isFinite(r.reasoning) ? r.reasoning : null,
    cost: { input: num(c.input), output: num(c.output), cacheRead: num(c.cacheRead), cacheWrite: num(c.cacheWrite), total: num(c.total) },
  };
}

/**
 * Some adapters default an omitted reasoning count to zero, so zero never proves there was no thinking:
 * only a positive count is a positive statement.
 */
export function reasoningBreakdown(reasoning: number | null | undefined): ReasoningBreakdown {
  return typeof reasoning === "number" && reasoning > 0 ? "positive" : "zero_or_unreported";
}

/** Output tokens when they are a usable count; reasoning must be a subset of output. */
export function outputCounts(u: UsageCopy | null): { output: number | null; reasoning: number | null } {
  if (u === null || !isCount(u.output)) return { output: null, reasoning: null };
  return { output: u.output, reasoning: u.reasoning !== null && isCount(u.reasoning) ? u.reasoning : null };
}

export interface NativeTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
}

type EntryLike = { type: string; [k: string]: unknown };

function add(t: NativeTotals, u: unknown): void {
  const c = copyUsage(u);
  if (c === null) return;
  t.input += c.input;
  t.output += c.output;
  t.cacheRead += c.cacheRead;
  t.cacheWrite += c.cacheWrite;
  t.cost += c.cost.total;
}

/**
 * Whole-session native totals with Pi's own convention: every entry of the file (abandoned branches too),
 * assistant and tool-result usage, usage entries, compaction and branch-summary usage. Custom entries
 * (ours, delegations, Translator receipts) are never added.
 */
export function nativeTotals(entries: readonly EntryLike[]): NativeTotals {
  const t: NativeTotals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
  for (const e of entries) {
    if (e.type === "usage") add(t, e.usage);
    else if ((e.type === "compaction" || e.type === "branch_summary") && e.usage) add(t, e.usage);
    else if (e.type === "message") {
      const m = e.message as { role?: string; usage?: unknown } | undefined;
      if (m?.role === "assistant" || (m?.role === "toolResult" && m.usage)) add(t, m.usage);
    }
  }
  return t;
}

/** Latest finalized request's cache hit ratio on the branch: cacheRead / (input + cacheRead + cacheWrite). */
export function cacheHit(u: UsageCopy | null): number | null {
  if (u === null) return null;
  const denom = u.input + u.cacheRead + u.cacheWrite;
  return denom > 0 ? u.cacheRead / denom : null;
}

/** Total wall time covered by possibly overlapping intervals: parallel and nested tools are not summed. */
export function unionMs(intervals: readonly { start: number; end: number }[]): number {
  const sorted = intervals.filter((i) => i.end >= i.start).sort((a, b) => a.start - b.start);
  let total = 0;
  let curStart = Number.NaN;
  let curEnd = Number.NaN;
  for (const i of sorted) {
    if (Number.isNaN(curStart) || i.start > curEnd) {
      if (!Number.isNaN(curStart)) total += curEnd - curStart;
      curStart = i.start;
      curEnd = i.end;
    } else if (i.end > curEnd) curEnd = i.end;
  }
  if (!Number.isNaN(curStart)) total += curEnd - curStart;
  return total;
}
