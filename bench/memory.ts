/**
 * Memory: resident memory added per idle actor, with 32 actors alive (each running `sleep 60`).
 *
 * Measured in a child `node --expose-gc` process, so the host's heap can be collected before each reading and the
 * figure is not swayed by whatever the earlier benchmarks left on the heap. Each reading is the median of several
 * samples taken after a collection and a settle. Per actor = (RSS with 32 alive − RSS before any worker thread) / 32,
 * so the thread each actor runs on counts against it; the two idle warm threads are reported separately. Workers
 * loaded from TypeScript source (a checkout) and from dist/ (an installed copy) are measured apart: every thread
 * that strips types carries the stripper with it.
 *
 * Run directly (`node --expose-gc bench/memory.ts --child shell|monitor source|compiled`) it prints one reading as JSON.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { JobKind } from "../host/runtime-api.ts";
import { installedRuntime, closeRuntime, jobRequest, mb, monitorRequest, sleep, waitFor, type Row } from "./shared.ts";

const ACTORS = 32;
const WARM = 2;
/** Issue 11's target; below what an empty Node worker costs here (~10.4 MiB, docs/decisions.md). */
export const PER_ACTOR_TARGET_BYTES = 8 * 1024 * 1024;

export type WorkerForm = "source" | "compiled";

export interface MemoryReading {
  kind: JobKind;
  /** Workers loaded from TypeScript source (a checkout) or from dist/ (an installed copy). */
  workers: WorkerForm;
  actors: number;
  /** RSS in bytes: runtime created, no worker thread yet. */
  before: number;
  /** RSS with the warm threads started and idle. */
  warm: number;
  /** RSS with every actor alive and idle. */
  alive: number;
  threadsAlive: number;
  perActor: number;
  perWarmThread: number;
}

export interface MemoryResult {
  readings: MemoryReading[];
  gcAvailable: boolean;
  target: string;
  /** Judged on the compiled workers, which is what an installed copy runs. */
  met: boolean;
}

const collect = (globalThis as { gc?: () => void }).gc;

/** Median RSS of five samples, each after a full collection of the main heap. */
async function settledRss(): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    collect?.();
    await sleep(200);
    samples.push(process.memoryUsage.rss());
  }
  samples.sort((a, b) => a - b);
  return samples[2]!;
}

async function measureKind(kind: JobKind, workers: WorkerForm): Promise<MemoryReading> {
  const runtime = installedRuntime({ warm: WARM });
  try {
    const before = await settledRss();
    runtime.warmUp();
    await waitFor(() => runtime.threads() >= WARM, 10_000, "warm threads");
    // A thread exists before its module graph is loaded: give the warm threads time to finish loading.
    await sleep(1500);
    const warm = await settledRss();
    const command = "sleep 60";
    const jobs = Array.from({ length: ACTORS }, () => runtime.start(kind === "monitor" ? monitorRequest(command) : jobRequest(command)));
    await waitFor(() => jobs.every((job) => job.phase() === "running"), 60_000, `${ACTORS} actors running`);
    // Threads that just started allocate while they load; let them reach their idle state.
    await sleep(2000);
    const alive = await settledRss();
    const threadsAlive = runtime.threads();
    return {
      kind,
      workers,
      actors: ACTORS,
      before,
      warm,
      alive,
      threadsAlive,
      perActor: Math.round((alive - before) / ACTORS),
      perWarmThread: Math.round((warm - before) / WARM),
    };
  } finally {
    await closeRuntime(runtime);
  }
}

async function child(kind: JobKind, workers: WorkerForm): Promise<void> {
  const reading = await measureKind(kind, workers);
  process.stdout.write(JSON.stringify({ reading, gcAvailable: collect !== undefined }));
}

/** One child process per reading: memory a process has freed is not returned to the system, so none may share one. */
function inChild(kind: JobKind, workers: WorkerForm): Promise<{ reading: MemoryReading; gcAvailable: boolean }> {
  const script = fileURLToPath(import.meta.url);
  const env = { ...process.env };
  if (workers === "compiled") env.PI_JOBS_WORKERS = "dist";
  else delete env.PI_JOBS_WORKERS;
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--expose-gc", script, "--child", kind, workers], { stdio: ["ignore", "pipe", "inherit"], env });
    let text = "";
    proc.stdout.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    proc.once("error", reject);
    proc.once("close", (code) => {
      if (code !== 0) reject(new Error(`memory benchmark child (${kind}, ${workers}) exited with ${code}`));
      else resolve(JSON.parse(text) as { reading: MemoryReading; gcAvailable: boolean });
    });
  });
}

/** Needs fresh compiled workers (bench/compiled.ts). */
export async function benchMemory(): Promise<MemoryResult> {
  const runs = [
    await inChild("shell", "source"),
    await inChild("shell", "compiled"),
    await inChild("monitor", "compiled"),
  ];
  const readings = runs.map((run) => run.reading);
  const compiled = readings.filter((reading) => reading.workers === "compiled");
  return {
    readings,
    gcAvailable: runs.every((run) => run.gcAvailable),
    target: `RSS per idle actor ≤ ${PER_ACTOR_TARGET_BYTES / (1024 * 1024)} MiB`,
    met: compiled.every((reading) => reading.perActor <= PER_ACTOR_TARGET_BYTES),
  };
}

export function memoryRows(result: MemoryResult): Row[] {
  const target = `≤ ${PER_ACTOR_TARGET_BYTES / (1024 * 1024)} MiB each`;
  return result.readings.map((reading, index) => {
    const kind = reading.kind === "monitor" ? "monitors" : "shell jobs";
    const workers = reading.workers === "compiled" ? "compiled workers (installed copy)" : "TypeScript workers (checkout)";
    const rss = `RSS ${mb(reading.before)} → ${mb(reading.alive)}, ${reading.threadsAlive} threads`;
    return {
      benchmark: index === 0 ? `memory: ${reading.actors} idle actors (\`sleep 60\`)` : "",
      variant: `${kind}, ${workers}`,
      result: `${mb(reading.perActor)} per actor (${rss}); idle warm thread ${mb(reading.perWarmThread)}`,
      target,
      met: reading.perActor <= PER_ACTOR_TARGET_BYTES,
    };
  });
}

const childAt = process.argv.indexOf("--child");
if (childAt >= 0 && process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = process.argv[childAt + 1] === "monitor" ? "monitor" : "shell";
  await child(kind, process.argv[childAt + 2] === "compiled" ? "compiled" : "source");
}
