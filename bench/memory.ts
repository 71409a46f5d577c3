/**
 * Memory: resident memory added per idle actor, with 32 actors alive (each running `sleep 60`).
 *
 * Measured in a child `node --expose-gc` process, so the host's heap can be collected before each reading and the
 * figure is not swayed by whatever the earlier benchmarks left on the heap. Each reading is the median of several
 * samples taken after a collection and a settle. Per actor = (RSS with 32 alive − RSS before any worker thread) / 32,
 * so the thread each actor runs on counts against it; the two idle warm threads are reported separately. Beside RSS,
 * the same difference in private memory (Linux: Private_Clean + Private_Dirty of /proc/self/smaps_rollup): RSS counts a
 * page once per mapping, and V8 maps the same 2 MiB of Node's built-in code into every thread's isolate, pages that
 * exist once in memory (docs/decisions/thread-per-job.md). The
 * checkout (workers loaded from TypeScript source) and the installed copy (compiled workers, bench/copy.ts) are
 * measured apart: every thread that strips types carries the stripper with it.
 *
 * Run directly (`node --expose-gc bench/memory.ts --child shell|monitor --copy=checkout|installed`) it prints one
 * reading as JSON.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { JobKind } from "../host/runtime/api.ts";
import { copyArgument, copyLabel, loadCopy, type Copy } from "./copy.ts";
import { installedPackage, removeInstalledPackage } from "./installed.ts";
import { closeRuntime, jobRequest, mb, monitorRequest, repetitions, sleep, waitFor, type Row } from "./shared.ts";

const ACTORS = repetitions(32, 8);
const WARM = 2;
/**
 * The memory target per idle actor, below what an empty Node worker costs
 * (docs/decisions/thread-per-job.md).
 */
export const PER_ACTOR_TARGET_BYTES = 8 * 1024 * 1024;

export interface MemoryReading {
  kind: JobKind;
  copy: Copy;
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
  /** (private memory with every actor alive − before) / actors, in bytes; null where /proc cannot say. */
  privatePerActor: number | null;
}

export interface MemoryResult {
  readings: MemoryReading[];
  gcAvailable: boolean;
  target: string;
  /** Judged on the installed copy, which is what users run. */
  met: boolean;
}

const collect = (globalThis as { gc?: () => void }).gc;

/** Memory of this process mapped by it alone, in bytes; null without /proc. */
function privateBytes(): number | null {
  try {
    const rollup = readFileSync("/proc/self/smaps_rollup", "latin1");
    let kib = 0;
    for (const match of rollup.matchAll(/^Private_(?:Clean|Dirty):\s+(\d+) kB$/gm)) kib += Number(match[1]);
    return kib * 1024;
  } catch {
    return null;
  }
}

const median = (samples: number[]): number => samples.sort((a, b) => a - b)[samples.length >> 1]!;

/** Median RSS and private memory of five samples, each after a full collection of the main heap. */
async function settledMemory(): Promise<{ rss: number; private: number | null }> {
  const rss: number[] = [];
  const own: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    collect?.();
    await sleep(200);
    rss.push(process.memoryUsage.rss());
    const bytes = privateBytes();
    if (bytes !== null) own.push(bytes);
  }
  return { rss: median(rss), private: own.length === rss.length ? median(own) : null };
}

async function measureKind(kind: JobKind, copy: Copy): Promise<MemoryReading> {
  const runtime = (await loadCopy(copy)).runtime({ warm: WARM });
  try {
    const before = await settledMemory();
    runtime.warmUp();
    await waitFor(() => runtime.threads() >= WARM, 10_000, "warm threads");
    // A thread exists before its module graph is loaded: give the warm threads time to finish loading.
    await sleep(1500);
    const warm = await settledMemory();
    const command = "sleep 60";
    const jobs = Array.from({ length: ACTORS }, () => runtime.start(kind === "monitor" ? monitorRequest(command) : jobRequest(command)));
    await waitFor(() => jobs.every((job) => job.phase() === "running"), 60_000, `${ACTORS} actors running`);
    // Threads that just started allocate while they load; let them reach their idle state.
    await sleep(2000);
    const alive = await settledMemory();
    const threadsAlive = runtime.threads();
    return {
      kind,
      copy,
      actors: ACTORS,
      before: before.rss,
      warm: warm.rss,
      alive: alive.rss,
      threadsAlive,
      perActor: Math.round((alive.rss - before.rss) / ACTORS),
      perWarmThread: Math.round((warm.rss - before.rss) / WARM),
      privatePerActor: alive.private === null || before.private === null ? null : Math.round((alive.private - before.private) / ACTORS),
    };
  } finally {
    await closeRuntime(runtime);
  }
}

async function child(kind: JobKind, copy: Copy): Promise<void> {
  const reading = await measureKind(kind, copy);
  process.stdout.write(JSON.stringify({ reading, gcAvailable: collect !== undefined }));
}

/** One child process per reading: memory a process has freed is not returned to the system, so none may share one. */
async function inChild(kind: JobKind, copy: Copy): Promise<{ reading: MemoryReading; gcAvailable: boolean }> {
  // The child finds the run's install through the environment it inherits.
  if (copy === "installed") await installedPackage();
  const script = fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--expose-gc", script, "--child", kind, `--copy=${copy}`], { stdio: ["ignore", "pipe", "inherit"] });
    let text = "";
    proc.stdout.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    proc.once("error", reject);
    proc.once("close", (code) => {
      if (code !== 0) reject(new Error(`memory benchmark child (${kind}, ${copy}) exited with ${code}`));
      else resolve(JSON.parse(text) as { reading: MemoryReading; gcAvailable: boolean });
    });
  });
}

export async function benchMemory(): Promise<MemoryResult> {
  const runs = [
    await inChild("shell", "checkout"),
    await inChild("shell", "installed"),
    await inChild("monitor", "installed"),
  ];
  const readings = runs.map((run) => run.reading);
  const installed = readings.filter((reading) => reading.copy === "installed");
  return {
    readings,
    gcAvailable: runs.every((run) => run.gcAvailable),
    target: `RSS per idle actor ≤ ${PER_ACTOR_TARGET_BYTES / (1024 * 1024)} MiB`,
    met: installed.every((reading) => reading.perActor <= PER_ACTOR_TARGET_BYTES),
  };
}

export function memoryRows(result: MemoryResult): Row[] {
  const target = `≤ ${PER_ACTOR_TARGET_BYTES / (1024 * 1024)} MiB each`;
  return result.readings.map((reading, index) => {
    const kind = reading.kind === "monitor" ? "monitors" : "shell jobs";
    const rss = `RSS ${mb(reading.before)} → ${mb(reading.alive)}, ${reading.threadsAlive} threads`;
    return {
      benchmark: index === 0 ? `memory: ${reading.actors} idle actors (\`sleep 60\`)` : "",
      variant: `${kind}, ${copyLabel(reading.copy)}`,
      result: `${mb(reading.perActor)} per actor (${rss}); idle warm thread ${mb(reading.perWarmThread)}${reading.privatePerActor === null ? "" : `; private memory ${mb(reading.privatePerActor)} per actor`}`,
      target,
      met: reading.perActor <= PER_ACTOR_TARGET_BYTES,
    };
  });
}

const childAt = process.argv.indexOf("--child");
if (childAt >= 0 && process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = process.argv[childAt + 1] === "monitor" ? "monitor" : "shell";
  try {
    await child(kind, copyArgument());
  } finally {
    // Only when run on its own: a child of a run leaves the run's install to its parent.
    await removeInstalledPackage();
  }
}
