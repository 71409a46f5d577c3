/**
 * The job runtime's rates for the shared 250 ms sampler: running jobs, output lines and bytes per second since
 * the previous sample, and the host thread's event-loop delay (p99 over the same interval). Everything comes from
 * counters the runtime keeps in constant work per batch; reading them costs nothing per line.
 */
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import type { JobRates } from "../metrics/views.ts";
import type { SupervisedRuntime } from "./runtime.ts";

export interface JobRateSampler {
  /** One sample: rates since the previous call. */
  sample(): JobRates;
  /** Measures the event-loop delay while a session is live. */
  start(): void;
  stop(): void;
}

export function createJobRateSampler(runtime: () => SupervisedRuntime): JobRateSampler {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let last = { at: performance.now(), ...runtime().totals() };
  return {
    sample() {
      const now = { at: performance.now(), ...runtime().totals() };
      const seconds = Math.max((now.at - last.at) / 1000, 1e-3);
      // A new runtime (after a session switch) starts its counters at zero again.
      const bytes = Math.max(0, now.bytes - last.bytes);
      const lines = Math.max(0, now.lines - last.lines);
      last = now;
      const p99 = delay.count > 0 ? delay.percentile(99) / 1e6 : null;
      delay.reset();
      return { running: runtime().list().length, linesPerSecond: lines / seconds, bytesPerSecond: bytes / seconds, eventLoopDelayP99Ms: p99 };
    },
    start: () => void delay.enable(),
    stop: () => void delay.disable(),
  };
}
