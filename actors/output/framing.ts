/**
 * Byte → record framing for a job's output streams: pure, no I/O, one state machine per source.
 *
 * A record ends on LF, on CRLF (one terminator, even when the CR ends one chunk and the LF opens the next), on a lone
 * CR (progress bars redraw with it) and at EOF. Records are decoded as UTF-8 only once they are complete, from the
 * bytes kept for them, so a multi-byte sequence split between chunks decodes as one character. Memory per source is
 * bounded by `maxRecordBytes`: a longer line keeps its first bytes, counts the rest, and is marked `overLimit`.
 *
 * This sits on every job's output path, so it finds terminators with `indexOf` on the byte array and decodes whole
 * slices: no per-byte JavaScript loop and no string built byte by byte. When the lines a chunk completes decode to
 * one UTF-16 unit per byte (ASCII, the common case), they are decoded with one call per chunk and cut out as string
 * slices, about 3.5× faster than a decoder call per short line; V8 may let such a slice share the storage of the
 * chunk's decoded text, which is bounded by the chunk size.
 */
import { incompleteSuffix } from "../../shared/utf8.ts";

export interface FramedRecord<S extends string = string> {
  source: S;
  /**
   * Decoded UTF-8 of the physical line without its terminator. When `overLimit`, only its first `maxRecordBytes`
   * bytes, cut back to a code-point boundary.
   */
  text: string;
  /** UTF-8 byte length of the whole physical line (terminator excluded), also when `overLimit`. */
  bytes: number;
  /** The physical line was longer than `maxRecordBytes`. */
  overLimit: boolean;
}

/** The line a source has started but not ended yet. */
export interface PartialLine {
  text: string;
  bytes: number;
  overLimit: boolean;
}

export interface Framer<S extends string> {
  /** Takes the next chunk of `source` and returns the records it completed, in order. */
  push(source: S, chunk: Uint8Array): FramedRecord<S>[];
  /** End of file on `source`: returns its unterminated line as a last record, if there is one. */
  end(source: S): FramedRecord<S>[];
  /** The unterminated line of `source`, decoded, without consuming it (idle matching looks at it). */
  partial(source: S): PartialLine | null;
  /** Bytes of the unterminated line of `source` so far, counting those not retained; nothing is decoded. */
  partialBytes(source: S): number;
}

const LF = 0x0a;
const CR = 0x0d;

/** Above this, a buffer grown for one long line is dropped once that line ends, so idle sources stay small. */
const KEEP_BUFFER_BYTES = 64 * 1024;

interface SourceState {
  /** The retained bytes of the unterminated line; only `heldLength` of them are in use, never more than the limit. */
  held: Uint8Array;
  heldLength: number;
  /** Bytes of the unterminated line seen so far, counting those not retained. */
  lineBytes: number;
  /** The last chunk ended on a CR that already closed a record: a LF opening the next chunk belongs to it. */
  afterCR: boolean;
}

const EMPTY = new Uint8Array(0);

