/**
 * A persisted job's registry entry as the tests see it from outside: the pids its keeper recorded, and a stop for a
 * job a test left running (as kill_session would stop it), so that no keeper outlives the test.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { projectDir } from "../../../host/persist/registry.ts";

export function keeperOf(entry: string): { keeper: number; job: number } {
  const [, keeper, job] = /^keeper (\d+) job (\d+) /.exec(readFileSync(join(entry, "keeper"), "utf8")) ?? [];
  return { keeper: Number(keeper), job: Number(job) };
}

/** SIGKILLs the job's group and its keeper, if the entry is still there. */
export function stopLeftover(entry: string): void {
  if (!existsSync(join(entry, "keeper"))) return;
  const { keeper, job } = keeperOf(entry);
  for (const target of [-job, keeper]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

/**
 * Waits until no Pi holds the ownership lock of `cwd`'s persisted jobs (host/persist/owner-lock.ts): a Pi that quit
 * lets go of it a moment later, once its holder process has read the end of its stdin; a Pi started before then lists
 * the jobs as another Pi's. Returns how long it took, in ms. Uses util-linux `flock`.
 */
export async function ownerLockReleased(cwd: string, timeoutMs = 5_000): Promise<number> {
  const lock = join(projectDir(cwd).dir, "owner.lock");
  const since = performance.now();
  while (spawnSync("flock", ["-n", lock, "true"]).status !== 0) {
    if (performance.now() - since > timeoutMs) throw new Error(`the ownership lock ${lock} was still held after ${timeoutMs} ms`);
    await sleep(10);
  }
  return performance.now() - since;
}
