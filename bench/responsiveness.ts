/**
 * Host responsiveness: event-loop delay on the host thread while 16 processes flood output at full speed for
 * about three seconds each, with every line tested against a pattern.
 *
 * - pi-jobs: 16 monitor actors (a pattern that never matches), so framing and matching happen on the actors'
 *   threads and the host only takes one batch at a time.
 * - naive baseline: the same 16 processes read on the main thread through child_process pipes, each chunk split
 *   into lines and each line tested with a regex there — what an extension without actors would do.
 * An idle host (no load at all) is measured first, so the delay the timer itself has is visible.
 */
import { spawn } from "node:child_process";
import { monitorEventLoopDelay, performance, PerformanceObserver } from "node:perf_hooks";
import { installedRuntime, closeRuntime, mainThreadCpuMs, mb, monitorRequest, round, sleep, type Row } from "./shared.ts";

const JOBS = 16;
const SECONDS = 3;
const LINE = "some line of text that a noisy build would print, again and again, at full speed";
/** `timeout` ends each flood on its own, so every variant runs the same processes for the same time. */
const COMMAND = `timeout ${SECONDS} yes '${LINE}'`;
export const P99_TARGET_MS = 20;

export interface DelayFigures {
  p50: number;
  p99: number;
  max: number;
  mean: number;
  /** Wall time of the measurement window, ms. */
  windowMs: number;
  /** Share of the window the host's event loop was busy (performance.eventLoopUtilization). */
  utilization: number;
  /** CPU time the host thread itself used in the window, ms (Linux; null elsewhere). */
  hostCpuMs: number | null;
  /** Garbage collections on the host thread in the window: count, total and longest, ms. */
  gc: { count: number; totalMs: number; maxMs: number };
  /** Output bytes that reached the host (pi-jobs) or the main thread (baseline). */
  bytes: number;
  bytesPerSecond: number;
  lines: number;
}

type Window = Omit<DelayFigures, "bytes" | "bytesPerSecond" | "lines">;

export interface ResponsivenessResult {
  jobs: number;
  seconds: number;
  command: string;
  idle: DelayFigures;
  piJobs: DelayFigures;
  baseline: DelayFigures;
  target: string;
  met: boolean;
}

async function measureWindow<T>(work: () => Promise<T>): Promise<{ figures: Window; value: T }> {
  const gcs: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcs.push(entry.duration);
  });
  observer.observe({ entryTypes: ["gc"] });
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const cpuBefore = mainThreadCpuMs();
  const loopBefore = performance.eventLoopUtilization();
  const began = performance.now();
  const value = await work();
  const windowMs = performance.now() - began;
  const loop = performance.eventLoopUtilization(loopBefore);
  const cpuAfter = mainThreadCpuMs();
  histogram.disable();
  // Entries still buffered in the observer belong to this window too.
  for (const entry of observer.takeRecords()) gcs.push(entry.duration);
  observer.disconnect();
  // The histogram records nanoseconds.
  const figures: Window = {
    p50: histogram.percentile(50) / 1e6,
    p99: histogram.percentile(99) / 1e6,
    max: histogram.max / 1e6,
    mean: histogram.mean / 1e6,
    windowMs,
    utilization: round(loop.utilization, 3),
    hostCpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
    gc: { count: gcs.length, totalMs: round(gcs.reduce((sum, ms) => sum + ms, 0), 1), maxMs: round(Math.max(0, ...gcs), 1) },
  };
  return { figures, value };
}

function withRates(figures: Window, bytes: number, lines: number): DelayFigures {
  return { ...figures, bytes, lines, bytesPerSecond: Math.round(bytes / (figures.windowMs / 1000)) };
}

