/**
 * The lifecycle benchmark's baseline: plain `child_process.spawn` of the same commands, run in a fresh Node process
 * of its own (`node bench/plain-spawns.ts <short jobs> <burst> <burst repeats> <sequential> <concurrency>` prints
 * the figures as JSON). A fork costs what the forking process's memory costs, and the benchmark's own process has by
 * then loaded two copies of pi-jobs and run every other benchmark: spawning from it would make the baseline several
 * times slower than a spawn from a small process, which is what a job's spawn is compared with.
 */
import { execFile, spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { cpuWall, type CpuWall } from "./cpu-wall.ts";
import { sleep, summarize, type Summary } from "./shared.ts";

export interface PlainSpawns {
  spawnToClose: Summary;
  burstSpawn: Summary;
  shortSpawn: CpuWall;
  /** RSS of the process the baseline spawned from, MiB. */
  rssMiB: number;
}

function plainEcho(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", "echo DONE"], { cwd: tmpdir(), stdio: ["ignore", "pipe", "pipe"], detached: true });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", () => resolve());
  });
}

async function timedPlainEcho(): Promise<number> {
  const began = performance.now();
  await plainEcho();
  return performance.now() - began;
}

async function plainBurst(burst: number, repeats: number): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < repeats; i += 1) {
    const began = performance.now();
    const children = Array.from({ length: burst }, () => spawn("/bin/sh", ["-c", "sleep 300"], { stdio: "ignore", detached: true }));
    await Promise.all(children.map((child) => new Promise((resolve) => child.once("spawn", resolve))));
    samples.push(performance.now() - began);
    for (const child of children) process.kill(-child.pid!, "SIGKILL");
    await Promise.all(children.map((child) => new Promise((resolve) => child.once("exit", resolve))));
  }
  return summarize(samples);
}

async function measure(shortJobs: number, burst: number, burstRepeats: number, sequential: number, concurrency: number): Promise<PlainSpawns> {
  const spawnSamples: number[] = [];
  for (let i = 0; i < sequential + 3; i += 1) {
    await sleep(30);
    const took = await timedPlainEcho();
    if (i >= 3) spawnSamples.push(took);
  }
  const burstSpawn = await plainBurst(burst, burstRepeats);
  const shortSpawn = await cpuWall(shortJobs, concurrency, plainEcho);
  return { spawnToClose: summarize(spawnSamples), burstSpawn, shortSpawn, rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20) };
}

/** Runs the baseline in a fresh Node process and returns its figures. */
export async function plainSpawnsInChild(options: { shortJobs: number; burst: number; burstRepeats: number; sequential: number; concurrency: number }): Promise<PlainSpawns> {
  const args = [options.shortJobs, options.burst, options.burstRepeats, options.sequential, options.concurrency].map(String);
  const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(import.meta.url), ...args], { maxBuffer: 16 << 20 });
  return JSON.parse(stdout) as PlainSpawns;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [shortJobs, burst, burstRepeats, sequential, concurrency] = process.argv.slice(2).map(Number);
  process.stdout.write(JSON.stringify(await measure(shortJobs!, burst!, burstRepeats!, sequential!, concurrency!)));
}
