/**
 * Start latency: from `start()` to the process running (the actor's `spawned` message reaching the host) and to
 * the first output batch of `echo x`, on a warm pool and on a cold worker (a fresh runtime with no warm thread, so
 * every start pays a thread start; workers from TypeScript source as in a checkout, and compiled as installed),
 * beside a bare `child_process.spawn` to its 'spawn' event.
 */
import { spawn } from "node:child_process";
import type { MessagePort } from "node:worker_threads";
import type { JobHandle } from "../host/runtime-api.ts";
import type { SupervisedRuntime } from "../host/runtime.ts";
import { withCompiledWorkers } from "./compiled.ts";
import { installedRuntime, closeRuntime, jobRequest, ms, sampled, sleep, summarize, type Row, type Summary } from "./shared.ts";

const ITERATIONS = 30;
const COLD_ITERATIONS = 20;
const WARMUPS = 3;
export const WARM_TARGET_MS = 10;

export interface StartResult {
  iterations: { warm: number; cold: number; spawn: number };
  /** start() → `spawned` on the host. */
  warmRunning: Summary;
  /** A fresh runtime per start: the job waits for a new worker thread, loaded from TypeScript source (a checkout). */
  coldRunning: Summary;
  /** The same with workers loaded from dist/, as an installed copy runs them. */
  coldCompiledRunning: Summary;
  /** start() → first output batch of `echo x`. */
  warmFirstOutput: Summary;
  coldFirstOutput: Summary;
  coldCompiledFirstOutput: Summary;
  /** child_process.spawn → 'spawn' event, on the main thread. */
  bareSpawn: Summary;
  target: string;
  met: boolean;
}

/**
 * Resolves when the job's `spawned` message reaches the host. It listens on the job's data port beside the job
 * itself, so it sees the message in the same tick the job does: polling `phase()` with setImmediate would spin the
 * host thread, and on two cores that spinning doubles the very latency it measures. The port is a private field of
 * the host's Job; reading it here keeps the runtime's API as it is.
 */
function whenSpawned(job: JobHandle): Promise<number> {
  const port = (job as unknown as { dataPort?: MessagePort }).dataPort;
  if (port === undefined) throw new Error("bench/start.ts: the host's Job has no dataPort field any more; update whenSpawned");
  return new Promise((resolve) => {
    const listener = (message: { type?: string }) => {
      if (message.type !== "spawned" && message.type !== "exit") return;
      port.off("message", listener);
      resolve(performance.now());
    };
    port.on("message", listener);
  });
}

interface Timed {
  running: number;
  firstOutput: number;
}

async function startEcho(runtime: SupervisedRuntime): Promise<Timed> {
  const job = runtime.start(jobRequest("echo x"));
  // Output stays in the actor until read; for `echo` it is readable on the host with the exit message.
  let firstOutput = 0;
  void job.done.then(() => (firstOutput = performance.now()));
  const running = await whenSpawned(job);
  const result = await job.done;
  if (result.cause !== "exit" || result.totals.bytes === 0 || firstOutput === 0) throw new Error(`echo job ended with ${result.cause}: ${result.message ?? ""}`);
  return { running: running - job.requestedAt, firstOutput: firstOutput - job.requestedAt };
}

function bareSpawn(): Promise<number> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    let spawned = 0;
    const child = spawn("/bin/sh", ["-c", "echo x"], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    child.stdout.resume();
    child.stderr.resume();
    child.once("spawn", () => (spawned = performance.now() - began));
    child.once("error", reject);
    child.once("close", () => resolve(spawned));
  });
}

/** Each start on a fresh runtime with no warm thread, so it pays for a worker thread start. */
async function coldStarts(name: string): Promise<{ running: Summary; firstOutput: Summary }> {
  const first: number[] = [];
  let counted = 0;
  const running = await sampled(name, COLD_ITERATIONS, 1, async () => {
    const fresh = installedRuntime({ warm: 0 });
    try {
      const timed = await startEcho(fresh);
      if (counted++ >= 1) first.push(timed.firstOutput);
      return timed.running;
    } finally {
      await closeRuntime(fresh);
    }
  });
  return { running, firstOutput: summarize(first) };
}

/** Needs fresh compiled workers (bench/compiled.ts). */
export async function benchStart(): Promise<StartResult> {
  const warmFirst: number[] = [];
  const runtime = installedRuntime();
  let warmRunning: Summary;
  try {
    runtime.warmUp();
    // Let both warm threads finish loading the actor module before the first sample.
    await sleep(1500);
    let counted = 0;
    warmRunning = await sampled("start: warm pool", ITERATIONS, WARMUPS, async () => {
      // A pause between starts, as between two tool calls: the previous job's thread is back in the pool.
      await sleep(30);
      const timed = await startEcho(runtime);
      if (counted++ >= WARMUPS) warmFirst.push(timed.firstOutput);
      return timed.running;
    });
  } finally {
    await closeRuntime(runtime);
  }

  const cold = await coldStarts("start: cold worker (TypeScript source)");
  const coldCompiled = await withCompiledWorkers(() => coldStarts("start: cold worker (compiled)"));

  const bare = await sampled("start: bare child_process.spawn", ITERATIONS, WARMUPS, bareSpawn);
  const warmFirstOutput = summarize(warmFirst);
  return {
    iterations: { warm: ITERATIONS, cold: COLD_ITERATIONS, spawn: ITERATIONS },
    warmRunning,
    coldRunning: cold.running,
    coldCompiledRunning: coldCompiled.running,
    warmFirstOutput,
    coldFirstOutput: cold.firstOutput,
    coldCompiledFirstOutput: coldCompiled.firstOutput,
    bareSpawn: bare,
    target: `warm pool: start() → running ≤ ${WARM_TARGET_MS} ms median`,
    met: warmRunning.median <= WARM_TARGET_MS,
  };
}

export function startRows(result: StartResult): Row[] {
  const cell = (running: Summary, first: Summary | null) =>
    `running ${ms(running.median)} median (p90 ${ms(running.p90)})` + (first ? `; first output ${ms(first.median)} median` : "");
  return [
    {
      benchmark: "start: `echo x`",
      variant: `pi-jobs, warm pool (${result.iterations.warm} starts)`,
      result: cell(result.warmRunning, result.warmFirstOutput),
      target: `≤ ${WARM_TARGET_MS} ms median`,
      met: result.met,
    },
    {
      benchmark: "",
      variant: `pi-jobs, cold worker from TypeScript source (fresh runtime, warm: 0; ${result.iterations.cold} starts)`,
      result: cell(result.coldRunning, result.coldFirstOutput),
      target: "—",
      met: null,
    },
    {
      benchmark: "",
      variant: `pi-jobs, cold worker compiled, as installed (${result.iterations.cold} starts)`,
      result: cell(result.coldCompiledRunning, result.coldCompiledFirstOutput),
      target: "—",
      met: null,
    },
    {
      benchmark: "",
      variant: "bare `child_process.spawn` → 'spawn' event",
      result: `${ms(result.bareSpawn.median)} median (p90 ${ms(result.bareSpawn.p90)})`,
      target: "baseline",
      met: null,
    },
  ];
}
