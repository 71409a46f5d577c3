/**
 * Burst-then-quit: start a batch of jobs (pipes, PTYs and monitors) and shut the runtime down while they are still
 * starting, the way a user quits Pi in the middle of a codemode batch. Afterwards no process of the batch may
 * remain. Used by the integration suite (3 repetitions) and by `node bench/shutdown-stress.ts` (20).
 */
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { benchRuntime, closeRuntime, jobRequest, monitorRequest, sleep } from "./shared.ts";

export interface BurstOutcome {
  jobs: number;
  delayMs: number;
  /** How many of the batch had a process when the shutdown began. */
  runningAtShutdown: number;
  /** Until every job was stopped (runtime.stopAll): what bounds how long a process can outlive the quit. */
  stopMs: number;
  /** Until the shutdown returned: the stop, then the threads ended once idle. */
  shutdownMs: number;
  /** Processes carrying the batch's token still alive (not zombies) after the shutdown returned. */
  survivors: number[];
  killGraceMs: number;
}

/** Live (non-zombie) processes whose command line contains `token`. Linux /proc. */
export function processesWith(token: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "latin1");
      if (!cmdline.includes(token)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      if (stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z") found.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

export async function burstThenShutdown(options: { perKind: number; delayMs: number; killGraceMs?: number }): Promise<BurstOutcome> {
  const killGraceMs = options.killGraceMs ?? 1000;
  // A sleep length no other process on the machine uses: it names this batch's processes in /proc.
  const token = `${600 + Math.floor(Math.random() * 300)}.${process.pid}${Math.floor(performance.now())}`;
  const command = `sleep ${token}`;
  const runtime = benchRuntime({ warm: 2 });
  const requests = [
    ...Array.from({ length: options.perKind }, () => jobRequest(command, { killGraceMs })),
    ...Array.from({ length: options.perKind }, () => jobRequest(command, { killGraceMs, io: { kind: "pty", cols: 80, rows: 24 } })),
    ...Array.from({ length: options.perKind }, () => monitorRequest(command, { killGraceMs })),
  ];
  const jobs = requests.map((request) => runtime.start(request));
  await sleep(options.delayMs);
  const runningAtShutdown = jobs.filter((job) => job.phase() === "running").length;
  const began = performance.now();
  await runtime.stopAll();
  const stopMs = performance.now() - began;
  await closeRuntime(runtime);
  const shutdownMs = performance.now() - began;
  // A process that was being spawned as the shutdown began is killed by its actor once published; give the
  // kernel a moment to deliver those signals before counting.
  await sleep(200);
  return { jobs: jobs.length, delayMs: options.delayMs, runningAtShutdown, stopMs, shutdownMs, survivors: processesWith(token), killGraceMs };
}
