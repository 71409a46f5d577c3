/**
 * Starts under load: whether a batch of jobs that keep the machine busy all get started, and whether Pi's thread stays
 * smooth while CPU-bound jobs run (docs/decisions/scheduling-group.md).
 *
 * - The floor: 64 empty worker threads started at once by a bare Node process, on the idle machine, in the same run:
 *   what any design that gives each job a thread pays at least. Beside it, what such a design pays at least with
 *   pi-jobs' code: 64 threads that load the actor thread's compiled entry and do nothing else. Each batch below is
 *   also judged against a floor measured just before it: this machine's speed drifts by a third over minutes, and a
 *   floor taken minutes before a batch made its ratio as much a reading of the drift as of the batch.
 * - A busy batch: 64 jobs that poll (`while :; do sleep 0.1; done`: a fork and an exec ten times a second each; 64 of
 *   them keep both cores of a 2-core machine busy) started in one batch on a fresh runtime, until every one runs; then
 *   held for a while, during which the supervisor must stop none of them.
 * - An idle batch: the same with `sleep 600`; beside it the same batch with threads that compile the actor's code
 *   without the pool's shared code cache (actors/thread/cached-entry.ts), each on its own, as before there was one,
 *   the same batch started through the Node spawner (spawner/spawner.ts) instead of the perl one, and the plainest
 *   start a design with a thread per job has: a bare Node process whose 64 threads each `spawn` their `sleep 600`.
 *   A batch lasts a few seconds and single batches spread by a fifth either way, so these run in rounds, one of each
 *   per round in an order that turns, enough rounds for a median to say which side of a target a batch lies.
 * - 32 CPU-bound jobs (`yes > /dev/null`) running: `echo x` start → result, and Pi's event-loop delay meanwhile;
 *   beside the same with every process started by plain `child_process.spawn` on Pi's thread, each in a session of
 *   its own, as an extension without actors does.
 * - 64 jobs stopped at once, by a shutdown and by the supervisor taking every one over: the longest stretch Pi's
 *   thread was blocked (bench/takeover-loop.ts); beside it the same stretch in a bare Node process whose 64 lowered
 *   threads stop at once, the floor of any design that runs the jobs' actors as threads of Pi's process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { RuntimeOptions, SupervisedRuntime } from "../host/runtime/runtime.ts";
import type { JobHandle } from "../host/runtime/api.ts";
import { claimCodeCache, createCodeCache, writeCodeCache } from "../mailbox/code-cache.ts";
import { COPIES, copyLabel, loadCopy, type Copy, type LoadedCopy } from "./copy.ts";
import { benchTakeoverLoop, STOP_CPU_MS, stopFloorMs, TARGET_MAX_BLOCKED_MS, type TakeoverLoopResult } from "./takeover-loop.ts";
import { closeRuntime, jobRequest, ms, numberPrintedBy, repetitions, round, sleep, summarize, waitFor, type Row, type Summary } from "./shared.ts";

const BATCH = 64;
const CPU_JOBS = 32;
const ECHO_STARTS = repetitions(15, 3);
const BATCH_RUNS = repetitions(3, 1);
/** Rounds of the idle batches: one batch of each kind per round. */
const IDLE_ROUNDS = repetitions(7, 1);
/** How long a started busy batch is held while the supervisor could wrongly stop its jobs. */
const HOLD_MS = repetitions(10_000, 2_000);
const POLLING = "while :; do sleep 0.1; done";
/** A batch that has not started by then is reported as such, not waited for. */
const BATCH_LIMIT_MS = 180_000;

/**
 * 64 worker threads started at once by a bare Node process, each running `body` and then answering: milliseconds
 * until every one has answered.
 */
const barePerThread = (body: string) => `
const { Worker } = require("node:worker_threads");
const began = performance.now();
const threads = [];
Promise.all(Array.from({ length: ${BATCH} }, () => new Promise((resolve) => {
  const worker = new Worker(${JSON.stringify(body)}, { eval: true });
  threads.push(worker);
  worker.once("message", resolve);
}))).then(async () => {
  process.stdout.write(String(performance.now() - began));
  await Promise.all(threads.map((worker) => worker.terminate()));
});`;

