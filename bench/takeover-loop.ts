/**
 * Pi's event loop while many jobs are stopped at once: `JOBS` running jobs (each with a descendant that left its
 * group), then the longest blocked stretch of this thread during their shutdown, and during a shutdown in which every
 * actor reports late so that the supervisor takes each job over and looks for its tagged processes itself
 * (tests/fixtures/stop-loop.ts). Every scan of /proc on this thread is asynchronous and sliced; the target is no
 * stretch over 20 ms.
 *
 * `node bench/takeover-loop.ts` prints one run.
 */
import { fileURLToPath } from "node:url";
import { stopLoop } from "../tests/fixtures/stop-loop.ts";
import type { createJobRuntime } from "../host/runtime/runtime.ts";
import { numberPrintedBy } from "./shared.ts";

const JOBS = 64;
export const TARGET_MAX_BLOCKED_MS = 20;

export interface TakeoverLoopResult {
  jobs: number;
  /** The longest stretch between two turns of this thread's event loop (wall time), during each of the two. */
  shutdownMaxBlockedMs: number;
  takeoverMaxBlockedMs: number;
  /** The most of this thread's own CPU time in such a stretch: without the waits for a core a loaded machine adds. */
  shutdownMaxBlockedCpuMs: number;
  takeoverMaxBlockedCpuMs: number;
}

/** What an actor's stop costs its thread, about: a shutdown of `JOBS` jobs took 1.8–2.0 s of the process's CPU. */
export const STOP_CPU_MS = 30;

/**
 * The floor under the stop stretch, in a bare Node process: `JOBS` worker threads that run below the main thread as
 * actors do (ten nice steps, Linux), told at once to stop, each then spending STOP_CPU_MS of its CPU with a message to
 * the main thread every 10 ms and at its end, and ending; meanwhile the main thread only ticks every millisecond. Its
 * longest stretch without a turn, in milliseconds. The main thread waits there for locks the threads hold: a thread
 * posting to a port holds the receiving port's lock while it wakes the receiver, and a woken main thread that took its
 * core then waits until that lowered thread runs again; page faults and heap teardowns hold the memory-map lock
 * (docs/decisions/stops-in-process.md).
 */
export function stopFloorMs(): Promise<number> {
  const script = `
const { Worker } = require("node:worker_threads");
const body = \`
const { parentPort } = require("node:worker_threads");
const os = require("node:os");
try { os.setPriority(0, Math.min(19, os.getPriority(0) + 10)); } catch {}
const cpu = () => { const u = process.threadCpuUsage(); return (u.user + u.system) / 1000; };
parentPort.once("message", () => {
  const start = cpu();
  let next = 0;
  for (let used = 0; used < ${STOP_CPU_MS}; used = cpu() - start) {
    if (used >= next) { parentPort.postMessage(used); next += 10; }
  }
  parentPort.postMessage("done");
  process.exit(0);
});
parentPort.postMessage("ready");\`;
const threads = Array.from({ length: ${JOBS} }, () => new Worker(body, { eval: true }));
const exits = threads.map((thread) => new Promise((resolve) => thread.once("exit", resolve)));
Promise.all(threads.map((thread) => new Promise((resolve) => thread.once("message", resolve)))).then(async () => {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  let at = performance.now();
  let longest = 0;
  const tick = setInterval(() => { const now = performance.now(); longest = Math.max(longest, now - at); at = now; }, 1);
  for (const thread of threads) thread.postMessage("stop");
  await Promise.all(exits);
  clearInterval(tick);
  process.stdout.write(String(Math.max(longest, performance.now() - at)));
});`;
  return numberPrintedBy(script, "stop floor");
}

/** One shutdown of `JOBS` running jobs, then one of `JOBS` jobs the supervisor takes over; `create` picks the copy. */
export async function benchTakeoverLoop(create?: typeof createJobRuntime): Promise<TakeoverLoopResult> {
  const shutdown = await stopLoop({ jobs: JOBS, takeover: false, create });
  const takeover = await stopLoop({ jobs: JOBS, takeover: true, create });
  for (const [what, run] of [["shutdown", shutdown], ["takeover", takeover]] as const) {
    if (run.survivors.length > 0) throw new Error(`${what}: ${run.survivors.length} processes survived`);
  }
  return {
    jobs: JOBS,
    shutdownMaxBlockedMs: shutdown.maxBlockedMs,
    takeoverMaxBlockedMs: takeover.maxBlockedMs,
    shutdownMaxBlockedCpuMs: shutdown.maxBlockedCpuMs,
    takeoverMaxBlockedCpuMs: takeover.maxBlockedCpuMs,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`floor: ${Math.round(await stopFloorMs() * 10) / 10} ms, bare Node's longest stretch while ${JOBS} lowered threads stop`);
  const result = await benchTakeoverLoop();
  const round = (ms: number) => Math.round(ms * 10) / 10;
  console.log(
    `${result.jobs} jobs: longest blocked stretch ${round(result.shutdownMaxBlockedMs)} ms ` +
      `(${round(result.shutdownMaxBlockedCpuMs)} ms of it this thread's CPU) during a shutdown, ` +
      `${round(result.takeoverMaxBlockedMs)} ms (${round(result.takeoverMaxBlockedCpuMs)} ms CPU) during a takeover of ` +
      `every job (target < ${TARGET_MAX_BLOCKED_MS} ms)`,
  );
}