async function floodActors(): Promise<DelayFigures> {
  const runtime = installedRuntime({ warm: 2 });
  try {
    // Threads for all 16 actors exist before the window opens: this measures a flood, not 16 thread starts.
    const warmers = Array.from({ length: JOBS }, () => runtime.start(monitorRequest("true")));
    await Promise.all(warmers.map((job) => job.done));
    await sleep(500);
    const { figures, value } = await measureWindow(async () => {
      const jobs = Array.from({ length: JOBS }, () => runtime.start(monitorRequest(COMMAND)));
      const results = await Promise.all(jobs.map((job) => job.done));
      for (const result of results) {
        if (result.cause !== "exit") throw new Error(`flood job ended with ${result.cause}: ${result.message ?? ""}`);
      }
      // What reached the host, counted by the host itself (constant work per batch).
      return jobs.reduce((sum, job) => ({ bytes: sum.bytes + job.figures().bytes, lines: sum.lines + job.figures().lines }), {
        bytes: 0,
        lines: 0,
      });
    });
    return withRates(figures, value.bytes, value.lines);
  } finally {
    await closeRuntime(runtime);
  }
}

/** One process read on the main thread, each line tested: the work the actors take off the host. */
function readNaively(pattern: RegExp): Promise<{ bytes: number; lines: number; matches: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", COMMAND], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    let bytes = 0;
    let lines = 0;
    let matches = 0;
    // Each stream keeps its own unterminated line.
    const reader = () => {
      let rest = "";
      return (chunk: Buffer) => {
        bytes += chunk.length;
        const parts = (rest + chunk.toString("utf8")).split("\n");
        rest = parts.pop() ?? "";
        for (const line of parts) {
          lines += 1;
          if (pattern.test(line)) matches += 1;
        }
      };
    };
    child.stdout.on("data", reader());
    child.stderr.on("data", reader());
    child.once("error", reject);
    child.once("close", () => resolve({ bytes, lines, matches }));
  });
}

async function floodMainThread(): Promise<DelayFigures> {
  const pattern = new RegExp("NEVER_MATCHES_THIS");
  const { figures, value } = await measureWindow(async () => {
    const runs = await Promise.all(Array.from({ length: JOBS }, () => readNaively(pattern)));
    return runs.reduce((sum, run) => ({ bytes: sum.bytes + run.bytes, lines: sum.lines + run.lines }), { bytes: 0, lines: 0 });
  });
  return withRates(figures, value.bytes, value.lines);
}

async function idle(): Promise<DelayFigures> {
  const { figures } = await measureWindow(() => sleep(1000));
  return withRates(figures, 0, 0);
}

export async function benchResponsiveness(): Promise<ResponsivenessResult> {
  const idleFigures = await idle();
  const piJobs = await floodActors();
  await sleep(500);
  const baseline = await floodMainThread();
  return {
    jobs: JOBS,
    seconds: SECONDS,
    command: COMMAND,
    idle: idleFigures,
    piJobs,
    baseline,
    target: `pi-jobs host p99 event-loop delay ≤ ${P99_TARGET_MS} ms`,
    met: piJobs.p99 <= P99_TARGET_MS,
  };
}

export function responsivenessRows(result: ResponsivenessResult): Row[] {
  const delay = (figures: DelayFigures) =>
    `p50 ${figures.p50.toFixed(1)} / p99 ${figures.p99.toFixed(1)} / max ${figures.max.toFixed(1)} ms`;
  const rate = (figures: DelayFigures) =>
    `; ${mb(figures.bytesPerSecond)}/s moved; host busy ${(figures.utilization * 100).toFixed(0)}%` +
    (figures.hostCpuMs === null ? "" : `, host CPU ${((figures.hostCpuMs / figures.windowMs) * 1000).toFixed(0)} ms/s`);
  return [
    {
      benchmark: `host responsiveness: ${result.jobs} × \`yes\` for ${result.seconds} s`,
      variant: "idle host (no jobs), for reference",
      result: delay(result.idle),
      target: "—",
      met: null,
    },
    {
      benchmark: "",
      variant: `pi-jobs, ${result.jobs} monitor actors`,
      result: delay(result.piJobs) + rate(result.piJobs),
      target: `p99 ≤ ${P99_TARGET_MS} ms`,
      met: result.met,
    },
    {
      benchmark: "",
      variant: "naive: pipes + split + regex per line on the main thread",
      result: delay(result.baseline) + rate(result.baseline),
      target: "baseline",
      met: null,
    },
  ];
}
