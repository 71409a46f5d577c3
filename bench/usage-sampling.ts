/**
 * The cost of sampling a job's tree (actors/watch/usage-watch.ts): what every job pays for its figures, its limits and
 * the watchdog. 64 idle jobs (a tagged `sleep` each, as a job's process carries its tag) are each sampled once a
 * second, as an actor samples a job without limits, for SECONDS seconds; the CPU the samples take on this thread is
 * divided by jobs and seconds. The first look of each job (its leader's stat and children; the first probe of
 * the pids allocated since the leader comes with a later sample) is reported apart: it happens once per job. Then 64 forking jobs (a tagged `while :; do sleep 0.1; done` each: the machine
 * allocates 640 pids a second) sampled the same way, and again as a job with a limit samples them, probing the pids
 * allocated anywhere at every sample (shared/process-table/proc-tree.ts). Linux only (elsewhere there is nothing to sample).
 *
 * Run on its own with `node bench/usage-sampling.ts` (it prints the rows and writes bench/results/usage-sampling.json),
 * or as the `sampling` suite of `npm run bench`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { threadCpuUsage } from "node:process";
import { fileURLToPath } from "node:url";
import { createJobCell, JobCellWriter } from "../mailbox/cell.ts";
import type { ResourceLimits } from "../mailbox/spec.ts";
import { TAG_VARIABLE } from "../shared/process-table/index.ts";
import { USAGE_SAMPLE_MS, UsageWatch } from "../actors/watch/usage-watch.ts";
import { machineFacts, repetitions, round, sleep, waitFor, type Row } from "./shared.ts";

const JOBS = 64;
const SECONDS = repetitions(20, 5);

export const TARGETS = { percentOfCorePerJob: 0.1 };

export interface UsageSamplingResult {
  jobs: number;
  seconds: number;
  /** Samples taken (jobs × rounds). */
  samples: number;
  /** CPU of one sample of one idle job, in µs (the mean over the rounds). */
  sampleMicros: number;
  /** CPU per job per second at one sample a second, in percent of one core. */
  percentOfCorePerJob: number;
  /** CPU of a job's first look (its leader's stat and children), in µs, averaged over the jobs. */
  firstLookMicros: number;
  /** CPU of one sample of one forking job, in µs: as a job without limits samples it, and probing at every sample. */
  forkingSampleMicros: number;
  forkingProbingSampleMicros: number;
}

/** Limits no job here reaches: a watch with a limit probes the allocated pids at every sample. */
const UNREACHED_LIMITS: ResourceLimits = { memoryBytes: 2 ** 50, cpuMs: 2 ** 40, processes: 1_000_000 };

function cpuMicros(): number {
  const usage = threadCpuUsage();
  return usage.user + usage.system;
}

/**
 * The CPU of each job's first look and of one later sample, in µs a job: the mean over the rounds, since a job without
 * limits probes the allocated pids in one round of five.
 */
async function sampleJobs(
  name: string,
  command: readonly string[],
  limits: ResourceLimits | null,
): Promise<{ firstLook: number; sample: number }> {
  const children: ChildProcess[] = [];
  const tag = (i: number) => `bench-usage/${process.pid}.${name}.${i}`;
  try {
    for (let i = 0; i < JOBS; i += 1) {
      children.push(spawn(command[0]!, command.slice(1), { env: { ...process.env, [TAG_VARIABLE]: tag(i) }, stdio: "ignore" }));
    }
    await waitFor(() => children.every((child) => child.pid !== undefined), 10_000, "every job spawned");
    const spawnedAt = Date.now();
    // The watchdog on, as by default.
    const watchdog = { memoryBytes: 4 * 1024 ** 3, cpuPercent: 100, sustainMs: 600_000 };
    const watches: UsageWatch[] = [];
    const firstLookStart = cpuMicros();
    for (const [i, child] of children.entries()) {
      const watch = new UsageWatch({
        tag: tag(i),
        pid: child.pid as number,
        spawnedAtEpoch: spawnedAt,
        limits,
        watchdog,
        cell: new JobCellWriter(createJobCell()),
        limitPassed: () => {},
        runaway: () => {},
      });
      // The bench drives the samples itself, once a second, on a clock it can measure; the first is the job's first look.
      watch.dispose();
      watch.sample();
      watches.push(watch);
    }
    const firstLook = (cpuMicros() - firstLookStart) / JOBS;
    const perRound: number[] = [];
    for (let round = 0; round < SECONDS; round += 1) {
      await sleep(USAGE_SAMPLE_MS);
      const before = cpuMicros();
      for (const watch of watches) watch.sample();
      perRound.push((cpuMicros() - before) / JOBS);
    }
    return { firstLook, sample: perRound.reduce((sum, micros) => sum + micros, 0) / perRound.length };
  } finally {
    for (const child of children) child.kill("SIGKILL");
  }
}

const FORKING = ["sh", "-c", "while :; do sleep 0.1; done"];

export async function benchUsageSampling(): Promise<UsageSamplingResult> {
  if (process.platform !== "linux") throw new Error("usage sampling reads /proc: Linux only");
  const idle = await sampleJobs("idle", ["sleep", "600"], null);
  const forking = await sampleJobs("forking", FORKING, null);
  const probing = await sampleJobs("probing", FORKING, UNREACHED_LIMITS);
  return {
    jobs: JOBS,
    seconds: SECONDS,
    samples: JOBS * SECONDS,
    sampleMicros: round(idle.sample, 1),
    percentOfCorePerJob: round(((idle.sample * (1000 / USAGE_SAMPLE_MS)) / 1_000_000) * 100, 4),
    firstLookMicros: round(idle.firstLook, 1),
    forkingSampleMicros: round(forking.sample, 1),
    forkingProbingSampleMicros: round(probing.sample, 1),
  };
}

export function usageSamplingRows(r: UsageSamplingResult): Row[] {
  return [
    {
      benchmark: "usage sampling",
      variant: `CPU per idle job per second (${r.jobs} jobs, one sample a second, watchdog on)`,
      result: `${r.percentOfCorePerJob} % of a core (${r.sampleMicros} µs a sample)`,
      target: `≤ ${TARGETS.percentOfCorePerJob} % of a core`,
      met: r.percentOfCorePerJob <= TARGETS.percentOfCorePerJob,
    },
    { benchmark: "usage sampling", variant: "a job's first look (its leader's stat and children, once)", result: `${r.firstLookMicros} µs`, target: "", met: null },
    {
      benchmark: "usage sampling",
      variant: `a sample of a forking job (${r.jobs} × \`${FORKING[2]}\`), as a job without limits samples it`,
      result: `${r.forkingSampleMicros} µs a sample`,
      target: "",
      met: null,
    },
    {
      benchmark: "usage sampling",
      variant: "the same, probing the pids allocated anywhere at every sample (as a job with a limit does)",
      result: `${r.forkingProbingSampleMicros} µs a sample`,
      target: "baseline",
      met: null,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchUsageSampling();
  for (const row of usageSamplingRows(result)) console.log(`| ${row.benchmark} | ${row.variant} | ${row.result} | ${row.target} | ${row.met === null ? "" : row.met ? "met" : "**missed**"} |`);
  const dir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}usage-sampling.json`, `${JSON.stringify({ machine: machineFacts(), result }, null, 2)}\n`);
}
