/**
 * Operator settings read from the environment. Parsed on every use (not at load) so that a value is checked where it
 * matters: an invalid empty-poll cap fails the poll that would use it, with a message naming the variable.
 */
import { MIN_EMPTY_POLL_MS } from "./limits.ts";

export const MAX_EMPTY_POLL_ENV = "PI_SHELL_JOBS_MAX_EMPTY_POLL_MS";
export const STEER_INTERRUPT_ENV = "PI_SHELL_JOBS_STEER_INTERRUPT";

export type EmptyPollCap = { ok: true; capMs: number | null } | { ok: false; error: string };

/** The operator's cap on relative empty polls: unset means none; values below the 5 s floor are raised to it. */
export function readEmptyPollCap(env: Readonly<Record<string, string | undefined>>): EmptyPollCap {
  const raw = env[MAX_EMPTY_POLL_ENV];
  if (raw === undefined || raw.trim() === "") return { ok: true, capMs: null };
  const text = raw.trim();
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value <= 0) {
    return { ok: false, error: `${MAX_EMPTY_POLL_ENV}=${JSON.stringify(raw)} is not a positive whole number of milliseconds` };
  }
  return { ok: true, capMs: Math.max(value, MIN_EMPTY_POLL_MS) };
}

/** Human steering ends a wait early unless the operator set the variable to 0. */
export function steerInterruptEnabled(env: Readonly<Record<string, string | undefined>>): boolean {
  const raw = env[STEER_INTERRUPT_ENV];
  return raw === undefined || raw.trim() !== "0";
}
