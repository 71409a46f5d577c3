/**
 * Lifecycle: what a job costs from the start call to its result, beside a plain `child_process.spawn` of the same
 * command measured in the same run, for the checkout and for the installed copy (bench/copy.ts).
 *
 * - start → result: 30 sequential `echo DONE` on a warm pool (shell jobs and monitors), and the spawn → 'close' of
 *   the same command;
 * - first job on a warm thread: a fresh runtime, its warm threads started and given time to load, then one job;
 * - burst: 64 jobs started in one tick, until all 64 processes exist (the `spawned` state), on a fresh runtime and
 *   again on the same runtime right after (its threads kept from the first burst), beside 64 plain spawns;
 * - short jobs: `BENCH_SHORT_JOBS` (default 10,000; 50 under `BENCH_QUICK=1`) monitors of `echo`, 32 at a time:
 *   wall time and CPU (this process's threads plus its reaped children), beside plain spawns of the same;
 *   and beside the floor of pi-jobs' start and exit path: a thread per job starting it through pi-jobs' spawner, and
 *   nothing else (bench/thread-spawns.ts);
 * - the CPU of one short job: 1,000 more on the same runtime, its threads made by then, this process's own CPU (Pi's
 *   thread and the actor threads) per job, beside a plain spawn's parent per spawn: work added to every job shows here;
 * - a sentinel: the line printed → the monitor's result, beside a reader on this thread (bench/sentinel.ts).
 *
 * The plain spawns and the floor run in fresh Node processes of their own, as a small process spawns.
 */
import type { JobHandle } from "../host/runtime/api.ts";
import type { SupervisedRuntime } from "../host/runtime/runtime.ts";
import { cpuWall, type CpuWall } from "./cpu-wall.ts";
import { plainSpawnsInChild, type PlainSpawns } from "./plain-spawns.ts";
import { mainThreadSentinel, monitorSentinel } from "./sentinel.ts";
import { threadSpawnsInChild } from "./thread-spawns.ts";
import { COPIES, copyLabel, loadCopy, type Copy, type LoadedCopy } from "./copy.ts";
import { removeInstalledPackage } from "./installed.ts";
import { closeRuntime, jobRequest, monitorRequest, ms, repetitions, round, sleep, summarize, waitFor, type Row, type Summary } from "./shared.ts";

const SEQUENTIAL = repetitions(30, 3);
const FIRST_ON_WARM = repetitions(5, 1);
const BURST = 64;
const BURST_REPEATS = repetitions(2, 1);
const SHORT_CONCURRENCY = 32;
const shortJobs = (): number => Number(process.env.BENCH_SHORT_JOBS ?? repetitions(10_000, 50));
/** Short jobs whose CPU is divided per job, run after the others on the same runtime (its threads already made). */
const PER_JOB_CPU_JOBS = repetitions(1000, 50);

export const TARGETS = {
  startToResult: 1.5,
  firstOnWarm: 2,
  burstInstalledMs: 1000,
  burstCheckoutMs: 2000,
  shortJobsWall: 1.5,
  shortJobsCpu: 3,
  sentinelMs: 2,
};

export interface LifecycleVariant {
  copy: Copy;
  shellStartToResult: Summary;
  monitorStartToResult: Summary;
  /** A monitor's sentinel line printed → its result on this thread. */
  sentinelToResult: Summary;
  firstOnWarm: Summary;
  burstFresh: Summary;
  burstAgain: Summary;
  shortMonitors: CpuWall;
  /** PER_JOB_CPU_JOBS more on the same runtime, its threads made. */
  steadyMonitors: CpuWall;
}

export interface LifecycleResult extends PlainSpawns {
  /** The short jobs run by a thread per job through pi-jobs' spawner, and nothing else, in a fresh process. */
  threadSpawns: CpuWall;
  /** A sentinel line printed → seen by a reader on this thread, as it is, and once it stopped the group and saw it gone. */
  sentinelNaive: Summary;
  sentinelStopped: Summary;
  variants: LifecycleVariant[];
}

