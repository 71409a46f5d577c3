/**
 * What every benchmark needs: a runtime configured the way an installed copy runs, job requests, small waits,
 * sample statistics and the facts of the machine the figures came from.
 */
import { readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { Bench } from "tinybench";
import { createJobRuntime, type RuntimeOptions, type SupervisedRuntime } from "../host/runtime.ts";
import type { StartRequest } from "../host/runtime-api.ts";
import type { MonitorContract } from "../mailbox/monitor.ts";

export { sleep };

/** A contract whose pattern never matches: every line is framed and tested, and the run ends with the process. */
export const NEVER_MATCHES: MonitorContract = { resultPattern: "NEVER_MATCHES_THIS", failurePattern: null, completion: "exit" };

/** The log quota the monitor tool gives each monitor (host/monitor/service.ts). */
export const MONITOR_LOG_BYTES = 16 * 1024 * 1024;

/**
 * A runtime as an installed copy runs it: mailbox schema checks off (they are a development aid, see
 * docs/decisions.md), and a log budget large enough that repeated runs never end a job on the session quota.
 */
export function benchRuntime(options: RuntimeOptions = {}): SupervisedRuntime {
  return createJobRuntime({ checkMessages: false, logBudgetBytes: 64 * 1024 * 1024 * 1024, ...options });
}

/** Shuts the runtime down and removes the logs its jobs wrote, so a run leaves no gigabytes behind in tmp. */
export async function closeRuntime(runtime: SupervisedRuntime): Promise<void> {
  await runtime.shutdown();
  // Retries: an actor cancelled while its thread booted may still be closing its log file.
  if (runtime.logDir !== "") rmSync(runtime.logDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

export function jobRequest(command: string, overrides: Partial<StartRequest> = {}): StartRequest {
  return {
    kind: "shell",
    command,
    shell: "/bin/sh",
    cwd: tmpdir(),
    io: { kind: "pipes", stdin: false },
    timeoutMs: 120_000,
    killGraceMs: 1000,
    log: { maxBytes: MONITOR_LOG_BYTES, onQuota: "truncate" },
    label: command.slice(0, 40),
    ...overrides,
  };
}

export function monitorRequest(command: string, overrides: Partial<StartRequest> = {}): StartRequest {
  return jobRequest(command, { kind: "monitor", contract: NEVER_MATCHES, ...overrides });
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
