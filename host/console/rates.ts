/**
 * Lines and bytes per second of each job, from its running totals sampled at human rate. A rate is the change over
 * the last interval of at least one second; a shorter interval keeps the previous rate, so the 250 ms refresh
 * cannot make the figure jump with every line that happens to fall into one tick. Pure apart from the clock passed in.
 */
export const MIN_RATE_INTERVAL_MS = 1000;

interface Mark {
  at: number;
  lines: number;
  bytes: number;
  linesPerSecond: number | null;
  bytesPerSecond: number | null;
}

/** One job's output per second (the whole runtime's, for the metrics footer, are `JobRates`: host/metrics/views.ts). */
export interface OutputRates {
  linesPerSecond: number | null;
  bytesPerSecond: number | null;
}

export class RateTracker {
  private readonly marks = new Map<string, Mark>();

  observe(key: string, totals: { lines: number; bytes: number }, nowMs: number): OutputRates {
    const mark = this.marks.get(key);
    if (mark === undefined) {
      this.marks.set(key, { at: nowMs, lines: totals.lines, bytes: totals.bytes, linesPerSecond: null, bytesPerSecond: null });
      return { linesPerSecond: null, bytesPerSecond: null };
    }
    const interval = nowMs - mark.at;
    if (interval < MIN_RATE_INTERVAL_MS) return { linesPerSecond: mark.linesPerSecond, bytesPerSecond: mark.bytesPerSecond };
    const seconds = interval / 1000;
    const next: Mark = {
      at: nowMs,
      lines: totals.lines,
      bytes: totals.bytes,
      linesPerSecond: Math.max(0, totals.lines - mark.lines) / seconds,
      bytesPerSecond: Math.max(0, totals.bytes - mark.bytes) / seconds,
    };
    this.marks.set(key, next);
    return { linesPerSecond: next.linesPerSecond, bytesPerSecond: next.bytesPerSecond };
  }

  /** Drops jobs that are no longer listed. */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.marks.keys()) if (!keys.has(key)) this.marks.delete(key);
  }
}
