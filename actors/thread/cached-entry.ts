/**
 * What a compiled copy's pool loads on each new thread: the actor thread's bundled entry (dist/actors/thread/
 * actor-thread.cjs, scripts/build.ts), compiled from the pool's V8 code cache once there is one.
 *
 * V8 compiles a function when it is first called, in every thread anew, so in a burst every thread paid for compiling
 * the bundle and then, on its first job, for each function a job's start calls. The first thread to have started a
 * job's process saves what V8 has compiled of the bundle by then into the pool's shared cache (mailbox/code-cache.ts),
 * and the threads made after it compile from that instead (docs/decisions/code-cache.md). The bundle runs as
 * `require()` would run it: in
 * CommonJS's wrapper, with its own file's name and a `require` that resolves from its folder.
 */
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { workerData } from "node:worker_threads";
import { claimCodeCache, codeCacheWanted, countCodeCacheUse, readCodeCache, writeCodeCache, type BundleIdentity } from "../../mailbox/code-cache.ts";
import { JobCellReader } from "../../mailbox/cell.ts";
import type { ActorTask, ActorTaskResult } from "../../mailbox/task.ts";

interface ThreadEntry {
  default(task: ActorTask | null): Promise<ActorTaskResult | undefined>;
  warm(): void;
}

const BUNDLE = fileURLToPath(new URL("./actor-thread.cjs", import.meta.url));
/** How long a first job may take to start its process before the cache is saved without what its start compiles. */
const START_WAIT_MS = 5_000;

const offered: unknown = (workerData as { codeCache?: unknown } | null)?.codeCache;
const cache = offered instanceof SharedArrayBuffer ? offered : null;

function readBundle(): { source: string; identity: BundleIdentity } {
  const fd = openSync(BUNDLE, "r");
  try {
    const { size, mtimeMs } = fstatSync(fd);
    return { source: readFileSync(fd, "utf8"), identity: { size, mtimeMs } };
  } finally {
    closeSync(fd);
  }
}

const bundle = readBundle();
const cachedData = cache === null ? undefined : readCodeCache(cache, bundle.identity);
// The wrapper on a line of its own, so that the bundle's lines keep their numbers in stack traces.
const script = new Script(`(function (exports, require, module, __filename, __dirname) {\n${bundle.source}\n})`, {
  filename: BUNDLE,
  lineOffset: -1,
  cachedData,
});
if (cache !== null && cachedData !== undefined && !script.cachedDataRejected) countCodeCacheUse(cache);
const loaded: { exports: Partial<ThreadEntry> } = { exports: {} };
// This loader runs as CommonJS from the bundle's own folder (scripts/build.ts), so its `require` resolves what the
// bundle's would; `createRequire` would load node:module, and with it the ES module loader, into every thread.
(script.runInThisContext() as (...args: unknown[]) => void)(loaded.exports, require, loaded, BUNDLE, dirname(BUNDLE));
const entry = loaded.exports as ThreadEntry;

/** Saves the cache once the job has started its process (or ended, or taken START_WAIT_MS), unless another thread did. */
async function saveAfterStart(task: ActorTask, cache: SharedArrayBuffer): Promise<void> {
  const cell = new JobCellReader(task.cell);
  const deadline = performance.now() + START_WAIT_MS;
  for (let state = cell.state(); state === "starting" || state === "spawning"; ) {
    const left = deadline - performance.now();
    if (left <= 0) break;
    state = await cell.changed(state, left);
  }
  if (!claimCodeCache(cache)) return;
  let bytes: Buffer | null;
  try {
    bytes = script.createCachedData();
  } catch {
    // A cache V8 cannot make is a cache not used: every thread compiles as it would without one.
    bytes = null;
  }
  writeCodeCache(cache, bundle.identity, bytes);
}

export default function runTask(task: ActorTask | null): Promise<ActorTaskResult | undefined> {
  const run = entry.default(task);
  if (task !== null && cache !== null && codeCacheWanted(cache)) void saveAfterStart(task, cache);
  return run;
}

export const warm = (): void => entry.warm();
