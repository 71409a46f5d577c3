/**
 * Start latency: from `start()` to the process running (the actor's `spawned` message reaching the host) and to
 * the first output batch of `echo x`, on a warm pool and on a cold worker (a fresh runtime with no warm thread, so
 * every start pays a thread start), for the checkout and for the installed copy (bench/copy.ts), beside a bare
 * `child_process.spawn` to its 'spawn' event.
 */
import { spawn } from "node:child_process";
import type { MessagePort } from "node:worker_threads";
import type { JobHandle } from "../host/runtime/api.ts";
import type { SupervisedRuntime } from "../host/runtime/runtime.ts";
import { COPIES, copyLabel, loadCopy, type Copy, type LoadedCopy } from "./copy.ts";
import { closeRuntime, jobRequest, ms, repetitions, sampled, sleep, summarize, type Row, type Summary } from "./shared.ts";

const ITERATIONS = repetitions(30, 3);
const COLD_ITERATIONS = repetitions(20, 3);
const WARMUPS = repetitions(3, 1);
export const WARM_TARGET_MS = 10;

export interface StartCopy {
  copy: Copy;
  /** start() → `spawned` on the host, on a warm pool. */
  warmRunning: Summary;
  /** start() → first output batch of `echo x`, on a warm pool. */
  warmFirstOutput: Summary;
  /** A fresh runtime per start: the job waits for a new worker thread to load. */
  coldRunning: Summary;
  coldFirstOutput: Summary;
}

export interface StartResult {
  iterations: { warm: number; cold: number; spawn: number };
  copies: StartCopy[];
  /** child_process.spawn → 'spawn' event, on the main thread. */
  bareSpawn: Summary;
  target: string;
  /** Every copy's warm pool within the target. */
  met: boolean;
}

/**
 * Resolves when the job's `spawned` message reaches the host. It listens on the job's data port beside the job
 * itself, so it sees the message in the same tick the job does: polling `phase()` with setImmediate would spin the
 * host thread, and on two cores that spinning doubles the very latency it measures. The port is a private field of
 * the host's link to the actor (host/runtime/actor-link.ts); reading it here keeps the runtime's API as it is.
 */
function whenSpawned(job: JobHandle): Promise<number> {
  const port = (job as unknown as { link?: { dataPort?: MessagePort } }).link?.dataPort;
  if (port === undefined) throw new Error("bench/start.ts: the host's Job has no link.dataPort field any more; update whenSpawned");
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

/** Starts on a warm pool whose threads have loaded. */
async function warmStarts(pkg: LoadedCopy): Promise<{ running: Summary; firstOutput: Summary }> {
  const first: number[] = [];
  const runtime = pkg.runtime();
  try {
    runtime.warmUp();
    // Let both warm threads finish loading the actor module before the first sample.
    await sleep(1500);
    let counted = 0;
    const running = await sampled(`start: warm pool (${pkg.copy})`, ITERATIONS, WARMUPS, async () => {
      // A pause between starts, as between two tool calls: the previous job's thread is back in the pool.
      await sleep(30);
      const timed = await startEcho(runtime);
      if (counted++ >= WARMUPS) first.push(timed.firstOutput);
      return timed.running;
    });
    return { running, firstOutput: summarize(first) };
  } finally {
    await closeRuntime(runtime);
  }
}

/** Each start on a fresh runtime with no warm thread, so it pays for a worker thread start. */
async function coldStarts(pkg: LoadedCopy): Promise<{ running: Summary; firstOutput: Summary }> {
  const first: number[] = [];
  let counted = 0;
  const running = await sampled(`start: cold worker (${pkg.copy})`, COLD_ITERATIONS, 1, async () => {
    const fresh = pkg.runtime({ warm: 0 });
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

export async function benchStart(): Promise<StartResult> {
  const copies: StartCopy[] = [];
  for (const copy of COPIES) {
    const pkg = await loadCopy(copy);
    const warm = await warmStarts(pkg);
    const cold = await coldStarts(pkg);
    copies.push({ copy, warmRunning: warm.running, warmFirstOutput: warm.firstOutput, coldRunning: cold.running, coldFirstOutput: cold.firstOutput });
  }
  const bare = await sampled("start: bare child_process.spawn", ITERATIONS, WARMUPS, bareSpawn);
  return {
    iterations: { warm: ITERATIONS, cold: COLD_ITERATIONS, spawn: ITERATIONS },
    copies,
    bareSpawn: bare,
    target: `warm pool: start() → running ≤ ${WARM_TARGET_MS} ms median`,
    met: copies.every((measured) => measured.warmRunning.median <= WARM_TARGET_MS),
  };
}

export function startRows(result: StartResult): Row[] {
  const cell = (running: Summary, first: Summary) =>
    `running ${ms(running.median)} median (p90 ${ms(running.p90)}); first output ${ms(first.median)} median`;
  const warm = result.copies.map((measured, index) => ({
    benchmark: index === 0 ? "start: `echo x`" : "",
    variant: `pi-jobs, warm pool, ${copyLabel(measured.copy)} (${result.iterations.warm} starts)`,
    result: cell(measured.warmRunning, measured.warmFirstOutput),
    target: `≤ ${WARM_TARGET_MS} ms median`,
    met: measured.warmRunning.median <= WARM_TARGET_MS,
  }));
  const cold = result.copies.map((measured) => ({
    benchmark: "",
    variant: `pi-jobs, cold worker (fresh runtime, warm: 0), ${copyLabel(measured.copy)} (${result.iterations.cold} starts)`,
    result: cell(measured.coldRunning, measured.coldFirstOutput),
    target: "—",
    met: null,
  }));
  return [
    ...warm,
    ...cold,
    {
      benchmark: "",
      variant: "bare `child_process.spawn` → 'spawn' event",
      result: `${ms(result.bareSpawn.median)} median (p90 ${ms(result.bareSpawn.p90)})`,
      target: "baseline",
      met: null,
    },
  ];
}
