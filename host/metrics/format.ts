/**
 * Number formatting shared by the footer and the /metrics views. Unavailable values are "—", never an
 * invented zero.
 */
import { safe } from "../../ui/sanitize.ts";

export const DASH = "—";

export function fmtMs(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return DASH;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m${Math.round((ms % 60_000) / 1000)}s`;
}

export function fmtTps(tps: number | null): string {
  if (tps === null || !Number.isFinite(tps)) return DASH;
  return tps >= 1000 ? `${Math.round(tps)}` : tps.toFixed(1);
}

export function fmtCount(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return DASH;
  const a = Math.abs(n);
  if (a < 1000) return `${Math.round(n)}`;
  if (a < 1_000_000) return `${(n / 1000).toFixed(a < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function fmtCost(c: number | null): string {
  if (c === null || !Number.isFinite(c)) return DASH;
  return c < 1 ? `$${c.toFixed(3)}` : `$${c.toFixed(2)}`;
}

export function fmtPct(p: number | null, digits = 1): string {
  return p === null || !Number.isFinite(p) ? "?" : `${p.toFixed(digits)}%`;
}

export function fmtBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)}B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)}KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)}MiB`;
}

const QUALIFIER_TEXT = { final: "", so_far: "so far", last: "last", pending: "pending", none: "" } as const;

export function qualifierText(q: keyof typeof QUALIFIER_TEXT): string {
  return QUALIFIER_TEXT[q];
}

/** Status text from other extensions: terminal sequences and control characters removed, one line. */
export function sanitizeStatus(text: string): string {
  const flat = text
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, "")
    .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g, "")
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  // What is left that a terminal would act on or mis-measure (bidi controls, lone surrogates) shows as an escape.
  return safe(flat);
}

/** Exact known idle pairs only; anything unfamiliar stays visible. */
const KNOWN_IDLE: ReadonlyMap<string, string> = new Map([
  ["lsp", "LSP: idle"],
  ["pi-background-task", "0 bg tasks"],
]);

export function isKnownIdle(key: string, text: string): boolean {
  return KNOWN_IDLE.get(key) === text;
}

export function isWarningStatus(text: string): boolean {
  return /\b(warn|warning|error|fail|failed|failure)\b/i.test(text);
}