async function startToResult(runtime: SupervisedRuntime, kind: "shell" | "monitor"): Promise<number> {
  const request = kind === "shell" ? jobRequest("echo DONE") : monitorRequest("echo DONE");
  const job = runtime.start(request);
  const result = await job.done;
  if (result.cause !== "exit") throw new Error(`echo job ended with ${result.cause}: ${result.message ?? ""}`);
  return performance.now() - job.requestedAt;
}

async function sequential(runtime: SupervisedRuntime, kind: "shell" | "monitor"): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < SEQUENTIAL + 3; i += 1) {
    // A pause between starts, as between two tool calls: the previous job's thread is back in the pool.
    await sleep(30);
    const took = await startToResult(runtime, kind);
    if (i >= 3) samples.push(took);
  }
  return summarize(samples);
}

/** A fresh runtime whose warm threads have had time to load, so the measured start is the first on its thread. */
async function loadedRuntime(pkg: LoadedCopy): Promise<SupervisedRuntime> {
  const runtime = pkg.runtime();
  runtime.warmUp();
  await waitFor(() => runtime.threads() >= 2, 30_000, "warm threads");
  await sleep(1500);
  return runtime;
}

async function firstOnWarm(pkg: LoadedCopy): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < FIRST_ON_WARM; i += 1) {
    const runtime = await loadedRuntime(pkg);
    try {
      samples.push(await startToResult(runtime, "monitor"));
    } finally {
      await closeRuntime(runtime);
    }
  }
  return summarize(samples);
}

/** Starts 64 jobs in one tick; resolves with the ms until every one is past `starting` (its process exists). */
async function burst(runtime: SupervisedRuntime): Promise<number> {
  const began = performance.now();
  const jobs: JobHandle[] = [];
  for (let i = 0; i < BURST; i += 1) jobs.push(runtime.start(jobRequest("sleep 300", { killGraceMs: 200 })));
  await waitFor(() => jobs.every((job) => job.phase() !== "starting"), 120_000, "all 64 processes");
  const took = performance.now() - began;
  const ended = jobs.find((job) => job.phase() === "ended");
  if (ended) throw new Error(`a burst job ended before it was measured: ${ended.result()?.cause} ${ended.result()?.message ?? ""}`);
  await Promise.all(jobs.map((job) => job.stop("SIGKILL")));
  return took;
}

async function bursts(pkg: LoadedCopy): Promise<{ fresh: Summary; again: Summary }> {
  const fresh: number[] = [];
  const again: number[] = [];
  for (let i = 0; i < BURST_REPEATS; i += 1) {
    const runtime = await loadedRuntime(pkg);
    try {
      fresh.push(await burst(runtime));
      await sleep(500);
      again.push(await burst(runtime));
    } finally {
      await closeRuntime(runtime);
    }
    await sleep(500);
  }
  return { fresh: summarize(fresh), again: summarize(again) };
}

async function shortMonitors(pkg: LoadedCopy): Promise<{ all: CpuWall; steady: CpuWall }> {
  const runtime = await loadedRuntime(pkg);
  const one = async () => {
    const result = await runtime.start(monitorRequest("echo DONE")).done;
    if (result.cause !== "exit") throw new Error(`echo monitor ended with ${result.cause}: ${result.message ?? ""}`);
  };
  try {
    const all = await cpuWall(shortJobs(), SHORT_CONCURRENCY, one);
    return { all, steady: await cpuWall(PER_JOB_CPU_JOBS, SHORT_CONCURRENCY, one) };
  } finally {
    await closeRuntime(runtime);
  }
}

async function variant(copy: Copy): Promise<LifecycleVariant> {
  const pkg = await loadCopy(copy);
  console.error(`  lifecycle (${copy}): start → result`);
  const runtime = await loadedRuntime(pkg);
  let shellStartToResult: Summary;
  let monitorStartToResult: Summary;
  let sentinelToResult: Summary;
  try {
    shellStartToResult = await sequential(runtime, "shell");
    monitorStartToResult = await sequential(runtime, "monitor");
    sentinelToResult = await monitorSentinel(runtime);
  } finally {
    await closeRuntime(runtime);
  }
  console.error(`  lifecycle (${copy}): first job on a warm thread`);
  const first = await firstOnWarm(pkg);
  console.error(`  lifecycle (${copy}): 64-job bursts`);
  const burstsMeasured = await bursts(pkg);
  console.error(`  lifecycle (${copy}): ${shortJobs()} short monitors`);
  const short = await shortMonitors(pkg);
  return {
    copy,
    shellStartToResult,
    monitorStartToResult,
    sentinelToResult,
    firstOnWarm: first,
    burstFresh: burstsMeasured.fresh,
    burstAgain: burstsMeasured.again,
    shortMonitors: short.all,
    steadyMonitors: short.steady,
  };
}

