/**
 * The bounded diagnostic tail a monitor reports when it ends: the most recent output lines, small enough to hand to
 * the model. Pure: the actor pushes every record it frames and takes one snapshot at the end.
 *
 * Bounds (UTF-8 bytes): a line is displayed up to `maxLineBytes` (cut on a code-point boundary, marked `clipped`);
 * the tail keeps at most `maxLines` entries and `maxBytes` of displayed text, evicting the oldest first. A run of
 * identical adjacent lines (a retry loop printing the same error) is one entry with a `count`, so it cannot push
 * every other line out; its bytes are counted once.
 */
import { Buffer } from "node:buffer";
import type { DiagnosticLine, LineSource } from "../mailbox/monitor.ts";

export interface DiagnosticTail {
  push(source: LineSource, text: string): void;
  /** The tail as it stands, plus `extra` lines (e.g. unterminated lines at a timeout) added to a copy. */
  snapshot(extra?: { source: LineSource; text: string }[]): { lines: DiagnosticLine[]; truncated: boolean };
}

export const DIAGNOSTIC_TAIL_DEFAULTS = { maxLines: 100, maxBytes: 32 * 1024, maxLineBytes: 10 * 1024 } as const;

interface Entry extends DiagnosticLine {
  /** UTF-8 bytes of the displayed `text`. */
  bytes: number;
}

interface TailState {
  entries: Entry[];
  bytes: number;
  truncated: boolean;
  /**
   * The full text of the newest entry before clipping: two different long lines can share a clipped prefix, and
   * only equal lines may collapse. Only the newest is needed, because only it can grow a count.
   */
  newestText: string | null;
}

interface Limits {
  maxLines: number;
  maxBytes: number;
  /** Never above `maxBytes`, so one entry always fits. */
  maxLineBytes: number;
}

/** Longest prefix of `text` within `maxBytes` UTF-8 bytes, never splitting a character (or a surrogate pair). */
function clip(text: string, maxBytes: number): { text: string; bytes: number } {
  // encodeInto stops before a character that would not fit whole, and reports how much of the string it read.
  const room = new Uint8Array(maxBytes);
  const { read, written } = new TextEncoder().encodeInto(text, room);
  return { text: text.slice(0, read), bytes: written };
}

function append(state: TailState, limits: Limits, source: LineSource, text: string): void {
  const newest = state.entries[state.entries.length - 1];
  if (newest !== undefined && newest.source === source && state.newestText === text) {
    newest.count++;
    return;
  }
  // A UTF-16 code unit is at most 3 UTF-8 bytes: short lines skip the byte count's native call.
  let bytes = text.length * 3 <= limits.maxLineBytes ? -1 : Buffer.byteLength(text, "utf8");
  let shown = text;
  let clipped = false;
  if (bytes > limits.maxLineBytes) {
    ({ text: shown, bytes } = clip(text, limits.maxLineBytes));
    clipped = true;
    state.truncated = true;
  } else if (bytes < 0) {
    bytes = Buffer.byteLength(text, "utf8");
  }
  state.entries.push({ source, text: shown, count: 1, clipped, bytes });
  state.newestText = text;
  state.bytes += bytes;
  while (state.entries.length > limits.maxLines || state.bytes > limits.maxBytes) {
    const oldest = state.entries.shift() as Entry;
    state.bytes -= oldest.bytes;
    state.truncated = true;
  }
}

export function createDiagnosticTail(options?: {
  maxLines?: number;
  maxBytes?: number;
  maxLineBytes?: number;
}): DiagnosticTail {
  const maxLines = options?.maxLines ?? DIAGNOSTIC_TAIL_DEFAULTS.maxLines;
  const maxBytes = options?.maxBytes ?? DIAGNOSTIC_TAIL_DEFAULTS.maxBytes;
  const maxLineBytes = options?.maxLineBytes ?? DIAGNOSTIC_TAIL_DEFAULTS.maxLineBytes;
  for (const [name, value] of Object.entries({ maxLines, maxBytes, maxLineBytes })) {
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  }
  const limits: Limits = { maxLines, maxBytes, maxLineBytes: Math.min(maxLineBytes, maxBytes) };
  const state: TailState = { entries: [], bytes: 0, truncated: false, newestText: null };

  return {
    push(source, text) {
      append(state, limits, source, text);
    },

    snapshot(extra) {
      let view = state;
      if (extra !== undefined && extra.length > 0) {
        view = { ...state, entries: state.entries.map((entry) => ({ ...entry })) };
        for (const line of extra) append(view, limits, line.source, line.text);
      }
      return {
        lines: view.entries.map(({ source, text, count, clipped }) => ({ source, text, count, clipped })),
        truncated: view.truncated,
      };
    },
  };
}
