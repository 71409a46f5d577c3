/**
 * The monitor engine's byte-skip optimiser, pure: which lines of a chunk need not be framed at all, because no
 * pattern the contract still runs can match them and the diagnostic tail would evict them anyway. Most chunks of a
 * flood hold nothing a contract can act on; skipping them costs a few searches per chunk instead of decoding and
 * testing every line, and the outcome is the same as framing every line (tests/unit/quiet-lines.test.ts).
 */
import { Buffer, isUtf8 } from "node:buffer";
import type { LineSource } from "../../mailbox/monitor.ts";
import { DIAGNOSTIC_TAIL_DEFAULTS } from "./diagnostic-tail.ts";
import type { FramedRecord } from "../output/framing.ts";

const LF = 0x0a;
const CR = 0x0d;

/**
 * Index of the first record of `records` the diagnostic tail needs. The tail keeps its newest `maxLines` entries,
 * one per run of identical adjacent lines, so anything before the run that is `maxLines + 1` runs from the end is
 * evicted whatever it is. Pushing from the start of that run (itself evicted, which keeps `truncated` true) leaves
 * the tail exactly as pushing every record would, at a cost per chunk instead of per line.
 */
export function tailStart(records: readonly FramedRecord<LineSource>[]): number {
  const keepRuns = DIAGNOSTIC_TAIL_DEFAULTS.maxLines + 1;
  if (records.length <= keepRuns) return 0;
  let runs = 1;
  for (let i = records.length - 2; i >= 0; i--) {
    const older = records[i] as FramedRecord<LineSource>;
    const newer = records[i + 1] as FramedRecord<LineSource>;
    if (older.text !== newer.text || older.source !== newer.source) {
      runs++;
      if (runs > keepRuns) return i + 1;
    }
  }
  return 0;
}

/** Newest runs of lines a chunk must keep framed for the tail: what `tailStart` would push, nothing older. */
const TAIL_RUNS = DIAGNOSTIC_TAIL_DEFAULTS.maxLines + 1;

/** Below this a chunk is framed whole: what skipping could save is less than looking for it costs. */
const QUIET_MIN_BYTES = 1024;

/** A byte range of a chunk: `[from, to)`. */
export interface ByteRange {
  from: number;
  to: number;
}

/**
 * Start of the run of lines identical to the line `bytes[start, start + period)` (its LF included) that ends with
 * that line, looking no further back than `from`, which starts a line. The lines before `start` are compared as
 * blocks: k lines before it all equal it exactly when the k + 1 lines ending with it repeat with that period, so a
 * run of n lines costs about 2 log n comparisons instead of n.
 */
function runStartOf(bytes: Buffer, from: number, start: number, period: number): number {
  // Only called with k lines that fit between `from` and `start`.
  const repeats = (k: number): boolean => {
    const length = k * period;
    const older = start - length;
    // Short blocks are compared here, last byte first (neighbouring lines of a counter differ at the end); a call
    // to the native comparison costs about as much as fifty bytes compared this way.
    if (length > 48) return bytes.compare(bytes, older + period, start + period, older, start) === 0;
    for (let i = length - 1; i >= 0; i--) if (bytes[older + i] !== bytes[older + period + i]) return false;
    return true;
  };
  // How many lines of this length fit between `from` and `start`: the run reaches no further back.
  const reach = Math.floor((start - from) / period);
  // repeats(same) holds, repeats(differs) does not.
  let same = 0;
  let differs = reach + 1;
  if (reach > 0 && repeats(1)) {
    same = 1;
    // A flood of one line is settled with one more comparison; otherwise the run's end is looked for by doubling.
    if (repeats(reach)) {
      same = reach;
    } else {
      differs = reach;
      for (let k = 2; k < differs; k *= 2) {
        if (!repeats(k)) {
          differs = k;
          break;
        }
        same = k;
      }
    }
  } else {
    differs = 1;
  }
  while (differs - same > 1) {
    const middle = (same + differs) >> 1;
    if (repeats(middle)) same = middle;
    else differs = middle;
  }
  const oldest = start - same * period;
  // The oldest block ends like the line but may be the end of a longer one.
  return oldest === from || bytes[oldest - 1] === LF ? oldest : oldest + period;
}

