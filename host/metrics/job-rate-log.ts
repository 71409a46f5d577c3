/**
 * The job runtime's rates sampled on the same 250 ms tick: the latest value, peaks and a bounded window
 * (about one minute) for /metrics. Pure.
 */
import type { JobRates } from "./views.ts";

export const JOB_WINDOW = 240;

export interface JobRateSample extends JobRates {
  tMono: number;
}

export class JobRateLog {
  private readonly window: JobRateSample[] = [];
  latest: JobRates | null = null;
  samples = 0;
  peakRunning = 0;
  peakLinesPerSecond = 0;
  peakBytesPerSecond = 0;
  peakEventLoopDelayP99Ms: number | null = null;

  push(tMono: number, f: JobRates | null): void {
    this.latest = f;
    if (f === null) return;
    this.samples++;
    this.window.push({ ...f, tMono });
    if (this.window.length > JOB_WINDOW) this.window.shift();
    this.peakRunning = Math.max(this.peakRunning, f.running);
    this.peakLinesPerSecond = Math.max(this.peakLinesPerSecond, f.linesPerSecond);
    this.peakBytesPerSecond = Math.max(this.peakBytesPerSecond, f.bytesPerSecond);
    if (f.eventLoopDelayP99Ms !== null) this.peakEventLoopDelayP99Ms = Math.max(this.peakEventLoopDelayP99Ms ?? 0, f.eventLoopDelayP99Ms);
  }

  recent(): readonly JobRateSample[] {
    return this.window;
  }

  /** Shown in the footer only while jobs run. */
  active(): JobRates | null {
    return this.latest !== null && this.latest.running > 0 ? this.latest : null;
  }
}
