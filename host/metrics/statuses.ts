/**
 * Other extensions' statuses as the metrics footer shows them: made safe for the terminal, the known idle ones left
 * out, the warnings told apart.
 */
import { safe } from "../../shared/sanitize.ts";

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