export function createFramer<S extends string>(options: { maxRecordBytes: number }): Framer<S> {
  const max = options.maxRecordBytes;
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new RangeError(`maxRecordBytes must be a positive integer, got ${String(max)}`);
  }
  // ignoreBOM keeps a U+FEFF that starts a line: it is output, and the default would silently drop it.
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const states = new Map<S, SourceState>();

  const stateOf = (source: S): SourceState => {
    let state = states.get(source);
    if (state === undefined) {
      state = { held: EMPTY, heldLength: 0, lineBytes: 0, afterCR: false };
      states.set(source, state);
    }
    return state;
  };

  /** Adds `chunk[from, to)` to the unterminated line, retaining only what fits under the limit. */
  const hold = (state: SourceState, chunk: Uint8Array, from: number, to: number): void => {
    const take = Math.min(to - from, max - state.heldLength);
    if (take > 0) {
      const needed = state.heldLength + take;
      if (needed > state.held.length) {
        const grown = new Uint8Array(Math.min(max, Math.max(needed, state.held.length * 2, 256)));
        grown.set(state.held.subarray(0, state.heldLength));
        state.held = grown;
      }
      state.held.set(chunk.subarray(from, from + take), state.heldLength);
      state.heldLength = needed;
    }
    state.lineBytes += to - from;
  };

  const decodeHeld = (state: SourceState, cut: boolean): string => {
    const length = cut ? state.heldLength - incompleteSuffix(state.held, state.heldLength) : state.heldLength;
    return decoder.decode(state.held.subarray(0, length));
  };

  /** Ends the unterminated line of `state` as a record. */
  const finishHeld = (source: S, state: SourceState): FramedRecord<S> => {
    const overLimit = state.lineBytes > max;
    const record = { source, text: decodeHeld(state, overLimit), bytes: state.lineBytes, overLimit };
    state.heldLength = 0;
    state.lineBytes = 0;
    if (state.held.length > KEEP_BUFFER_BYTES) state.held = EMPTY;
    return record;
  };

  /** A record for `chunk[from, to)` when nothing of its line was held from earlier chunks: no copy. */
  const direct = (source: S, chunk: Uint8Array, from: number, to: number): FramedRecord<S> => {
    const bytes = to - from;
    if (bytes <= max) return { source, text: decoder.decode(chunk.subarray(from, to)), bytes, overLimit: false };
    const kept = chunk.subarray(from, from + max);
    return { source, text: decoder.decode(kept.subarray(0, max - incompleteSuffix(kept, max))), bytes, overLimit: true };
  };

  /** A record cut from a region decoded at one code unit per byte, so string offsets are byte offsets. */
  const sliced = (
    source: S,
    region: string,
    regionStart: number,
    chunk: Uint8Array,
    from: number,
    to: number,
  ): FramedRecord<S> => {
    const bytes = to - from;
    const offset = from - regionStart;
    if (bytes <= max) return { source, text: region.slice(offset, offset + bytes), bytes, overLimit: false };
    // Same cut as the other paths: a lead byte whose sequence lies past the limit is dropped, not replaced.
    const kept = max - incompleteSuffix(chunk.subarray(from, from + max), max);
    return { source, text: region.slice(offset, offset + kept), bytes, overLimit: true };
  };

  return {
    push(source, chunk) {
      const state = stateOf(source);
      const records: FramedRecord<S>[] = [];
      const length = chunk.length;
      if (length === 0) return records;
      let start = 0;
      if (state.afterCR) {
        state.afterCR = false;
        if (chunk[0] === LF) start = 1;
      }
      // Next LF and CR at or after `start`; -1 once there is none left, so a chunk without CR is searched once.
      let lf = chunk.indexOf(LF, start);
      let cr = chunk.indexOf(CR, start);
      // The lines that end in this chunk and began in it are decoded with one call (see `region`).
      let region: string | null = null;
      let regionStart = -1;
      while (lf >= 0 || cr >= 0) {
        const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
        if (state.lineBytes > 0) {
          hold(state, chunk, start, end);
          records.push(finishHeld(source, state));
        } else {
          if (regionStart < 0) {
            regionStart = start;
            const regionEnd = Math.max(chunk.lastIndexOf(LF), chunk.lastIndexOf(CR));
            const decoded = decoder.decode(chunk.subarray(regionStart, regionEnd));
            // Every UTF-8 unit decodes to at most as many UTF-16 code units as it has bytes, so equal lengths mean
            // one code unit per byte (ASCII, or a replacement character per invalid byte): byte offsets are string
            // offsets and each line is a slice. Otherwise lines are decoded one by one.
            region = decoded.length === regionEnd - regionStart ? decoded : null;
          }
          records.push(
            region === null
              ? direct(source, chunk, start, end)
              : sliced(source, region, regionStart, chunk, start, end),
          );
        }
        start = end + 1;
        if (end === cr) {
          if (start === length) state.afterCR = true;
          else if (chunk[start] === LF) start++;
        }
        if (lf >= 0 && lf < start) lf = chunk.indexOf(LF, start);
        if (cr >= 0 && cr < start) cr = chunk.indexOf(CR, start);
      }
      if (start < length) hold(state, chunk, start, length);
      return records;
    },

    end(source) {
      const state = states.get(source);
      if (state === undefined) return [];
      state.afterCR = false;
      if (state.lineBytes === 0) return [];
      return [finishHeld(source, state)];
    },

    partial(source) {
      const state = states.get(source);
      if (state === undefined || state.lineBytes === 0) return null;
      // Always cut an incomplete tail: its remaining bytes may still arrive, so it is not a replacement character yet.
      return { text: decodeHeld(state, true), bytes: state.lineBytes, overLimit: state.lineBytes > max };
    },

    partialBytes(source) {
      return states.get(source)?.lineBytes ?? 0;
    },
  };
}

/** Number of LF bytes in `bytes`: the line figure kept per output batch without decoding anything. */
export function countNewlines(bytes: Uint8Array): number {
  const length = bytes.length;
  let count = 0;
  let at = 0;
  // Byte by byte up to a 4-byte boundary (and for short arrays), then four bytes per step: on dense output
  // (short lines) this is about three times faster than one indexOf call per newline.
  const head = length < 64 ? length : (4 - (bytes.byteOffset & 3)) & 3;
  for (; at < head; at++) if (bytes[at] === LF) count++;
  const words = (length - at) >>> 2;
  if (words > 0) {
    const view = new Uint32Array(bytes.buffer, bytes.byteOffset + at, words);
    for (let i = 0; i < words; i++) {
      // XOR turns each LF byte into 0x00; the classic exact zero-byte test sets bit 7 of exactly those bytes, and
      // the multiply adds the four flags into the top byte.
      const x = (view[i] as number) ^ 0x0a0a0a0a;
      const zeros = ~(((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x | 0x7f7f7f7f);
      count += Math.imul(zeros >>> 7, 0x01010101) >>> 24;
    }
    at += words * 4;
  }
  for (; at < length; at++) if (bytes[at] === LF) count++;
  return count;
}
