/**
 * The process table's cost of sampling the trees of 64 idle jobs once a second, with each backend
 * (shared/process-table/): what a runtime pays for the figures, limits, stalls and the watchdog of that many jobs.
 *
 * - `/proc`: each job's actor reads its own tree (its stat, its members' children) on its thread; here one thread
 *   reads all 64 each second and the CPU it takes is divided by rounds and jobs.
 * - `ps`: one `ps` a sample for all the runtime's jobs, run by one of the actor threads, whose rows every thread hands
 *   to its trees. Here the 64 trees are subscribed on a worker thread (as on actor threads) for SECONDS seconds; its
 *   CPU is the sampler's share, and `ps` itself is measured apart (the same command, run as often, timed by the shell's
 *   `times`). Pi's thread (this one) only waits: its CPU over the same time is reported too.
 *
 * Run on its own with `node bench/table-sampling.ts`, or as the `table` suite of `npm run bench`.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { threadCpuUsage } from "node:process";
import { Worker } from "node:worker_threads";
import { procTable } from "../shared/process-table/proc-table.ts";
import { PS_COLUMNS } from "../shared/process-table/ps-rows.ts";
import { TAG_VARIABLE, type TreeSampler } from "../shared/process-table/index.ts";
import { repetitions, round, sleep, waitFor, type Row } from "./shared.ts";

const JOBS = 64;
const SECONDS = repetitions(20, 5);

/** The bound the portable backend is held to: all 64 jobs' sampling, `ps` included, in percent of one core. */
export const TARGETS = { psPercentOfCore: 5, piThreadMicrosPerSecond: 1000 };

export interface TableSamplingResult {
  jobs: number;
  seconds: number;
  /** /proc: CPU of one round (every job sampled once), µs. */
  procSampleMicros: number;
  /** ps: the sampling threads' CPU a round, µs (spawning `ps`, parsing its rows, handing them out). */
  psThreadMicros: number;
  /** ps: the `ps` process's own CPU a round, µs. */
  psProcessMicros: number;
  /** ps: all of it, in percent of one core at one round a second. */
  psPercentOfCore: number;
  /** Pi's thread's CPU per second while the ps backend sampled, µs (it only waits), and while nothing sampled. */
  piThreadMicrosPerSecond: number;
  piThreadIdleMicrosPerSecond: number;
  /** Rounds the first job's tree got, and the members found over all trees and rounds (each job: one process). */
  psRounds: number;
  psMembersPerRound: number;
}

const cpuMicros = (): number => {
  const usage = threadCpuUsage();
  return usage.user + usage.system;
};

async function procRounds(tags: readonly string[], leaders: readonly number[]): Promise<number> {
  const samplers: TreeSampler[] = tags.map((tag, i) =>
    procTable.treeSampler({ tag, leader: leaders[i]!, spawnedAtEpoch: Date.now(), everyMs: 1000, probeEveryMs: 5000, onSample: () => {} })!,
  );
  for (const sampler of samplers) sampler.dispose();
  // The first look of each (a scan for its tag) is apart: it happens once per job.
  for (const sampler of samplers) sampler.readNow!();
  const perRound: number[] = [];
  for (let i = 0; i < SECONDS; i += 1) {
    await sleep(1000);
    const before = cpuMicros();
    for (const sampler of samplers) sampler.readNow!();
    perRound.push(cpuMicros() - before);
  }
  return perRound.reduce((sum, micros) => sum + micros, 0) / perRound.length;
}

/** The `ps` of a sample, run `times` times by one shell, and the children's CPU its `times` reports, µs a run. */
function psProcessMicros(times: number): number {
  const uid = String(process.getuid?.() ?? 0);
  const script = `i=0; while [ $i -lt ${times} ]; do ps eww -U ${uid} -o ${PS_COLUMNS} > /dev/null; i=$((i+1)); done; times`;
  const output = spawnSync("/bin/sh", ["-c", script], { encoding: "utf8", env: { ...process.env, LC_ALL: "C" } }).stdout;
  // `times` prints the shell's user and system time, then its children's: `0m0.123s 0m0.045s`.
  const children = output.trim().split("\n").at(-1)!.split(/\s+/);
  const seconds = (text: string) => {
    const match = /^(\d+)m([\d.]+)s$/.exec(text);
    return match === null ? 0 : Number(match[1]) * 60 + Number(match[2]);
  };
  return ((seconds(children[0]!) + seconds(children[1]!)) * 1e6) / times;
}

