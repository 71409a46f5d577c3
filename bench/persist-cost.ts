/**
 * What a persisted job (exec_command with persist: true) costs beside an ordinary one, on the checkout:
 *
 * - start → running: an ordinary `sleep 60` from `start()` until its process runs, beside a persisted one from the
 *   keeper's launch (host/persist/keeper.ts: the entry written, the keeper detached, the job started) until its
 *   follower runs in its actor, as exec_command starts it;
 * - memory: what a persisted job adds beside its own processes for its whole life, its keeper and its follower (two
 *   perl processes), as resident memory (RSS) and as proportional memory (PSS, Linux: the perl interpreter's pages
 *   shared between them and with every other perl counted in part).
 *
 * The jobs run one at a time on a warm pool; each is stopped (the persisted one through its keeper) before the next.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JobHandle } from "../host/runtime/api.ts";
import { startKept, stopKept } from "../host/persist/keeper.ts";
import { followKept } from "../host/shell/persisted-start.ts";
import type { ExecRequest } from "../host/shell/validate.ts";
import { closeRuntime, installedRuntime, jobRequest, mb, ms, repetitions, sleep, summarize, waitFor, type Row, type Summary } from "./shared.ts";

const ITERATIONS = repetitions(20, 3);
const WARMUPS = repetitions(3, 1);
const LIMITS = { killGraceMs: 1000, logMaxBytes: 16 * 1024 * 1024 };

export interface PersistCostResult {
  iterations: number;
  /** start() → the ordinary job's process runs. */
  ordinaryStart: Summary;
  /** The keeper's launch → the follower runs in its actor (the job runs before that). */
  persistedStart: Summary;
  /** Keeper + follower, bytes. */
  addedRss: Summary;
  /** Keeper + follower, bytes; null where /proc/<pid>/smaps_rollup cannot be read. */
  addedPss: Summary | null;
}

/** A figure from /proc/<pid>/status or smaps_rollup, in bytes; null when it cannot be read. */
function procKb(pid: number, file: "status" | "smaps_rollup", field: string): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/${file}`, "utf8"));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

const REQUEST: ExecRequest = {
  cmd: "sleep 60",
  workdir: null,
  tty: false,
  yieldTimeMs: undefined,
  timeoutMs: 120_000,
  onExit: "none",
  shell: "/bin/sh",
  ready: null,
  stallMs: null,
  onStall: "none",
  limits: null,
  persist: true,
  raw: false,
};

async function running(job: JobHandle): Promise<void> {
  while (job.phase() === "starting") await sleep(1);
  if (job.phase() !== "running") throw new Error(`bench/persist-cost.ts: the job ended before it ran: ${JSON.stringify(job.state())}`);
}

export async function benchPersistCost(): Promise<PersistCostResult> {
  const runtime = installedRuntime();
  const root = mkdtempSync(join(tmpdir(), "persist-bench-"));
  const project = mkdtempSync(join(tmpdir(), "persist-bench-project-"));
  const ordinary: number[] = [];
  const persisted: number[] = [];
  const rss: number[] = [];
  const pss: number[] = [];
  try {
    for (let i = 0; i < WARMUPS + ITERATIONS; i += 1) {
      const measured = i >= WARMUPS;
      await sleep(30);
      const startedAt = performance.now();
      const plain = runtime.start(jobRequest("sleep 60"));
      await running(plain);
      if (measured) ordinary.push(performance.now() - startedAt);
      await plain.stop("SIGKILL");

      await sleep(30);
      const keptAt = performance.now();
      const kept = await startKept({ project, cwd: project, cmd: REQUEST.cmd, shell: "/bin/sh", lifetimeMs: REQUEST.timeoutMs, graceMs: 1000, onExit: "none", root });
      const follower = followKept(runtime, kept, REQUEST, LIMITS, 0);
      await running(follower);
      if (measured) persisted.push(performance.now() - keptAt);
      const followerPid = follower.pid();
      // Read once the follower has settled into its loop (perl has loaded and compiled it).
      await sleep(200);
      const pids = [kept.entry.keeperPid, followerPid ?? -1];
      const rssNow = pids.map((pid) => procKb(pid, "status", "VmRSS"));
      const pssNow = pids.map((pid) => procKb(pid, "smaps_rollup", "Pss"));
      if (measured && rssNow.every((value) => value !== null)) rss.push(rssNow.reduce<number>((sum, value) => sum + value!, 0));
      if (measured && pssNow.every((value) => value !== null)) pss.push(pssNow.reduce<number>((sum, value) => sum + value!, 0));
      if (!(await stopKept(kept, "SIGKILL", { graceMs: 0, confirmMs: 5000 }))) throw new Error("bench/persist-cost.ts: a persisted job's stop was not confirmed");
      await follower.stop("SIGKILL");
      await waitFor(() => follower.phase() === "ended", 5000, "the follower's end");
      rmSync(kept.dir, { recursive: true, force: true });
    }
  } finally {
    await closeRuntime(runtime);
    rmSync(root, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  }
  return {
    iterations: ITERATIONS,
    ordinaryStart: summarize(ordinary),
    persistedStart: summarize(persisted),
    addedRss: summarize(rss),
    addedPss: pss.length === 0 ? null : summarize(pss),
  };
}

export function persistCostRows(result: PersistCostResult): Row[] {
  const row = (variant: string, value: string): Row => ({ benchmark: "persisted job", variant, result: value, target: "", met: null });
  const start = (s: Summary) => `median ${ms(s.median)}, p90 ${ms(s.p90)} (n=${s.n})`;
  return [
    row("start → running, ordinary `sleep 60`", start(result.ordinaryStart)),
    row("start → running, persisted (keeper launched, follower running)", start(result.persistedStart)),
    row("memory added for its life: keeper + follower, RSS", `median ${mb(result.addedRss.median)}`),
    ...(result.addedPss !== null ? [row("memory added for its life: keeper + follower, PSS", `median ${mb(result.addedPss.median)}`)] : []),
  ];
}
