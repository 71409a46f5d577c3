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
import { monitorEventLoopDelay } from "node:perf_hooks";
import { benchRuntime, closeRuntime, mb, monitorRequest, sleep, type Row } from "./shared.ts";

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
  /** Output bytes that reached the host (pi-jobs) or the main thread (baseline). */
  bytes: number;
  bytesPerSecond: number;
  lines: number;
}

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

function measureDelay<T>(work: () => Promise<T>): Promise<{ figures: Omit<DelayFigures, "bytes" | "bytesPerSecond" | "lines">; value: T }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const began = performance.now();
  return work().then((value) => {
    const windowMs = performance.now() - began;
    histogram.disable();
    // The histogram records nanoseconds.
    const figures = {
      p50: histogram.percentile(50) / 1e6,
      p99: histogram.percentile(99) / 1e6,
      max: histogram.max / 1e6,
      mean: histogram.mean / 1e6,
      windowMs,
    };
    return { figures, value };
  });
}

function withRates(figures: Omit<DelayFigures, "bytes" | "bytesPerSecond" | "lines">, bytes: number, lines: number): DelayFigures {
  return { ...figures, bytes, lines, bytesPerSecond: Math.round(bytes / (figures.windowMs / 1000)) };
}

async function floodActors(): Promise<DelayFigures> {
  const runtime = benchRuntime({ warm: 2 });
  try {
    // Threads for all 16 actors exist before the window opens: this measures a flood, not 16 thread starts.
    const warmers = Array.from({ length: JOBS }, () => runtime.start(monitorRequest("true")));
    await Promise.all(warmers.map((job) => job.done));
    await sleep(500);
    const { figures, value } = await measureDelay(async () => {
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
    let rest = "";
    const onChunk = (chunk: Buffer) => {
      bytes += chunk.length;
      const parts = (rest + chunk.toString("utf8")).split("\n");
      rest = parts.pop() ?? "";
      for (const line of parts) {
        lines += 1;
        if (pattern.test(line)) matches += 1;
      }
    };
    child.stdout.on("data", onChunk);
    child.stderr.on("data", onChunk);
    child.once("error", reject);
    child.once("close", () => resolve({ bytes, lines, matches }));
  });
}

async function floodMainThread(): Promise<DelayFigures> {
  const pattern = new RegExp("NEVER_MATCHES_THIS");
  const { figures, value } = await measureDelay(async () => {
    const runs = await Promise.all(Array.from({ length: JOBS }, () => readNaively(pattern)));
    return runs.reduce((sum, run) => ({ bytes: sum.bytes + run.bytes, lines: sum.lines + run.lines }), { bytes: 0, lines: 0 });
  });
  return withRates(figures, value.bytes, value.lines);
}

async function idle(): Promise<DelayFigures> {
  const { figures } = await measureDelay(() => sleep(1000));
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
  const rate = (figures: DelayFigures) => `; ${mb(figures.bytesPerSecond)}/s moved`;
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
