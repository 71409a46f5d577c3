/**
 * Translator reported usage: read-only validation (receipt contract v1) and whole-session aggregation of
 * `orbit.translator.usage.v1` entries written by a compatible Translator. Receipts are a separate ledger:
 * never added to native totals, never used for timing. Pure.
 */
import { ENTRY_RECEIPT } from "./constants.ts";

export type ReceiptDirection = "input" | "output" | "subagent";

export interface ReceiptUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  reasoning?: number;
  cacheWrite1h?: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number; totalFromProvider?: boolean };
}

export interface Receipt {
  version: 1;
  requestId: string;
  provider: string;
  model: string;
  usage: ReceiptUsage | null;
  status: string;
  direction: ReceiptDirection;
  nativeAccounting: false;
}

const RECEIPT_FIELDS = new Set(["version", "requestId", "provider", "model", "usage", "status", "direction", "nativeAccounting"]);
const USAGE_FIELDS = new Set(["input", "output", "cacheRead", "cacheWrite", "totalTokens", "reasoning", "cacheWrite1h", "cost"]);
const COST_FIELDS = new Set(["input", "output", "cacheRead", "cacheWrite", "total", "totalFromProvider"]);
const BAD_CHARS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function isMoney(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER;
}

export function isReceiptString(v: unknown): v is string {
  return typeof v === "string" && v.trim().length > 0 && v.length <= 256 && !BAD_CHARS.test(v);
}

function plainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function validUsage(u: unknown): u is ReceiptUsage {
  if (!plainObject(u)) return false;
  for (const k of Object.keys(u)) if (!USAGE_FIELDS.has(k)) return false;
  for (const k of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"]) if (!isCount(u[k])) return false;
  if ("reasoning" in u && (!isCount(u.reasoning) || u.reasoning > (u.output as number))) return false;
  if ("cacheWrite1h" in u && (!isCount(u.cacheWrite1h) || u.cacheWrite1h > (u.cacheWrite as number))) return false;
  const c = u.cost;
  if (!plainObject(c)) return false;
  for (const k of Object.keys(c)) if (!COST_FIELDS.has(k)) return false;
  for (const k of ["input", "output", "cacheRead", "cacheWrite", "total"]) if (!isMoney(c[k])) return false;
  if ("totalFromProvider" in c && typeof c.totalFromProvider !== "boolean") return false;
  return true;
}

export function validateReceipt(data: unknown): Receipt | null {
  if (!plainObject(data)) return null;
  for (const k of Object.keys(data)) if (!RECEIPT_FIELDS.has(k)) return null;
  for (const k of RECEIPT_FIELDS) if (!(k in data)) return null;
  if (data.version !== 1 || data.nativeAccounting !== false) return null;
  for (const k of ["requestId", "provider", "model", "status"]) if (!isReceiptString(data[k])) return null;
  if (data.direction !== "input" && data.direction !== "output" && data.direction !== "subagent") return null;
  if (data.usage !== null && !validUsage(data.usage)) return null;
  return data as unknown as Receipt;
}

function sameReceipt(a: Receipt, b: Receipt): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (plainObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  return JSON.stringify(v);
}

export interface ReceiptSubtotal {
  /** null when a sum leaves the safe numeric range: shown as unavailable, never as an unsafe number. */
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
  totalTokens: number | null;
  reasoning: number | null;
  cost: number | null;
}

export interface ReceiptGroup {
  key: string;
  attempts: number;
  reported: number;
  subtotal: ReceiptSubtotal;
}

export interface ReceiptSummary {
  attempts: number;
  reported: number;
  unreported: number;
  subtotal: ReceiptSubtotal;
  byModel: ReceiptGroup[];
  byDirection: ReceiptGroup[];
  byStatus: ReceiptGroup[];
  malformed: number;
  duplicates: number;
  conflictingIds: number;
}

function emptySubtotal(): ReceiptSubtotal {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, reasoning: 0, cost: 0 };
}

function addSafe(a: number | null, b: number, integer: boolean): number | null {
  if (a === null) return null;
  const s = a + b;
  return (integer ? Number.isSafeInteger(s) : s <= Number.MAX_SAFE_INTEGER) ? s : null;
}

function addUsage(t: ReceiptSubtotal, u: ReceiptUsage): void {
  t.input = addSafe(t.input, u.input, true);
  t.output = addSafe(t.output, u.output, true);
  t.cacheRead = addSafe(t.cacheRead, u.cacheRead, true);
  t.cacheWrite = addSafe(t.cacheWrite, u.cacheWrite, true);
  t.totalTokens = addSafe(t.totalTokens, u.totalTokens, true);
  t.reasoning = addSafe(t.reasoning, u.reasoning ?? 0, true);
  t.cost = addSafe(t.cost, u.cost.total, false);
}

/** Aggregates every receipt of the whole session file (abandoned branches included). */
export function summarizeReceipts(allEntries: readonly { type: string; customType?: string; data?: unknown }[]): ReceiptSummary {
  const byId = new Map<string, Receipt>();
  const conflicting = new Set<string>();
  let malformed = 0;
  let duplicates = 0;
  for (const e of allEntries) {
    if (e.type !== "custom" || e.customType !== ENTRY_RECEIPT) continue;
    const r = validateReceipt(e.data);
    if (r === null) {
      malformed++; // a malformed receipt does not reserve its id
      continue;
    }
    const prev = byId.get(r.requestId);
    if (prev === undefined) byId.set(r.requestId, r);
    else if (sameReceipt(prev, r)) duplicates++;
    else conflicting.add(r.requestId);
  }
  const summary: ReceiptSummary = {
    attempts: 0,
    reported: 0,
    unreported: 0,
    subtotal: emptySubtotal(),
    byModel: [],
    byDirection: [],
    byStatus: [],
    malformed,
    duplicates,
    conflictingIds: conflicting.size,
  };
  const groups = { model: new Map<string, ReceiptGroup>(), direction: new Map<string, ReceiptGroup>(), status: new Map<string, ReceiptGroup>() };
  const bump = (m: Map<string, ReceiptGroup>, k: string, r: Receipt): void => {
    let g = m.get(k);
    if (g === undefined) m.set(k, (g = { key: k, attempts: 0, reported: 0, subtotal: emptySubtotal() }));
    g.attempts++;
    if (r.usage !== null) {
      g.reported++;
      addUsage(g.subtotal, r.usage);
    }
  };
  for (const [id, r] of byId) {
    // Conflicting receipts exclude the whole id rather than picking an arbitrary amount.
    if (conflicting.has(id)) continue;
    summary.attempts++;
    if (r.usage === null) summary.unreported++;
    else {
      summary.reported++;
      addUsage(summary.subtotal, r.usage);
    }
    bump(groups.model, `${r.provider}/${r.model}`, r);
    bump(groups.direction, r.direction, r);
    bump(groups.status, r.status, r);
  }
  summary.byModel = [...groups.model.values()];
  summary.byDirection = [...groups.direction.values()];
  summary.byStatus = [...groups.status.values()];
  return summary;
}