const EMPTY = "require('node:worker_threads').parentPort.postMessage(1)";
/** The thread loads `entry` (a module's URL) as the pool's threads do (piscina's require()), then answers. */
const loading = (entry: URL) => `require(${JSON.stringify(fileURLToPath(entry))}); require('node:worker_threads').parentPort.postMessage(1)`;

function threadsStarted(body: string): Promise<number> {
  return numberPrintedBy(barePerThread(body), "bare threads");
}

/**
 * 64 threads of a bare Node process that each start `sleep 600` with `child_process.spawn`, in a session of its own as
 * a job needs a group of its own, and answer with its pid at the 'spawn' event (0 at an 'error' one): milliseconds until
 * every one has answered. Then every one's session is killed, so that nothing of the run is left.
 */
const SPAWNING_THREADS = `
const { Worker } = require("node:worker_threads");
const body = "const child = require('node:child_process').spawn('/bin/sh', ['-c', 'sleep 600'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true }); child.stdout.resume(); child.stderr.resume(); const answer = (pid) => require('node:worker_threads').parentPort.postMessage(pid); child.once('spawn', () => answer(child.pid)); child.once('error', () => answer(0));";
const began = performance.now();
const threads = [];
Promise.all(Array.from({ length: ${BATCH} }, () => new Promise((resolve) => {
  const worker = new Worker(body, { eval: true });
  threads.push(worker);
  worker.once("message", resolve);
}))).then(async (pids) => {
  const took = performance.now() - began;
  for (const pid of pids) if (pid > 0) process.kill(-pid, "SIGKILL");
  await Promise.all(threads.map((worker) => worker.terminate()));
  process.stdout.write(pids.includes(0) ? "a spawn failed" : String(took));
});`;

/** The plainest thread-per-job start, over a floor measured just before it (as a batch is). */
async function spawningThreads(): Promise<BatchRun> {
  const floorMs = await threadsStarted(EMPTY);
  const allRunningMs = await numberPrintedBy(SPAWNING_THREADS, "spawning threads");
  return { floorMs, allRunningMs, runningAtLimit: BATCH, supervisorStops: 0 };
}

/** A code cache no thread will write or read: each thread compiles the actor's code on its own. */
function spentCodeCache(): SharedArrayBuffer {
  const cache = createCodeCache();
  claimCodeCache(cache);
  writeCodeCache(cache, { size: 0, mtimeMs: 0 }, null);
  return cache;
}

/** What a batch may change in the runtime it starts on. */
type BatchOptions = Pick<RuntimeOptions, "codeCache" | "spawnerProgram">;

/** A fresh runtime as Pi has it once a session started: warm threads loaded, the spawner listening. */
async function freshRuntime(pkg: LoadedCopy, options: BatchOptions = {}): Promise<SupervisedRuntime> {
  const runtime = pkg.runtime(options);
  runtime.warmUp();
  // The spawner does not hold the event loop open (it must not keep Pi alive): this wait does.
  const held = setInterval(() => {}, 1000);
  try {
    if (!(await runtime.spawnerReady())) throw new Error("the spawner did not start");
  } finally {
    clearInterval(held);
  }
  await sleep(1500);
  return runtime;
}

const supervisorStopped = (job: JobHandle) => {
  const cause = job.result()?.cause;
  return cause === "actor_unresponsive" || cause === "actor_crashed";
};

interface BatchRun {
  /** The floor (64 empty threads) measured just before this batch, ms. */
  floorMs: number;
  /** Until every job of the batch ran; null when some had not within BATCH_LIMIT_MS. */
  allRunningMs: number | null;
  runningAtLimit: number;
  /** Jobs the supervisor ended (unresponsive or crashed actor) while the batch started and was held. */
  supervisorStops: number;
}

async function batch(pkg: LoadedCopy, command: string, holdMs: number, options: BatchOptions = {}): Promise<BatchRun> {
  const floorMs = await threadsStarted(EMPTY);
  const runtime = await freshRuntime(pkg, options);
  try {
    const began = performance.now();
    const jobs = Array.from({ length: BATCH }, () => runtime.start(jobRequest(command, { timeoutMs: 600_000 })));
    const running = () => jobs.filter((job) => job.phase() === "running").length;
    let allRunningMs: number | null = null;
    try {
      await waitFor(() => running() === BATCH || jobs.some((job) => job.phase() === "ended"), BATCH_LIMIT_MS, "the batch to run");
      if (running() === BATCH) allRunningMs = performance.now() - began;
    } catch {
      // Reported below as how many ran by the limit.
    }
    const runningAtLimit = running();
    await sleep(holdMs);
    return { floorMs, allRunningMs, runningAtLimit, supervisorStops: jobs.filter(supervisorStopped).length };
  } finally {
    await closeRuntime(runtime);
  }
}

