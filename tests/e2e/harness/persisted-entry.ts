/**
 * A persisted job's registry entry as the tests see it from outside: the pids its keeper recorded, and a stop for a
 * job a test left running (as kill_session would stop it), so that no keeper outlives the test.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

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
