/**
 * Approximate observed-stream rate (OBS TPS ≈): exposed Unicode code points / 4 over a rolling 2 s window
 * clipped at request start, counted in 100 ms buckets. It is a live arrival rate of visible text, thinking
 * and tool-argument characters, not tokenization and not a rate for hidden reasoning. Pure: the caller
 * passes the monotonic time.
 */
import { OBS_BUCKET_MS, OBS_CHARS_PER_TOKEN, OBS_MIN_SPAN_MS, OBS_WINDOW_MS } from "./constants.ts";

export interface ObsWindow {
  readonly requestStartMono: number;
  /** Bucket index (from request start) → code points that arrived in it; only recent buckets are kept. */
  readonly buckets: Map<number, number>;
  nonEmptyDeltas: number;
  firstDeltaMono: number | null;
  totalCodePoints: number;
}

export function createObsWindow(requestStartMono: number): ObsWindow {
  return { requestStartMono, buckets: new Map(), nonEmptyDeltas: 0, firstDeltaMono: null, totalCodePoints: 0 };
}

export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function bucketOf(w: ObsWindow, mono: number): number {
  return Math.floor(Math.max(0, mono - w.requestStartMono) / OBS_BUCKET_MS);
}

/** Records one delta; empty deltas are ignored (they carry no exposed output). */
export function addDelta(w: ObsWindow, nowMono: number, text: string): number {
  const n = codePoints(text);
  if (n === 0) return 0;
  const b = bucketOf(w, nowMono);
  w.buckets.set(b, (w.buckets.get(b) ?? 0) + n);
  w.nonEmptyDeltas++;
  w.totalCodePoints += n;
  if (w.firstDeltaMono === null) w.firstDeltaMono = nowMono;
  return n;
}

/**
 * The rolling rate in approximate tokens per second, or null while unavailable (fewer than two non-empty
 * deltas, or less than 250 ms since the first). Zero is a real value: silence after output decays to it.
 */
export function obsRate(w: ObsWindow, nowMono: number): number | null {
  if (w.nonEmptyDeltas < 2 || w.firstDeltaMono === null) return null;
  if (nowMono - w.firstDeltaMono < OBS_MIN_SPAN_MS) return null;
  // Clipped at request start, not at the first chunk, so a burst right after a long wait is not inflated.
  const windowStart = Math.max(w.requestStartMono, nowMono - OBS_WINDOW_MS);
  const elapsedMs = nowMono - windowStart;
  if (elapsedMs <= 0) return null;
  const firstBucket = bucketOf(w, windowStart);
  let chars = 0;
  for (const [b, n] of w.buckets) {
    if (b >= firstBucket) chars += n;
    else w.buckets.delete(b); // older than any future window: dropping keeps the map bounded
  }
  return chars / OBS_CHARS_PER_TOKEN / (elapsedMs / 1000);
}