interface CpuLoadRun {
  startToResult: Summary;
  loopP99Ms: number;
  loopMaxMs: number;
}

/** Event-loop delay over `during`, the way the responsiveness benchmark samples it. */
async function withLoopDelay<T>(during: () => Promise<T>): Promise<{ value: T; p99: number; max: number }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  try {
    const value = await during();
    return { value, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 };
  } finally {
    delay.disable();
  }
}

async function echoStarts(start: () => Promise<number>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < ECHO_STARTS; i += 1) {
    samples.push(await start());
    await sleep(200);
  }
  return samples;
}

async function underCpuLoad(pkg: LoadedCopy): Promise<CpuLoadRun> {
  const runtime = await freshRuntime(pkg);
  try {
    const hogs = Array.from({ length: CPU_JOBS }, () => runtime.start(jobRequest("yes > /dev/null", { timeoutMs: 600_000 })));
    await waitFor(() => hogs.every((job) => job.phase() === "running"), BATCH_LIMIT_MS, "the CPU-bound jobs to run");
    await sleep(2000);
    const measured = await withLoopDelay(() =>
      echoStarts(async () => {
        const job = runtime.start(jobRequest("echo x"));
        const result = await job.done;
        if (result.cause !== "exit" || result.exitCode !== 0) throw new Error(`echo ended with ${result.cause}: ${result.message ?? ""}`);
        return performance.now() - job.requestedAt;
      }),
    );
    return { startToResult: summarize(measured.value), loopP99Ms: measured.p99, loopMaxMs: measured.max };
  } finally {
    await closeRuntime(runtime);
  }
}

function plainRun(command: string): { child: ChildProcess; closed: Promise<void> } {
  const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", "pipe", "pipe"], detached: true });
  child.stdout!.resume();
  child.stderr!.resume();
  return { child, closed: new Promise((resolve) => child.once("close", () => resolve())) };
}

