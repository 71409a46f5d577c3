/**
 * The bounded diagnostic tail a monitor reports when it ends: the most recent output lines, small enough to hand to
 * the model. Pure: the monitor engine pushes the lines it frames (at least every line that can still be in the tail,
 * see actors/monitor/engine.ts) and takes one snapshot at the end.
 *
 * Bounds (UTF-8 bytes): a line is displayed up to `maxLineBytes` (cut on a code-point boundary, marked `clipped`);
 * the tail keeps at most `maxLines` entries and `maxBytes` of displayed text, evicting the oldest first. A run of
 * identical adjacent lines (a retry loop printing the same error) is one entry with a `count`, so it cannot push
 * every other line out; its bytes are counted once.
 *
 * `push` sits on a monitor's output path, once per line, while `snapshot` runs once per monitor. So the byte bound
 * is applied lazily: the tail keeps the newest `maxLines` runs in a ring, and `snapshot` takes, newest first, as
 * many of them as fit in `maxBytes`. That is exactly what evicting eagerly would leave: a run's displayed bytes
 * never change once it is stored, so the entries an eager tail keeps are always the longest suffix of the runs
 * that fits both bounds, and a run that fell out of that suffix never fits again.
 */
import { Buffer } from "node:buffer";
import type { DiagnosticLine, LineSource } from "../../mailbox/monitor.ts";

export interface DiagnosticTail {
  push(source: LineSource, text: string): void;
  /** The tail as it stands, plus `extra` lines (e.g. unterminated lines at a timeout) added to a copy. */
  snapshot(extra?: { source: LineSource; text: string }[]): { lines: DiagnosticLine[]; truncated: boolean };
}

export const DIAGNOSTIC_TAIL_DEFAULTS = { maxLines: 100, maxBytes: 32 * 1024, maxLineBytes: 10 * 1024 } as const;

/** One run of identical adjacent lines, with its text as displayed (clipped when the line was too long). */
interface Run {
  source: LineSource;
  text: string;
  count: number;
  clipped: boolean;
}

interface Limits {
  maxLines: number;
  maxBytes: number;
  /** Never above `maxBytes`, so one entry always fits. */
  maxLineBytes: number;
}

/** Longest prefix of `text` within `maxBytes` UTF-8 bytes, never splitting a character (or a surrogate pair). */
function clip(text: string, maxBytes: number): string {
  // encodeInto stops before a character that would not fit whole, and reports how much of the string it read.
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

/** A new run for `text`, clipped to the line bound. */
function runOf(limits: Limits, source: LineSource, text: string): Run {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: only a line that long can be over the bound, and only it is measured.
  if (text.length * 3 > limits.maxLineBytes && Buffer.byteLength(text, "utf8") > limits.maxLineBytes) {
    return { source, text: clip(text, limits.maxLineBytes), count: 1, clipped: true };
  }
  return { source, text, count: 1, clipped: false };
}

/**
 * Runs kept so far, oldest first (at most `maxLines`), with the full text of the newest, which alone can grow a
 * count: two different long lines can share a clipped prefix, and only equal lines may collapse.
 */
interface Runs {
  list: Run[];
  newestText: string | null;
  /** A run was dropped for the line bound: the tail no longer holds all the output. */
  dropped: boolean;
}

/** The snapshot of `runs`: the newest of them that fit both bounds. */
function shown(limits: Limits, runs: Runs): { lines: DiagnosticLine[]; truncated: boolean } {
  let truncated = runs.dropped;
  let bytes = 0;
  let first = runs.list.length;
  while (first > 0) {
    const run = runs.list[first - 1] as Run;
    bytes += Buffer.byteLength(run.text, "utf8");
    if (bytes > limits.maxBytes) {
      truncated = true;
      break;
    }
    if (run.clipped) truncated = true;
    first--;
  }
  const lines = runs.list.slice(first).map(({ source, text, count, clipped }) => ({ source, text, count, clipped }));
  return { lines, truncated };
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

  // The ring: `ring[(start + i) % maxLines]` is the i-th oldest of `size` runs. A full ring overwrites its oldest.
  const ring: Run[] = [];
  let start = 0;
  let size = 0;
  let newest: Run | null = null;
  let newestText: string | null = null;
  let dropped = false;

  /** The runs oldest first, copied: a snapshot must not share state with the tail. */
  const ordered = (): Run[] => {
    const list: Run[] = [];
    for (let i = 0; i < size; i++) list.push({ ...(ring[(start + i) % maxLines] as Run) });
    return list;
  };

  return {
    push(source, text) {
      if (newest !== null && newest.source === source && newestText === text) {
        newest.count++;
        return;
      }
      newest = runOf(limits, source, text);
      newestText = text;
      if (size < maxLines) {
        ring[(start + size) % maxLines] = newest;
        size++;
      } else {
        ring[start] = newest;
        start = (start + 1) % maxLines;
        dropped = true;
      }
    },

    snapshot(extra) {
      const runs: Runs = { list: ordered(), newestText, dropped };
      for (const line of extra ?? []) {
        const last = runs.list[runs.list.length - 1];
        if (last !== undefined && last.source === line.source && runs.newestText === line.text) {
          last.count++;
          continue;
        }
        runs.list.push(runOf(limits, line.source, line.text));
        runs.newestText = line.text;
        if (runs.list.length > maxLines) {
          runs.list.shift();
          runs.dropped = true;
        }
      }
      return shown(limits, runs);
    },
  };
}
