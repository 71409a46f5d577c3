/**
 * The warm pool with real worker threads: threads are made ahead of demand, so `warm` of them stay idle and loaded
 * beyond the jobs that run, and a job started on one of them does not wait for a thread; a burst boots no more
 * threads at once than there are cores, and a job stopped while it waits for a thread never gets one.
 */
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { createJobCell, JobCellReader } from "../../mailbox/cell.ts";
import type { ActorTask } from "../../mailbox/task.ts";
import type { JobSpec } from "../../mailbox/spec.ts";
import { createActorPool, type ActorPool } from "../../host/runtime/pool.ts";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { runtimeFor, shellJob, waitFor } from "./helpers.ts";

let runtime: SupervisedRuntime | null = null;
let pool: ActorPool | null = null;
let bootsDir: string | null = null;
afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
  await pool?.destroy();
  pool = null;
  delete process.env.PI_JOBS_TEST_BOOTS;
  if (bootsDir) rmSync(bootsDir, { recursive: true, force: true });
  bootsDir = null;
});

describe("actor pool", () => {
  it("keeps the warm threads idle beyond the running jobs", async () => {
    runtime = runtimeFor({ warm: 2, checkMessages: false });
    runtime.warmUp();
    await waitFor(() => runtime!.threads() >= 2, 30_000, "the two warm threads");
    const jobs = Array.from({ length: 3 }, () => runtime!.start(shellJob("sleep 30")));
    await waitFor(() => jobs.every((job) => job.phase() === "running"), 30_000, "the three jobs to run");
    // Three busy threads and two idle ones: the next two jobs find a thread that already runs.
    await waitFor(() => runtime!.threads() >= 5, 30_000, "two idle threads beyond the three jobs");
    expect(runtime.threads()).toBeLessThanOrEqual(3 + 2 + 2);
  }, 60_000);
});

/** A pool of tests/fixtures/slow-boot-thread.ts, whose threads write when their load began and ended. */
function slowBootPool(capacity: number): { pool: ActorPool; boots: () => { started: number; mostAtOnce: number } } {
  bootsDir = mkdtempSync(join(tmpdir(), "pi-jobs-boots-"));
  const file = join(bootsDir, "boots");
  // A worker thread takes a copy of the environment when it is made.
  process.env.PI_JOBS_TEST_BOOTS = file;
  const made = createActorPool({ capacity, warm: 0, entry: new URL("../fixtures/slow-boot-thread.ts", import.meta.url) });
  const boots = () => {
    const events = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split(" "))
      .map(([kind, , at]) => ({ delta: kind === "start" ? 1 : -1, at: BigInt(at!) }))
      // At the same instant an end counts before a start: a load ends before piscina can make the next thread.
      .sort((a, b) => (a.at === b.at ? a.delta - b.delta : a.at < b.at ? -1 : 1));
    let now = 0;
    let mostAtOnce = 0;
    for (const event of events) {
      now += event.delta;
      mostAtOnce = Math.max(mostAtOnce, now);
    }
    return { started: events.filter((event) => event.delta === 1).length, mostAtOnce };
  };
  return { pool: made, boots };
}

/** A task for the slow-boot entry: `running` settles once its thread runs it, `finish` lets it return. */
function fixtureTask(id: string): { task: ActorTask; running: Promise<unknown>; finish: () => void } {
  const data = new MessageChannel();
  const control = new MessageChannel();
  const task: ActorTask = {
    spec: { id } as JobSpec,
    data: data.port2,
    control: control.port2,
    cell: createJobCell(),
    logBudget: new SharedArrayBuffer(8),
  };
  const port: MessagePort = data.port1;
  return {
    task,
    running: once(port, "message"),
    finish: () => {
      port.postMessage("finish");
      port.close();
      control.port1.close();
    },
  };
}

describe("pool destroy", () => {
  it("a thread ended before the destroy and exiting late is not replaced after it", async () => {
    pool = createActorPool({ capacity: 4, warm: 1, entry: new URL("../fixtures/slow-exit-thread.ts", import.meta.url) });
    const job = fixtureTask("late-exit");
    const abort = new AbortController();
    const result = pool.run(job.task, abort.signal);
    await job.running;
    // Well inside its one-second child by now. piscina ends the thread at once and forgets it; the thread exits only
    // once the child has.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const endedAt = Date.now();
    abort.abort(new Error("taken over"));
    await expect(result).rejects.toThrow();
    await pool.destroy();
    // Had the destroy not waited for that exit, piscina would make a new thread (its minimum) as the exit arrives,
    // about a second after the abort: look well past it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, endedAt + 3000 - Date.now())));
    expect(pool.threads()).toBe(0);
    job.finish();
  }, 60_000);
});

describe("pool destroy of many threads", () => {
  it("ends every thread, one at a time, and piscina makes none anew as they go", async () => {
    const threadsOfProcess = () => readdirSync("/proc/self/task").length;
    const before = threadsOfProcess();
    runtime = runtimeFor({ warm: 2, checkMessages: false });
    const jobs = Array.from({ length: 6 }, () => runtime!.start(shellJob("sleep 30")));
    await waitFor(() => jobs.every((job) => job.phase() === "running"), 30_000, "the six jobs to run");
    expect(runtime.threads()).toBeGreaterThanOrEqual(6);
    await runtime.shutdown();
    // Four of the threads are ended one by one outside piscina's own destroy; piscina replaces such a thread only
    // below its minimum (the 2 warm): none may come back, now or a while later.
    await waitFor(() => threadsOfProcess() <= before, 20_000, "the process's threads back to where they were");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(threadsOfProcess()).toBeLessThanOrEqual(before);
  }, 60_000);
});

describe("thread boots", () => {
  it("a burst boots no more threads at once than there are cores, and every job of it gets a thread", async () => {
    const cores = availableParallelism();
    const made = slowBootPool(64);
    pool = made.pool;
    const jobs = Array.from({ length: cores * 3 + 2 }, (_, i) => fixtureTask(`burst-${i}`));
    const results = jobs.map((job) => made.pool.run(job.task, new AbortController().signal));
    await Promise.all(jobs.map((job) => job.running));
    const boots = made.boots();
    expect(boots.started).toBe(jobs.length);
    expect(boots.mostAtOnce).toBeGreaterThanOrEqual(1);
    expect(boots.mostAtOnce).toBeLessThanOrEqual(cores);
    for (const job of jobs) job.finish();
    expect(await Promise.all(results)).toEqual(jobs.map((job) => ({ id: job.task.spec.id, cause: "exit" })));
  }, 60_000);

  it("a job stopped while it waits for a thread ends without one", async () => {
    const cores = availableParallelism();
    const made = slowBootPool(64);
    pool = made.pool;
    const jobs = Array.from({ length: cores + 1 }, (_, i) => fixtureTask(`wait-${i}`));
    const results = jobs.map((job) => made.pool.run(job.task, new AbortController().signal));
    // The first `cores` jobs each boot a thread; the last one waits, and is stopped there, as the host stops a job
    // before its actor claimed the spawn.
    const last = jobs.at(-1)!;
    expect(new JobCellReader(last.task.cell).cancel()).toBe(true);
    expect(await results.at(-1)).toEqual({ id: last.task.spec.id, cause: "stopped" });
    const running = jobs.slice(0, -1);
    await Promise.all(running.map((job) => job.running));
    for (const job of running) job.finish();
    await Promise.all(results.slice(0, -1));
    last.finish();
    expect(made.boots().started).toBe(cores);
    expect(made.pool.threads()).toBe(cores);
  }, 60_000);
});