export async function benchLifecycle(): Promise<LifecycleResult> {
  console.error(`  lifecycle: plain spawns, ${shortJobs()} short ones, in a fresh process`);
  const plain = await plainSpawnsInChild({ shortJobs: shortJobs(), burst: BURST, burstRepeats: BURST_REPEATS, sequential: SEQUENTIAL, concurrency: SHORT_CONCURRENCY });
  console.error(`  lifecycle: a thread per job through the spawner, ${shortJobs()} short ones, in a fresh process`);
  const threadSpawns = await threadSpawnsInChild(shortJobs(), SHORT_CONCURRENCY);
  console.error("  lifecycle: a sentinel read on this thread");
  const sentinel = await mainThreadSentinel();
  const variants: LifecycleVariant[] = [];
  for (const copy of COPIES) variants.push(await variant(copy));
  return { ...plain, threadSpawns, sentinelNaive: sentinel.naive, sentinelStopped: sentinel.stopped, variants };
}

const ratio = (value: number, base: number) => `${(value / base).toFixed(2)}×`;

export function lifecycleRows(result: LifecycleResult): Row[] {
  const base = result.spawnToClose.median;
  const spawn = result.shortSpawn;
  const rows: Row[] = [
    {
      benchmark: "lifecycle: `echo DONE` start → result",
      variant: `plain \`child_process.spawn\` → 'close', from a fresh Node process (${result.rssMiB} MiB)`,
      result: `${ms(base)} median (p90 ${ms(result.spawnToClose.p90)})`,
      target: "baseline",
      met: null,
    },
  ];
  for (const v of result.variants) {
    const where = copyLabel(v.copy);
    for (const [kind, summary] of [["shell job", v.shellStartToResult], ["monitor", v.monitorStartToResult]] as const) {
      rows.push({
        benchmark: "",
        variant: `${kind}, warm pool, ${where}`,
        result: `${ms(summary.median)} median (p90 ${ms(summary.p90)}) = ${ratio(summary.median, base)} spawn`,
        target: `≤ ${TARGETS.startToResult}× spawn`,
        met: summary.median <= TARGETS.startToResult * base,
      });
    }
    rows.push({
      benchmark: "",
      variant: `first monitor on a fresh runtime's loaded warm thread, ${where}`,
      result: `${ms(v.firstOnWarm.median)} median = ${ratio(v.firstOnWarm.median, v.monitorStartToResult.median)} a warm start`,
      target: `≤ ${TARGETS.firstOnWarm}× warm start`,
      met: v.firstOnWarm.median <= TARGETS.firstOnWarm * v.monitorStartToResult.median,
    });
  }
  rows.push(
    {
      benchmark: "lifecycle: a sentinel line printed → the result (`completion: match`)",
      variant: "naive: a reader on this thread sees the line (the process left running)",
      result: `${ms(result.sentinelNaive.median)} median (p90 ${ms(result.sentinelNaive.p90)})`,
      target: "baseline",
      met: null,
    },
    {
      benchmark: "",
      variant: "floor: the same reader stops the process's group and sees it gone first, as a monitor's result does",
      result: `${ms(result.sentinelStopped.median)} median (p90 ${ms(result.sentinelStopped.p90)})`,
      target: "baseline",
      met: null,
    },
  );
  for (const v of result.variants) {
    const summary = v.sentinelToResult;
    rows.push({
      benchmark: "",
      variant: `monitor, warm pool, ${copyLabel(v.copy)}`,
      result: `${ms(summary.median)} median (p90 ${ms(summary.p90)}) = ${ratio(summary.median, result.sentinelStopped.median)} the floor`,
      target: `≤ ${TARGETS.sentinelMs} ms median`,
      met: summary.median <= TARGETS.sentinelMs,
    });
  }
  rows.push({
    benchmark: "lifecycle: 64 jobs in one tick, until all 64 processes exist",
    variant: "64 plain spawns → 'spawn', from the same fresh process",
    result: `${ms(result.burstSpawn.median)} median`,
    target: "baseline",
    met: null,
  });
  for (const v of result.variants) {
    const target = v.copy === "installed" ? TARGETS.burstInstalledMs : TARGETS.burstCheckoutMs;
    const where = copyLabel(v.copy);
    rows.push({
      benchmark: "",
      variant: `${where}, fresh runtime (2 warm threads)`,
      result: `${ms(v.burstFresh.median)} median (max ${ms(v.burstFresh.max)})`,
      target: `≤ ${target} ms`,
      met: v.burstFresh.median <= target,
    });
    rows.push({
      benchmark: "",
      variant: `${where}, again on the same runtime (threads kept from the first burst)`,
      result: `${ms(v.burstAgain.median)} median (max ${ms(v.burstAgain.max)})`,
      target: `≤ ${target} ms`,
      met: v.burstAgain.median <= target,
    });
  }
  const cell = (run: CpuWall) => `wall ${(run.wallMs / 1000).toFixed(1)} s, CPU ${(run.cpuMs / 1000).toFixed(1)} s`;
  rows.push({
    benchmark: `lifecycle: ${spawn.jobs} short jobs (\`echo\`), ${SHORT_CONCURRENCY} at a time`,
    variant: "plain `child_process.spawn`, from the same fresh process",
    result: cell(spawn),
    target: "baseline",
    met: null,
  });
  const floor = result.threadSpawns;
  rows.push({
    benchmark: "",
    variant: `floor of pi-jobs' start and exit path: ${SHORT_CONCURRENCY} warm threads in a fresh process, each job through pi-jobs' spawner, nothing else`,
    result: `${cell(floor)} = ${ratio(floor.wallMs, spawn.wallMs)} wall, ${ratio(floor.cpuMs, spawn.cpuMs)} CPU`,
    target: "baseline",
    met: null,
  });
  for (const { copy, shortMonitors: run } of result.variants) {
    const met = run.wallMs <= TARGETS.shortJobsWall * spawn.wallMs && run.cpuMs <= TARGETS.shortJobsCpu * spawn.cpuMs;
    const target = `≤ ${TARGETS.shortJobsWall}× spawn wall, ≤ ${TARGETS.shortJobsCpu}× CPU`;
    const said = `${cell(run)} = ${ratio(run.wallMs, spawn.wallMs)} wall, ${ratio(run.cpuMs, spawn.cpuMs)} CPU; ${ratio(run.wallMs, floor.wallMs)} the floor's wall`;
    rows.push({ benchmark: "", variant: `monitors, ${copyLabel(copy)}`, result: said, target, met });
  }
  const perJob = (run: CpuWall, part: "ownCpuMs" | "cpuMs") => run[part] / run.jobs;
  const plainOwn = perJob(spawn, "ownCpuMs");
  rows.push({
    benchmark: `lifecycle: CPU of one short job (\`echo\`, ${SHORT_CONCURRENCY} at a time, threads already made)`,
    variant: "plain `child_process.spawn`: the parent's own CPU per spawn (with the process: all of it)",
    result: `${ms(plainOwn)} per spawn (${ms(perJob(spawn, "cpuMs"))} with the process)`,
    target: "baseline",
    met: null,
  });
  for (const v of result.variants) {
    const run = v.steadyMonitors;
    rows.push({
      benchmark: "",
      variant: `monitor, ${copyLabel(v.copy)}: Pi's thread and the actor threads (with the spawner and the processes: all of it), ${run.jobs} jobs`,
      result: `${ms(perJob(run, "ownCpuMs"))} per job = ${ratio(perJob(run, "ownCpuMs"), plainOwn)} a spawn's parent (${ms(perJob(run, "cpuMs"))} with the processes)`,
      target: "—",
      met: null,
    });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const result = await benchLifecycle();
    console.log(JSON.stringify(result, null, 2));
    for (const row of lifecycleRows(result)) console.log(`| ${row.benchmark} | ${row.variant} | ${row.result} | ${row.target} |`);
  } finally {
    await removeInstalledPackage();
  }
}
