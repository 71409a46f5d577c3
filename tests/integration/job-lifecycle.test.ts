/**
 * A job's lifecycle on real processes: honest `starting`, one state that says who asked for a stop and tells the end
 * before anything else hears of it, a stop during `starting` that leaves nothing, control calls
 * that answer on a machine whose cores are both busy, and a quit in the middle of a burst that leaves no process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { burstThenShutdown, processesWith } from "../fixtures/burst.ts";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { ShellService } from "../../host/shell/service.ts";
import { createShellState } from "../../host/shell/state.ts";
import { groupGone, runtimeFor, shellJob, waitFor } from "./helpers.ts";

let runtime: SupervisedRuntime | null = null;

afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
});

function token(): string {
  return `${700 + Math.floor(Math.random() * 200)}.${process.pid}${Math.floor(performance.now())}`;
}

describe("starting is its own state", () => {
  it("a job is `starting` with no pid until its process exists, then `running` with its group", async () => {
    runtime = runtimeFor();
    const job = runtime.start(shellJob("sleep 30"));
    expect(job.phase()).toBe("starting");
    expect(job.pid()).toBeNull();
    expect(job.deadline()).toBeNull();
    await waitFor(() => job.phase() === "running", 60_000, "spawn");
    const pgid = job.pgid();
    expect(pgid).not.toBeNull();
    expect(await groupGone(pgid!)).toBe(false);
    expect(job.deadline()).not.toBeNull();
    await job.stop();
    expect(await groupGone(pgid!)).toBe(true);
  });

  it("exec_command never says running before the process exists", async () => {
    runtime = runtimeFor();
    const service = new ShellService(createShellState(), { runtime: () => runtime!, killGraceMs: 500 });
    // Several at once, each answering after the minimum wait: whatever state each one reports must be true.
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => service.exec({ cmd: "sleep 30", yield_time_ms: 250 }, { toolCallId: `c${i}`, cwd: tmpdir() })),
    );
    for (const result of results) {
      const job = service.state.registry.get(result.session_id!)!.handle;
      if (result.running) {
        expect(result.status).toBe("running");
        expect(result.supervision.state).toBe("running");
        expect(result.supervision.deadline_utc).not.toBeNull();
        expect(job.pgid()).not.toBeNull();
      } else {
        expect(result.status).toBe("starting");
        expect(result.supervision.state).toBe("starting");
        expect(result.supervision.deadline_utc).toBeNull();
      }
    }
    const listed = service.list({});
    expect(listed.active_count).toBe(6);
    await service.stopAll();
  });
});

describe("one state, owned by the job", () => {
  it("names who asked for the stop from the request on, and tells its end before `done` does", async () => {
    runtime = runtimeFor();
    const job = runtime.start(shellJob("sleep 30", { killGraceMs: 500 }));
    await waitFor(() => job.phase() === "running", 60_000, "spawn");
    expect(job.state()).toEqual({ phase: "running", stopBy: null });
    const heard: string[] = [];
    job.onEnd((ended) => heard.push(`end by ${ended.stopBy}`));
    void job.done.then(() => heard.push("done"));
    const stopped = job.stop("SIGTERM", { by: "session_shutdown" });
    // The process exists until the actor has stopped it: still running, and being stopped.
    expect(job.state()).toEqual({ phase: "running", stopBy: "session_shutdown" });
    // A later request does not change who asked first.
    void job.stop("SIGTERM", { by: "tool" });
    const result = await stopped;
    expect(job.state()).toEqual({ phase: "ended", result, stopBy: "session_shutdown" });
    expect(heard).toEqual(["end by session_shutdown", "done"]);
    // A listener added after the end is told at once.
    const late: (string | null)[] = [];
    job.onEnd((ended) => late.push(ended.stopBy));
    expect(late).toEqual(["session_shutdown"]);
  });

  it("a job that ends on its own was stopped by nobody; a stop while starting ends it at once, by its requester", async () => {
    runtime = runtimeFor();
    const own = runtime.start(shellJob("exit 3"));
    const result = await own.done;
    expect(own.state()).toEqual({ phase: "ended", result, stopBy: null });
    const cancelled = runtime.start(shellJob("sleep 30"));
    expect(cancelled.state()).toEqual({ phase: "starting", stopBy: null });
    void cancelled.stop("SIGTERM", { by: "tool" });
    const state = cancelled.state();
    // Cancelled before it spawned (ended at once), or being stopped while its process is spawned.
    if (state.phase === "ended") expect(state).toMatchObject({ stopBy: "tool", result: { cause: "stopped" } });
    else expect(state.stopBy).toBe("tool");
    await expect(cancelled.done).resolves.toMatchObject({ cause: "stopped" });
    expect(cancelled.state()).toMatchObject({ phase: "ended", stopBy: "tool" });
  });
});

describe("a stop during starting", () => {
  it("cancels a job before it spawns: it ends stopped and no process ever exists", async () => {
    runtime = runtimeFor();
    const mark = token();
    const jobs = ["pipes", "pty", "monitor"].map((kind) =>
      runtime!.start(
        kind === "monitor"
          ? shellJob(`sleep ${mark}`, { kind: "monitor", contract: { resultPattern: "^NEVER$", failurePattern: null, completion: "exit" } })
          : shellJob(`sleep ${mark}`, kind === "pty" ? { io: { kind: "pty", cols: 80, rows: 24 } } : {}),
      ),
    );
    const results = await Promise.all(jobs.map((job) => job.stop()));
    for (const result of results) {
      expect(result.cause).toBe("stopped");
      expect(result.cleanup).toBe("confirmed");
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(processesWith(mark)).toEqual([]);
  });

  it("a stop at any moment of the start leaves no process behind", async () => {
    runtime = runtimeFor();
    const mark = token();
    const jobs = [];
    for (let i = 0; i < 12; i += 1) {
      const io = i % 2 === 0 ? ({ kind: "pipes", stdin: false } as const) : ({ kind: "pty", cols: 80, rows: 24 } as const);
      const job = runtime.start(shellJob(`sleep ${mark}`, { io, killGraceMs: 300 }));
      jobs.push(job);
      // Stops land before, during and after the spawn.
      setTimeout(() => void job.stop(), i * 15);
    }
    const results = await Promise.all(jobs.map((job) => job.done));
    for (const result of results) expect(result.cause).toBe("stopped");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(processesWith(mark)).toEqual([]);
  });
});

describe("control calls on a machine whose cores are both busy", () => {
  const hogs: ChildProcess[] = [];
  beforeAll(() => {
    for (let i = 0; i < 2; i += 1) hogs.push(spawn("sh", ["-c", "exec yes > /dev/null"], { stdio: "ignore" }));
  });
  afterAll(() => {
    for (const hog of hogs) hog.kill("SIGKILL");
  });

  it("write, end_stdin and resize answer, and a running job takes more input", async () => {
    runtime = runtimeFor();
    const service = new ShellService(createShellState(), { runtime: () => runtime!, killGraceMs: 500 });
    const call = (n: string) => ({ toolCallId: n, cwd: tmpdir() });
    for (let round = 0; round < 3; round += 1) {
      const started = await service.exec({ cmd: "cat", yield_time_ms: 250 }, call(`exec-${round}`));
      const id = started.session_id!;
      const wrote = await service.writeStdin({ session_id: id, chars: `hello ${round}\n`, end_stdin: true, yield_time_ms: 30_000 }, call(`write-${round}`));
      expect(wrote.notes).toEqual(expect.arrayContaining([`wrote ${`hello ${round}\n`.length} bytes`, "stdin closed"]));
      expect(wrote.output).toContain(`hello ${round}`);
      expect(wrote.status).toBe("exited");
    }
    const tty = await service.exec({ cmd: "sleep 30", tty: true, yield_time_ms: 250 }, call("tty"));
    const resized = await service.writeStdin({ session_id: tty.session_id!, cols: 100, rows: 40, yield_time_ms: 250 }, call("resize"));
    expect(resized.notes).toContain("resized to 100x40");
    // The actor takes input only while its process runs ("the job is not running" otherwise).
    const wrote = await service.writeStdin({ session_id: tty.session_id!, chars: "x", yield_time_ms: 250 }, call("still-running"));
    expect(wrote.notes).toContain("wrote 1 bytes");
    expect(wrote.status).toBe("running");
    await service.stopAll();
  }, 180_000);
});

describe("quitting in the middle of a burst", () => {
  for (const delayMs of [50, 250, 600]) {
    it(`leaves no process when the shutdown comes ${delayMs} ms in (pipes, PTYs, monitors)`, async () => {
      const outcome = await burstThenShutdown({ perKind: 6, delayMs, killGraceMs: 1000 });
      expect(outcome.survivors).toEqual([]);
      // Stopping is bounded by the grace plus a second; the margin is for a loaded machine, not a target.
      expect(outcome.stopMs).toBeLessThan(outcome.killGraceMs + 10_000);
    }, 120_000);
  }
});