/**
 * Start of the newest `TAIL_RUNS` runs of identical adjacent lines among the LF-terminated lines of
 * `bytes[from, end)`, on a run boundary; -1 when there are not that many, or when finding them would cost more
 * than framing. Lines are compared as bytes, so the caller makes sure equal text means equal bytes.
 */
function tailRunsStart(bytes: Buffer, from: number, end: number): number {
  // A chunk of few distinct lines (a flood of one line) would be looked through for nothing: give up once the
  // runs found cover half of it, where framing it whole costs at most twice what skipping would.
  const giveUpBelow = from + ((end - from) >> 1);
  let runs = 0;
  // Start of the oldest run found so far; the line before it differs from it, so it begins another run.
  let runStart = end;
  while (runStart > from) {
    const lineEnd = runStart - 1;
    const before = lineEnd > from ? bytes.lastIndexOf(LF, lineEnd - 1) : -1;
    const lineStart = before < from ? from : before + 1;
    runs++;
    if (runs > TAIL_RUNS) return runStart;
    runStart = runStartOf(bytes, from, lineStart, runStart - lineStart);
    if (runStart < giveUpBelow) return -1;
  }
  return -1;
}

/** Every LF-terminated line of `bytes` is at most `maxLineBytes` long, checked in steps of that size, not per line. */
function linesWithin(bytes: Buffer, maxLineBytes: number): boolean {
  let at = 0;
  // Each step finds the last line end within reach of `at`; a line that starts at `at` and is too long has none.
  while (bytes.length - at > maxLineBytes) {
    const lf = bytes.lastIndexOf(LF, at + maxLineBytes);
    if (lf < at) return false;
    at = lf + 1;
  }
  return true;
}

/**
 * The lines of `chunk` that need not be framed, or null when all of them must be. `literals` are byte strings of
 * which every line that could match contains at least one; null when no line can change the decision any more
 * (the contract decided). The range returned holds whole LF-terminated lines and
 *   - starts after the chunk's first LF, which ends whatever line an earlier chunk began (CRLF split included);
 *   - ends where the newest `TAIL_RUNS` runs of the chunk's complete lines begin, so the tail, which keeps one
 *     entry per run and at most `TAIL_RUNS - 1` of them, ends up exactly as if every line had been pushed;
 *   - holds no literal, so no line in it can match, and no line over the matching bound, which must fail the
 *     contract.
 * A chunk with a CR is framed whole: a CR ends records too, and the lines here are split on LF alone.
 */
export function quietLines(chunk: Uint8Array, literals: readonly Uint8Array[] | null, maxLineBytes: number): ByteRange | null {
  if (chunk.length < QUIET_MIN_BYTES) return null;
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
  if (bytes.indexOf(CR) >= 0) return null;
  const first = bytes.indexOf(LF);
  const last = bytes.lastIndexOf(LF);
  if (first < 0 || last <= first) return null;
  const from = first + 1;
  const end = last + 1;
  const to = tailRunsStart(bytes, from, end);
  if (to <= from) return null;
  // Runs were counted on bytes. Invalid UTF-8 decodes to U+FFFD whatever the bytes, so lines that differ as bytes
  // could be one run of text. Valid UTF-8 decodes one-to-one (and no line begins or ends inside a character: LF
  // is a byte of its own), so there runs of bytes are runs of text. The skipped lines need no such care.
  if (!isUtf8(bytes.subarray(to, end))) return null;
  if (literals !== null) {
    const quiet = bytes.subarray(from, to);
    for (const literal of literals) if (quiet.indexOf(literal) >= 0) return null;
    if (!linesWithin(quiet, maxLineBytes)) return null;
  }
  return { from, to };
}

/**
 * A literal as the UTF-8 bytes a line must contain, or null when it cannot be used: a literal holding a surrogate
 * code unit or U+FFFD could match half of a character that is four bytes in UTF-8, or come from any invalid byte.
 */
export function literalBytes(literal: string | null): Buffer | null {
  if (literal === null || /[\ud800-\udfff\ufffd]/.test(literal)) return null;
  return Buffer.from(literal, "utf8");
}
