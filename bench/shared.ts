/**
 * What every benchmark needs: a runtime configured the way an installed copy runs, job requests, small waits,
 * sample statistics and the facts of the machine the figures came from.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { Bench } from "tinybench";

// The runtime and the job requests are the tests' fixtures: the benchmarks measure what the tests exercise.
export { installedRuntime, closeRuntime, jobRequest, MONITOR_LOG_BYTES, monitorRequest, NEVER_MATCHES } from "../tests/fixtures/jobs.ts";
export { sleep };

/**
 * `BENCH_QUICK=1`: every repetition count a suite takes from `repetitions` drops to its quick value. Such a run shows
 * that every row is produced, not what the figures are, so it leaves the saved results as they were.
 */
export const QUICK = process.env.BENCH_QUICK === "1";

export function repetitions(full: number, quick: number): number {
  return QUICK ? quick : full;
}

export async function waitFor(probe: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!probe()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

export interface Summary {
  n: number;
  min: number;
  median: number;
  p90: number;
  max: number;
  mean: number;
}

/** Linear interpolation between order statistics of an ascending array. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low);
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    min: sorted[0] ?? Number.NaN,
    median: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    max: sorted.at(-1) ?? Number.NaN,
    mean: sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length),
  };
}

/**
 * Runs `measure` through tinybench: `warmups` discarded calls, then `iterations` timed ones. Each call returns the
 * milliseconds of the part it measures (tinybench's `overriddenDuration`), so setup and cleanup inside a call,
 * such as awaiting a job's end before the next start, do not count.
 */
export async function sampled(name: string, iterations: number, warmups: number, measure: () => Promise<number>): Promise<Summary> {
  const bench = new Bench({ iterations, time: 0, warmup: warmups > 0, warmupIterations: warmups, warmupTime: 0, throws: true });
  bench.add(name, async () => ({ overriddenDuration: await measure() }), { retainSamples: true });
  await bench.run();
  const result = bench.tasks[0]!.result;
  if (result.state !== "completed") throw new Error(`benchmark ${name} did not complete: ${result.state}`);
  return summarize(result.latency.samples ?? []);
}

/**
 * Runs `script` in a bare Node process (`node -e`, this Node) and resolves with the one number it prints: a baseline
 * measured away from any pi-jobs code. `what` names it in the error when it prints anything else.
 */
export function numberPrintedBy(script: string, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("error", reject);
    child.once("close", () => (out !== "" && Number.isFinite(Number(out)) ? resolve(Number(out)) : reject(new Error(`${what}: ${out}`))));
  });
}

export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

export function ms(value: number): string {
  return value >= 100 ? `${value.toFixed(0)} ms` : value >= 10 ? `${value.toFixed(1)} ms` : `${value.toFixed(2)} ms`;
}

export function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * CPU time (user + system, ms) of this process's main thread alone, from /proc on Linux (in clock ticks of 10 ms);
 * null elsewhere. process.cpuUsage() would add every worker thread in.
 */
export function mainThreadCpuMs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

export interface MachineFacts {
  node: string;
  v8: string;
  platform: string;
  arch: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  /** 1, 5 and 15 minute load averages when the run began: other work on the machine sways every figure. */
  loadAverage: number[];
  date: string;
}

export function machineFacts(): MachineFacts {
  const list = cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: process.platform,
    arch: process.arch,
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? "unknown",
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    loadAverage: loadavg().map((value) => round(value)),
    date: new Date().toISOString(),
  };
}

/** One line of the results table: what was measured, how it came out, and the target it is held to (if any). */
export interface Row {
  benchmark: string;
  variant: string;
  result: string;
  target: string;
  /** null when the row has no target of its own. */
  met: boolean | null;
}
