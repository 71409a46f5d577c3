/**
 * Actor threads run ten nice steps below the host, so that output floods read there leave Pi's thread the CPU
 * (docs/decisions/actor-priority.md). Pipe jobs' processes are forked by
 * the spawner, which runs at the host's priority; where they share its session they run ten steps below it, so that
 * they never starve its forks (docs/decisions/scheduling-group.md), and elsewhere at its priority.
 * A PTY job's process is forked by its actor and runs where the actor runs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import type { StartRequest } from "../../host/runtime/api.ts";
import { NEVER_MATCHES } from "../fixtures/jobs.ts";
import { runtimeFor, shellJob, waitFor } from "./helpers.ts";
import { ACTOR_NICE_STEPS } from "../../actors/thread/priority.ts";
import { autogroupEnabled } from "../../shared/process-table/autogroup.ts";
import { findPerl, JOB_NICE_STEPS } from "../../spawner/job-group.ts";

let runtime: SupervisedRuntime | null = null;
afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
});

const linux = process.platform === "linux";

/** Field 19 of /proc/<pid>/stat (or of one thread's stat): the nice value. Fields count after the command's ")". */
function niceFromStat(path: string): number {
  const stat = readFileSync(path, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[19 - 3]);
}

function niceOf(pid: number): number {
  return linux ? niceFromStat(`/proc/${pid}/stat`) : getPriority(pid);
}

/** The host's nice before any actor ran: the main thread of this process. */
const hostNice = getPriority(0);
/** Where a thread or process below the host runs (nice is capped at 19). */
const actorNice = linux ? Math.min(19, hostNice + ACTOR_NICE_STEPS) : hostNice;
/** Where a pipe job's process runs: below the spawner where it shares the spawner's session, else at its priority. */
const pipeJobNice = autogroupEnabled() && findPerl() !== null ? Math.min(19, hostNice + JOB_NICE_STEPS) : hostNice;

async function niceOfJob(request: StartRequest): Promise<number> {
  const job = runtime!.start(request);
  const pid = await waitFor(() => job.pid(), 30_000, "the job's process");
  const nice = niceOf(pid);
  const result = await job.stop();
  expect(result.cleanup).toBe("confirmed");
  return nice;
}

/** A runtime whose spawner listens, as in Pi (its session start warms the runtime up). */
async function warmedRuntime(options: Parameters<typeof runtimeFor>[0] = {}): Promise<SupervisedRuntime> {
  runtime = runtimeFor(options);
  runtime.warmUp();
  expect(await runtime.spawnerReady()).toBe(true);
  return runtime;
}

function threadNices(): number[] {
  return readdirSync(`/proc/${process.pid}/task`).map((tid) => niceFromStat(`/proc/${process.pid}/task/${tid}/stat`));
}

describe("priorities", () => {
  it("a pipe job's process runs where the spawner puts it, as a shell job or a monitor, never where its actor runs", async () => {
    await warmedRuntime();
    expect(await niceOfJob(shellJob("exec sleep 30"))).toBe(pipeJobNice);
    expect(await niceOfJob(shellJob("exec sleep 30", { kind: "monitor", contract: NEVER_MATCHES }))).toBe(pipeJobNice);
  });

  it("a thread the pool reuses starts every pipe job through the spawner, job after job", async () => {
    // One warm thread and jobs one after another: they run on the same thread, which runs below the host.
    await warmedRuntime({ warm: 1 });
    for (let round = 0; round < 4; round += 1) {
      expect(await niceOfJob(shellJob("exec sleep 30"))).toBe(pipeJobNice);
    }
  });

  it.runIf(linux)("actor threads run below the host, and so does a PTY job's process, which its actor forks", async () => {
    await warmedRuntime();
    expect(await niceOfJob(shellJob("exec sleep 30", { io: { kind: "pty", cols: 80, rows: 24 } }))).toBe(actorNice);
  });

  it("the host's own thread keeps its priority; only the actor threads run below it", async () => {
    const rt = await warmedRuntime({ warm: 3 });
    const job = rt.start(shellJob("exec sleep 30"));
    await waitFor(() => job.pid(), 30_000, "the job's process");
    expect(getPriority(0)).toBe(hostNice);
    if (linux) {
      // The main thread's task id is the process id. The pool's threads lower themselves as they load; every other
      // thread (V8's and libuv's helpers) keeps the host's priority.
      expect(niceFromStat(`/proc/${process.pid}/task/${process.pid}/stat`)).toBe(hostNice);
      await waitFor(() => {
        const nices = threadNices();
        const lowered = nices.filter((nice) => nice === actorNice).length;
        return rt.threads() >= 4 && lowered === rt.threads() && nices.every((nice) => nice === actorNice || nice === hostNice);
      }, 30_000, "exactly the pool's threads to run below the host");
    }
    await job.stop();
    expect(getPriority(0)).toBe(hostNice);
  });

  it("loading the actor's thread entry on the main thread leaves that thread's priority alone", async () => {
    // A module graph that reaches the entry from Pi's own thread (a test fixture once did) must not lower it: every
    // thread it starts afterwards would begin lowered too.
    await import("../../actors/thread/lowered-thread.ts");
    expect(getPriority(0)).toBe(hostNice);
    if (linux) expect(niceFromStat(`/proc/${process.pid}/task/${process.pid}/stat`)).toBe(hostNice);
  });
});
