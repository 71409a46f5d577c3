/**
 * The cost of sampling a job's tree (actors/watch/usage-watch.ts): what every job pays for its figures, its limits and
 * the watchdog. 64 idle jobs (a tagged `sleep` each, as a job's process carries its tag) are each sampled once a
 * second, as an actor samples a job without limits, for SECONDS seconds; the CPU the samples take on this thread is
 * divided by jobs and seconds. The first look of each job, which scans for its tag as the cleanup does, is reported
 * apart: it happens once per job. Linux only (elsewhere there is nothing to sample).
 *
 * Run on its own with `node bench/usage-sampling.ts` (it prints the rows and writes bench/results/usage-sampling.json),
 * or as the `sampling` suite of `npm run bench`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { threadCpuUsage } from "node:process";
import { fileURLToPath } from "node:url";
import { createJobCell, JobCellWriter } from "../mailbox/cell.ts";
import { TAG_VARIABLE } from "../shared/job-tag.ts";
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
  /** CPU of one sample of one idle job, in µs (median of the rounds' averages). */
  sampleMicros: number;
  /** CPU per job per second at one sample a second, in percent of one core. */
  percentOfCorePerJob: number;
  /** CPU of a job's first look (a scan for its tag), in µs, averaged over the jobs. */
  firstLookMicros: number;
}

function cpuMicros(): number {
  const usage = threadCpuUsage();
  return usage.user + usage.system;
}

export async function benchUsageSampling(): Promise<UsageSamplingResult> {
  if (process.platform !== "linux") throw new Error("usage sampling reads /proc: Linux only");
  const children: ChildProcess[] = [];
  const watches: UsageWatch[] = [];
  try {
    for (let i = 0; i < JOBS; i += 1) {
      children.push(spawn("sleep", ["600"], { env: { ...process.env, [TAG_VARIABLE]: `bench-usage/${i}` }, stdio: "ignore" }));
    }
    await waitFor(() => children.every((child) => child.pid !== undefined), 10_000, "every sleep spawned");
    const spawnedAt = Date.now();
    // The watchdog on, as by default; no limits, so each job is sampled once a second.
    const watchdog = { memoryBytes: 4 * 1024 ** 3, cpuPercent: 100, sustainMs: 600_000 };
    const firstLookStart = cpuMicros();
    for (const [i, child] of children.entries()) {
      const watch = new UsageWatch({
        tag: `bench-usage/${i}`,
        pid: child.pid as number,
        spawnedAtEpoch: spawnedAt,
        limits: null,
        watchdog,
        cell: new JobCellWriter(createJobCell()),
        limitPassed: () => {},
        runaway: () => {},
      });
      // The bench drives the samples itself, on a clock it can measure; the first is the job's first look.
      watch.dispose();
      watch.sample();
      watches.push(watch);
    }
    const firstLookMicros = (cpuMicros() - firstLookStart) / JOBS;
    const perRound: number[] = [];
    for (let round = 0; round < SECONDS; round += 1) {
      await sleep(USAGE_SAMPLE_MS);
      const before = cpuMicros();
      for (const watch of watches) watch.sample();
      perRound.push((cpuMicros() - before) / JOBS);
    }
    perRound.sort((a, b) => a - b);
    const sampleMicros = perRound[Math.floor(perRound.length / 2)] as number;
    return {
      jobs: JOBS,
      seconds: SECONDS,
      samples: JOBS * SECONDS,
      sampleMicros: round(sampleMicros, 1),
      percentOfCorePerJob: round(((sampleMicros * (1000 / USAGE_SAMPLE_MS)) / 1_000_000) * 100, 4),
      firstLookMicros: round(firstLookMicros, 1),
    };
  } finally {
    for (const child of children) child.kill("SIGKILL");
  }
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
    { benchmark: "usage sampling", variant: "a job's first look (a scan for its tag, once)", result: `${r.firstLookMicros} µs`, target: "", met: null },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchUsageSampling();
  for (const row of usageSamplingRows(result)) console.log(`| ${row.benchmark} | ${row.variant} | ${row.result} | ${row.target} | ${row.met === null ? "" : row.met ? "met" : "**missed**"} |`);
  const dir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}usage-sampling.json`, `${JSON.stringify({ machine: machineFacts(), result }, null, 2)}\n`);
}
