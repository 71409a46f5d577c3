/**
 * Usage-only breakdowns from the compatible subagent details shape (`details.results[].usage`, single,
 * parallel or chain). Only allowlisted numbers and short identifiers are copied: never task, message or
 * stderr text, never timing. They are informational: the child work may already be in native totals
 * through the tool's own usage, so nothing here is ever added to them. Pure.
 */
import { isIdentifier } from "./agent-contract.ts";

export interface DelegationSlot {
  slot: number;
  agent: string | null;
  model: string | null;
  exitCode: number | null;
  turns: number | null;
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
  cost: number | null;
}

export interface DelegationRecord {
  schema: 1;
  toolCallId: string;
  toolName: string;
  toolResultEntryId: string;
  mode: "single" | "parallel" | "chain";
  results: DelegationSlot[];
}

const count = (v: unknown): number | null => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : null);
const money = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);
const ident = (v: unknown): string | null => (isIdentifier(v) ? v : null);

export function readDelegation(toolResult: unknown, toolResultEntryId: string | undefined): DelegationRecord | null {
  if (toolResultEntryId === undefined || typeof toolResult !== "object" || toolResult === null) return null;
  const m = toolResult as { toolCallId?: unknown; toolName?: unknown; details?: unknown };
  const d = m.details as { mode?: unknown; results?: unknown } | undefined;
  if (typeof d !== "object" || d === null || !Array.isArray(d.results)) return null;
  if (d.mode !== "single" && d.mode !== "parallel" && d.mode !== "chain") return null;
  const results: DelegationSlot[] = [];
  d.results.forEach((raw: unknown, slot: number) => {
    if (typeof raw !== "object" || raw === null) return;
    const r = raw as Record<string, unknown>;
    const u = r.usage as Record<string, unknown> | undefined;
    if (typeof u !== "object" || u === null) return;
    results.push({
      slot,
      agent: ident(r.agent),
      model: ident(r.model),
      exitCode: typeof r.exitCode === "number" && Number.isSafeInteger(r.exitCode) ? r.exitCode : null,
      turns: count(u.turns),
      input: count(u.input),
      output: count(u.output),
      cacheRead: count(u.cacheRead),
      cacheWrite: count(u.cacheWrite),
      cost: money(u.cost),
    });
  });
  if (results.length === 0) return null;
  return {
    schema: 1,
    toolCallId: typeof m.toolCallId === "string" ? m.toolCallId : "",
    toolName: typeof m.toolName === "string" ? m.toolName : "",
    toolResultEntryId,
    mode: d.mode,
    results,
  };
}