/** This thread's CPU per second while it only waits, µs: what it spends with nothing sampling, to compare with. */
async function idleMicrosPerSecond(): Promise<number> {
  const before = cpuMicros();
  const began = performance.now();
  await sleep(SECONDS * 1000);
  return (cpuMicros() - before) / ((performance.now() - began) / 1000);
}

async function psRounds(tags: readonly string[], leaders: readonly number[]) {
  const worker = new Worker(new URL("./table-sampling-thread.ts", import.meta.url), { workerData: { tags, leaders } });
  await new Promise((resolve) => worker.once("message", resolve));
  const piBefore = cpuMicros();
  const began = performance.now();
  await sleep(SECONDS * 1000);
  const piMicros = cpuMicros() - piBefore;
  const seconds = (performance.now() - began) / 1000;
  const answer = new Promise<{ cpuMicros: number; rounds: number; members: number }>((resolve) => worker.once("message", resolve));
  worker.postMessage("stop");
  const result = await answer;
  await worker.terminate();
  return { ...result, piMicrosPerSecond: piMicros / seconds };
}

export async function benchTableSampling(): Promise<TableSamplingResult> {
  if (process.platform !== "linux") throw new Error("the table bench compares the /proc backend: Linux only");
  const runtime = randomBytes(6).toString("hex");
  const tags = Array.from({ length: JOBS }, (_, i) => `${runtime}/job_${i + 1}`);
  const children: ChildProcess[] = tags.map((tag) => spawn("sleep", ["600"], { env: { ...process.env, [TAG_VARIABLE]: tag }, stdio: "ignore" }));
  try {
    await waitFor(() => children.every((child) => child.pid !== undefined), 10_000, "every job spawned");
    const leaders = children.map((child) => child.pid!);
    const procSampleMicros = await procRounds(tags, leaders);
    const idle = await idleMicrosPerSecond();
    const ps = await psRounds(tags, leaders);
    const psThreadMicros = ps.cpuMicros / Math.max(1, ps.rounds);
    const psProcess = psProcessMicros(SECONDS);
    return {
      jobs: JOBS,
      seconds: SECONDS,
      procSampleMicros: round(procSampleMicros, 0),
      psThreadMicros: round(psThreadMicros, 0),
      psProcessMicros: round(psProcess, 0),
      psPercentOfCore: round(((psThreadMicros + psProcess) / 1e6) * 100, 2),
      piThreadMicrosPerSecond: round(ps.piMicrosPerSecond, 0),
      piThreadIdleMicrosPerSecond: round(idle, 0),
      psRounds: ps.rounds,
      psMembersPerRound: round(ps.members / Math.max(1, ps.rounds), 1),
    };
  } finally {
    for (const child of children) child.kill("SIGKILL");
  }
}

export function tableSamplingRows(r: TableSamplingResult): Row[] {
  const perJob = (micros: number) => round(micros / r.jobs, 1);
  return [
    {
      benchmark: "process table",
      variant: `${r.jobs} idle jobs sampled once a second, /proc backend (each actor reads its own tree)`,
      result: `${r.procSampleMicros} µs a sample of all (${perJob(r.procSampleMicros)} µs a job)`,
      target: "baseline",
      met: null,
    },
    {
      benchmark: "process table",
      variant: `the same, portable backend (one \`ps\` a sample for all, on an actor thread; ${r.psMembersPerRound} trees' members a round)`,
      result: `${r.psThreadMicros + r.psProcessMicros} µs a sample (${perJob(r.psThreadMicros + r.psProcessMicros)} µs a job): ${r.psThreadMicros} µs on the thread, ${r.psProcessMicros} µs in \`ps\`; ${r.psPercentOfCore} % of a core`,
      target: `≤ ${TARGETS.psPercentOfCore} % of a core`,
      met: r.psPercentOfCore <= TARGETS.psPercentOfCore,
    },
    {
      benchmark: "process table",
      variant: "Pi's thread meanwhile (it only waits), and with nothing sampling",
      result: `${r.piThreadMicrosPerSecond} µs a second (${r.piThreadIdleMicrosPerSecond} µs with nothing sampling)`,
      target: `≤ ${TARGETS.piThreadMicrosPerSecond} µs a second`,
      met: r.piThreadMicrosPerSecond <= TARGETS.piThreadMicrosPerSecond,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchTableSampling();
  for (const row of tableSamplingRows(result)) console.log(`| ${row.benchmark} | ${row.variant} | ${row.result} | ${row.target} | ${row.met === null ? "" : row.met ? "met" : "**missed**"} |`);
  console.log(JSON.stringify(result));
}