/** The same conditions with plain `spawn` on this thread: every job a session of its own, its output read here. */
async function plainUnderCpuLoad(): Promise<CpuLoadRun> {
  const hogs = Array.from({ length: CPU_JOBS }, () => plainRun("yes > /dev/null"));
  try {
    await sleep(2000);
    const measured = await withLoopDelay(() =>
      echoStarts(async () => {
        const began = performance.now();
        await plainRun("echo x").closed;
        return performance.now() - began;
      }),
    );
    return { startToResult: summarize(measured.value), loopP99Ms: measured.p99, loopMaxMs: measured.max };
  } finally {
    for (const hog of hogs) {
      try {
        process.kill(-hog.child.pid!, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await Promise.all(hogs.map((hog) => hog.closed));
  }
}

export interface BurstCopy {
  copy: Copy;
  busy: BatchRun[];
  idle: BatchRun[];
  /** The idle batch with threads that compile without the shared code cache. */
  idleUncached: BatchRun[];
  /** The idle batch started through the Node spawner and its perl launcher instead of the perl spawner. */
  idleNodeSpawner: BatchRun[];
  /** In the same rounds: 64 threads of a bare Node process that each spawn their `sleep 600`. */
  spawningThreads: BatchRun[];
  cpuLoad: CpuLoadRun;
  stops: TakeoverLoopResult;
}

export interface BurstResult {
  /** 64 empty worker threads, each run of the floor (ms). */
  floorRuns: number[];
  floorMs: number;
  /** 64 threads loading the installed copy's compiled actor entry, nothing else, each run (ms). */
  codeFloorRuns: number[];
  /** 64 lowered threads of a bare Node process stopping at once: its main thread's longest stretch, each run (ms). */
  stopFloorRuns: number[];
  copies: BurstCopy[];
  plainCpuLoad: CpuLoadRun;
}

export async function benchBurst(): Promise<BurstResult> {
  const floorRuns: number[] = [];
  const codeFloorRuns: number[] = [];
  const stopFloorRuns: number[] = [];
  const actorEntry = (await loadCopy("installed")).workerUrl("thread/actor-thread");
  for (let i = 0; i < 3; i += 1) {
    floorRuns.push(await threadsStarted(EMPTY));
    codeFloorRuns.push(await threadsStarted(loading(actorEntry)));
    stopFloorRuns.push(await stopFloorMs());
  }
  const copies: BurstCopy[] = [];
  for (const copy of COPIES) {
    const pkg = await loadCopy(copy);
    const busy: BatchRun[] = [];
    const idle: BatchRun[] = [];
    const idleUncached: BatchRun[] = [];
    const idleNodeSpawner: BatchRun[] = [];
    const spawning: BatchRun[] = [];
    for (let i = 0; i < BATCH_RUNS; i += 1) busy.push(await batch(pkg, POLLING, HOLD_MS));
    const kinds: [BatchRun[], () => Promise<BatchRun>][] = [
      [idle, () => batch(pkg, "sleep 600", 0)],
      [idleUncached, () => batch(pkg, "sleep 600", 0, { codeCache: spentCodeCache() })],
      [idleNodeSpawner, () => batch(pkg, "sleep 600", 0, { spawnerProgram: "node" })],
      [spawning, spawningThreads],
    ];
    for (let turn = 0; turn < IDLE_ROUNDS; turn += 1) {
      for (let k = 0; k < kinds.length; k += 1) {
        const [runs, run] = kinds[(turn + k) % kinds.length]!;
        runs.push(await run());
      }
    }
    const cpuLoad = await underCpuLoad(pkg);
    const stops = await benchTakeoverLoop(pkg.createJobRuntime);
    copies.push({ copy, busy, idle, idleUncached, idleNodeSpawner, spawningThreads: spawning, cpuLoad, stops });
  }
  return { floorRuns, floorMs: summarize(floorRuns).median, codeFloorRuns, stopFloorRuns, copies, plainCpuLoad: await plainUnderCpuLoad() };
}

const BUSY_FACTOR = 2;
const IDLE_FACTOR = 1.5;
const ECHO_TARGET_MS = 1000;
const LOOP_P99_TARGET_MS = 50;

/** The median of each run's time over the floor measured just before it, or null when any run did not finish starting. */
function batchRatio(runs: readonly BatchRun[]): number | null {
  return runs.some((run) => run.allRunningMs === null) ? null : summarize(runs.map((run) => run.allRunningMs! / run.floorMs)).median;
}

/** `jobs`: whether pi-jobs ran the runs (and so whether a supervisor could have stopped any). */
function batchCell(runs: readonly BatchRun[], jobs = true): string {
  const ratio = batchRatio(runs);
  const each = runs
    .map((run) =>
      run.allRunningMs === null
        ? `${run.runningAtLimit}/${BATCH} by ${BATCH_LIMIT_MS / 1000} s`
        : `${ms(run.allRunningMs)} / ${ms(run.floorMs)} = ${round(run.allRunningMs / run.floorMs)}×`,
    )
    .join(", ");
  const stops = runs.reduce((sum, run) => sum + run.supervisorStops, 0);
  const median = `${ratio === null ? "not all running" : `${round(ratio)}× the floor`} median (runs, each over the floor just before it: ${each})`;
  return jobs ? `${median}; supervisor stops: ${stops}` : median;
}

export function burstRows(result: BurstResult): Row[] {
  const floor = result.floorMs;
  const codeFloor = summarize(result.codeFloorRuns).median;
  const rows: Row[] = [
    {
      benchmark: `starts under load: ${BATCH} jobs in one batch`,
      variant: `floor: ${BATCH} empty worker threads, bare Node, idle machine (${result.floorRuns.length} runs)`,
      result: `${ms(floor)} median (runs ${result.floorRuns.map(ms).join(", ")})`,
      target: "baseline",
      met: null,
    },
    {
      benchmark: "",
      variant: `floor with pi-jobs' code: ${BATCH} threads that load the actor thread's compiled entry and nothing else (${result.codeFloorRuns.length} runs)`,
      result: `${ms(codeFloor)} median = ${round(codeFloor / floor)}× the floor (runs ${result.codeFloorRuns.map(ms).join(", ")})`,
      target: "baseline",
      met: null,
    },
  ];
  for (const measured of result.copies) {
    const busy = batchRatio(measured.busy);
    const idle = batchRatio(measured.idle);
    const stops = measured.busy.reduce((sum, run) => sum + run.supervisorStops, 0);
    rows.push({
      benchmark: "",
      variant: `busy (\`${POLLING}\`), fresh runtime, held ${HOLD_MS / 1000} s, ${copyLabel(measured.copy)}`,
      result: batchCell(measured.busy),
      target: `≤ ${BUSY_FACTOR}× the floor, no supervisor stop`,
      met: busy !== null && busy <= BUSY_FACTOR && stops === 0,
    });
    rows.push({
      benchmark: "",
      variant: `idle (\`sleep 600\`), fresh runtime, ${copyLabel(measured.copy)}`,
      result: batchCell(measured.idle),
      target: `≤ ${IDLE_FACTOR}× the floor`,
      met: idle !== null && idle <= IDLE_FACTOR,
    });
    rows.push({
      benchmark: "",
      variant: `idle, fresh runtime, each thread compiling the actor's code without the shared code cache, ${copyLabel(measured.copy)}`,
      result: batchCell(measured.idleUncached),
      target: "baseline",
      met: null,
    });
    rows.push({
      benchmark: "",
      variant: `idle, fresh runtime, started through the Node spawner and its perl launcher instead of the perl spawner, ${copyLabel(measured.copy)}`,
      result: batchCell(measured.idleNodeSpawner),
      target: "baseline",
      met: null,
    });
    rows.push({
      benchmark: "",
      variant: `in the same rounds: ${BATCH} threads of a bare Node process that each \`spawn\` their \`sleep 600\` in a session of its own (the plainest start with a thread per job)`,
      result: batchCell(measured.spawningThreads, false),
      target: "baseline",
      met: null,
    });
  }
  const load = (run: CpuLoadRun) =>
    `start → result ${ms(run.startToResult.median)} median (p90 ${ms(run.startToResult.p90)}); Pi's loop p99 ${ms(run.loopP99Ms)}, max ${ms(run.loopMaxMs)}`;
  result.copies.forEach((measured, index) =>
    rows.push({
      benchmark: index === 0 ? `\`echo x\` beside ${CPU_JOBS} CPU-bound jobs (\`yes > /dev/null\`)` : "",
      variant: `pi-jobs, ${copyLabel(measured.copy)} (${ECHO_STARTS} starts)`,
      result: load(measured.cpuLoad),
      target: `≤ ${ECHO_TARGET_MS} ms median, loop p99 ≤ ${LOOP_P99_TARGET_MS} ms`,
      met: measured.cpuLoad.startToResult.median <= ECHO_TARGET_MS && measured.cpuLoad.loopP99Ms <= LOOP_P99_TARGET_MS,
    }),
  );
  rows.push({
    benchmark: "",
    variant: "plain `child_process.spawn` on Pi's thread, every job a session of its own (naive main-thread reader)",
    result: load(result.plainCpuLoad),
    target: "baseline",
    met: null,
  });
  const stopFloor = summarize(result.stopFloorRuns).median;
  rows.push({
    benchmark: `Pi's loop while ${BATCH} jobs stop at once (each with a descendant out of its group)`,
    variant: `floor: bare Node, ${BATCH} threads lowered as actors are, told to stop at once, each spending ${ms(STOP_CPU_MS)} of CPU with a message to the main thread every 10 ms, then ending (${result.stopFloorRuns.length} runs)`,
    result: `longest blocked stretch of the main thread ${ms(stopFloor)} median (runs ${result.stopFloorRuns.map(ms).join(", ")})`,
    target: "baseline",
    met: null,
  });
  result.copies.forEach((measured) => {
    const stops = measured.stops;
    const worst = Math.max(stops.shutdownMaxBlockedMs, stops.takeoverMaxBlockedMs);
    rows.push({
      benchmark: "",
      variant: copyLabel(measured.copy),
      result:
        `longest blocked stretch: shutdown ${ms(stops.shutdownMaxBlockedMs)} (${ms(stops.shutdownMaxBlockedCpuMs)} of it Pi's CPU), ` +
        `takeover of every job ${ms(stops.takeoverMaxBlockedMs)} (${ms(stops.takeoverMaxBlockedCpuMs)} CPU)`,
      target: `≤ ${TARGET_MAX_BLOCKED_MS} ms`,
      met: worst <= TARGET_MAX_BLOCKED_MS,
    });
  });
  return rows;
}
