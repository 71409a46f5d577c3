/**
 * UTF-8 character boundaries in raw bytes, for every place that cuts output: the framer at a line's bound, the
 * unread head and tail, a capture clipped to its byte bound. Pure, and used on both threads. Invalid bytes are left
 * for the decoder to replace; only a character that is really cut counts.
 */

/** Length of the sequence a lead byte announces, or 0 for a continuation byte or one that never starts a character. */
function sequenceLength(byte: number): number {
  if (byte < 0x80) return 1;
  if (byte >= 0xc2 && byte <= 0xdf) return 2;
  if (byte >= 0xe0 && byte <= 0xef) return 3;
  if (byte >= 0xf0 && byte <= 0xf4) return 4;
  return 0;
}

const isContinuation = (byte: number): boolean => (byte & 0xc0) === 0x80;

/** Bytes at the end of `bytes[0, end)` that start a character they do not finish: cut before them, none is split. */
export function incompleteSuffix(bytes: Uint8Array, end = bytes.length): number {
  for (let back = 1; back <= 3 && back <= end; back += 1) {
    const byte = bytes[end - back] as number;
    if (isContinuation(byte)) continue;
    return sequenceLength(byte) > back ? back : 0;
  }
  return 0;
}

/** Continuation bytes at the start of `bytes`: the rest of a character cut off in front. */
export function leadingContinuations(bytes: Uint8Array): number {
  let n = 0;
  while (n < 3 && n < bytes.length && isContinuation(bytes[n] as number)) n += 1;
  return n;
}
