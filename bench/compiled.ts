/**
 * The compiled workers an npm-installed copy runs (dist/, built by `prepack`). A checkout runs its workers from the
 * TypeScript source, and stripping types costs every worker thread a start-up delay and several MiB of its own, so
 * the start and memory benchmarks measure both. dist/ is rebuilt first when any source is newer than its output.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { bundleWorkers } from "../scripts/bundle-workers.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const WORKER_DIRS = ["actors", "mailbox", "shared"];

/** True when every worker-side source has a compiled file at least as new as itself. */
export function compiledWorkersFresh(): boolean {
  for (const dir of WORKER_DIRS) {
    for (const name of readdirSync(`${root}${dir}`)) {
      if (!name.endsWith(".ts")) continue;
      const built = `${root}dist/${dir}/${name.slice(0, -3)}.js`;
      if (!existsSync(built) || statSync(built).mtimeMs < statSync(`${root}${dir}/${name}`).mtimeMs) return false;
    }
  }
  return true;
}

/** Builds dist/ (what `npm run build` does: tsc, then the actor thread's bundle) when missing or stale; returns whether it built. */
export async function ensureCompiledWorkers(): Promise<boolean> {
  if (compiledWorkersFresh()) return false;
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const build = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, encoding: "utf8" });
  // tsc emits even when another file of the tree has a type error; only a missing output is a failure here.
  if (!compiledWorkersFresh()) {
    throw new Error(`could not build the compiled workers (npm run build): ${build.stdout}${build.stderr}`);
  }
  await bundleWorkers();
  return true;
}

/** Runs `work` with the runtime's workers loaded from dist/ (the switch actors/entry-url.ts reads). */
export async function withCompiledWorkers<T>(work: () => Promise<T>): Promise<T> {
  const previous = process.env.PI_JOBS_WORKERS;
  process.env.PI_JOBS_WORKERS = "dist";
  try {
    return await work();
  } finally {
    if (previous === undefined) delete process.env.PI_JOBS_WORKERS;
    else process.env.PI_JOBS_WORKERS = previous;
  }
}
