/**
 * The job runtime with real processes, real worker threads and real PTYs: spawning, output batches, stop and
 * reclaim of whole process groups, the supervisor's takeover of crashed and hung actors, and clean shutdown.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import type { ActorResult } from "../../mailbox/result.ts";
import { HUNG_CPU_MS, STALLED_ACTOR_MS } from "../../host/runtime/heartbeat.ts";
import { FAULTY_ACTOR_ENTRY, withFault, type CrawlRecord } from "../fixtures/faults.ts";
import { groupGone, pidAlive, runtimeFor, shellJob, waitFor } from "./helpers.ts";

let runtime: SupervisedRuntime | null = null;
afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
});

function text(job: { retained(): { lines: { text: string }[] } }): string[] {
  return job.retained().lines.map((line) => line.text);
}

/** Runs `sleep 60` with an injected fault to the end `cause`, which must leave its process group reclaimed. */
async function faultyEnd(fault: ReturnType<typeof withFault>, timeoutMs: number, cause: ActorResult["cause"]): Promise<ActorResult> {
  runtime = runtimeFor({ actorEntry: FAULTY_ACTOR_ENTRY });
  const job = runtime.start(shellJob("sleep 60", { ...fault, timeoutMs, killGraceMs: 200 }));
  const result = await job.done;
  expect(result.cause).toBe(cause);
  expect(result.cleanup).toBe("confirmed");
  expect(await groupGone(job.pgid()!)).toBe(true);
  return result;
}

/**
 * Keeps every core busy twice over with shell loops at this process's priority, in this process's session: where the
 * kernel shares the CPU by session (autogroup) nice values count only within one, so this is what starves a thread at
 * nice 19 of this process, whatever else the machine runs. A loop ends by itself once this process is gone.
 */
function keepCoresBusy(): { stop(): void } {
  const loops: ChildProcess[] = Array.from({ length: 2 * availableParallelism() }, () =>
    spawn("/bin/sh", ["-c", "while kill -0 $PPID 2>/dev/null; do :; done"], { stdio: "ignore" }),
  );
  return { stop: () => loops.forEach((loop) => loop.kill("SIGKILL")) };
}

describe("job runtime", () => {
  it("numbers jobs 1, 2, 3… within their kind, and names each log file by the job's id", async () => {
    runtime = runtimeFor();
    const jobs = [shellJob("true"), { ...shellJob("true"), kind: "monitor" as const, contract: { resultPattern: "x", failurePattern: null, completion: "exit" as const } }, shellJob("true"), shellJob("true")].map(
      (request) => runtime!.start(request),
    );
    expect(jobs.map((job) => [job.id, job.number])).toEqual([["job_1", 1], ["monitor_1", 1], ["job_2", 2], ["job_3", 3]]);
    for (const job of jobs) expect((await job.done).log.path).toMatch(new RegExp(`/${job.id}$`));
  });

  it("runs a noisy command to its end and counts every byte and line", async () => {
    runtime = runtimeFor();
    const job = runtime.start(shellJob("seq 1 200000; echo done >&2"));
    const result = await job.done;
    expect(result.cause).toBe("exit");
    expect(result.exitCode).toBe(0);
    const expectedBytes = Array.from({ length: 200000 }, (_, i) => String(i + 1).length + 1).reduce((a, b) => a + b, 0) + 5;
    expect(result.totals).toEqual({ bytes: expectedBytes, lines: 200001 });
    expect(job.figures().bytes).toBe(expectedBytes);
    expect(job.figures().lines).toBe(200001);
    expect(result.log.bytes).toBe(expectedBytes);
    expect(readFileSync(result.log.path!, "utf8").split("\n").slice(0, 3)).toEqual(["1", "2", "3"]);
    const retained = job.retained();
    expect(retained.lines.length).toBeLessThanOrEqual(2000);
    // stdout and stderr are separate pipes, so only each source's own order is guaranteed (and "done" may have
    // arrived early enough to have left the 2,000-line window).
    expect(retained.lines.filter((line) => line.source === "stdout").at(-1)?.text).toBe("200000");
    expect(retained.droppedLines).toBeGreaterThan(0);
    expect(result.cleanup).toBe("confirmed");
  });

  it("never pauses the writer because the host is busy, and loses nothing when it exits", async () => {
    runtime = runtimeFor();
    const stats = join(mkdtempSync(join(tmpdir(), "pi-jobs-test-")), "dd-stats");
    // A writer that puts 8 MiB through its stdout (under the job's log quota), far more than a pipe holds, then
    // records what it wrote. While it writes, the host's thread is blocked: the writer can only finish if its
    // output is read without the host, as it is (output does not travel to the host unless someone reads it).
    const writer = [
      "import os",
      "total = 0",
      "while total < 8 << 20:",
      "    total += os.write(1, b'x' * 16384)",
      `open(${JSON.stringify(stats)}, 'w').write(str(total))`,
    ].join("\n");
    const job = runtime.start(shellJob(`python3 -c '${writer.replaceAll("'", "'\\''")}'`));
    const notices: string[] = [];
    job.onNotice((notice) => void notices.push(notice.kind));
    await waitFor(() => job.phase() === "running", 30_000, "spawn");
    // Blocked until the writer is done: a condition, not a time. The deadline only keeps a broken build from hanging.
    const deadline = performance.now() + 60_000;
    while (!existsSync(stats) && performance.now() < deadline) {
      // busy
    }
    expect(existsSync(stats)).toBe(true);
    const result = await job.done;
    const written = Number(readFileSync(stats, "utf8"));
    expect(notices).not.toContain("paused");
    expect(written).toBe(8 << 20);
    expect(result.totals.bytes).toBe(written);
    expect(job.figures().bytes).toBe(written);
    expect(result.log.bytes).toBe(written);
  });

  it("labels each retained line with its source", async () => {
    runtime = runtimeFor();
    const job = runtime.start(shellJob("echo out; echo err >&2"));
    await job.done;
    expect(job.retained().lines).toEqual(
      expect.arrayContaining([
        { source: "stdout", text: "out" },
        { source: "stderr", text: "err" },
      ]),
    );
  });

  it("keeps logs private: directory 0700, file 0600", async () => {
    runtime = runtimeFor();
    const result = await runtime.start(shellJob("echo hi")).done;
    expect(statSync(runtime.logDir).mode & 0o777).toBe(0o700);
    expect(statSync(result.log.path!).mode & 0o777).toBe(0o600);
  });

  it("removes its log directory at shutdown when no job kept a log there, and keeps one that holds a log", async () => {
    runtime = runtimeFor();
    runtime.warmUp();
    expect(await runtime.spawnerReady()).toBe(true);
    const unused = runtime.logDir;
    expect(existsSync(unused)).toBe(true);
    await runtime.shutdown();
    // With no job, no thread has a task to finish: the removal follows the spawner's exit, just after shutdown returns.
    await waitFor(() => !existsSync(unused), 10_000, "the unused log directory removed");

    runtime = runtimeFor();
    const result = await runtime.start(shellJob("echo kept")).done;
    const used = runtime.logDir;
    await runtime.shutdown();
    expect(readFileSync(result.log.path!, "utf8")).toContain("kept");
    rmSync(used, { recursive: true, force: true });
  });

  it("stops a child that ignores SIGTERM and its grandchild: both gone, escalated to SIGKILL", async () => {
    runtime = runtimeFor();
    const job = runtime.start(
      shellJob(`trap '' TERM; sh -c 'trap "" TERM; echo grandchild $$; sleep 60' & echo child $$; wait`, { killGraceMs: 300 }),
    );
    await waitFor(() => text(job).some((line) => line.startsWith("grandchild")), 30_000, "grandchild to start");
    const pids = text(job).map((line) => Number(line.split(" ")[1])).filter(Boolean);
    expect(pids.length).toBe(2);
    const result = await job.stop();
    expect(result.cause).toBe("stopped");
    expect(result.escalated).toBe(true);
    expect(result.cleanup).toBe("confirmed");
    for (const pid of pids) expect(pidAlive(pid)).toBe(false);
    expect(await groupGone(job.pgid()!)).toBe(true);
  });

  it("reclaims a backgrounded grandchild that holds the pipe after the shell exits", async () => {
    runtime = runtimeFor();
    const job = runtime.start(shellJob("sleep 60 & echo started $!", { killGraceMs: 300 }));
    const result = await job.done;
    expect(result.cause).toBe("exit");
    expect(result.exitCode).toBe(0);
    const sleeper = Number(text(job).find((line) => line.startsWith("started"))!.split(" ")[1]);
    expect(pidAlive(sleeper)).toBe(false);
    expect(await groupGone(job.pgid()!)).toBe(true);
  });

  it("enforces the hard lifetime: timeout stops the group", async () => {
    runtime = runtimeFor();
    const job = runtime.start(shellJob("sleep 30", { timeoutMs: 300, killGraceMs: 300 }));
    const result = await job.done;
    expect(result.cause).toBe("timeout");
    expect(result.cleanup).toBe("confirmed");
    expect(await groupGone(job.pgid()!)).toBe(true);
  });

  it("reports a missing working directory and a missing shell clearly, leaving nothing running", async () => {
    runtime = runtimeFor();
    const missingDir = await runtime.start(shellJob("echo hi", { cwd: join(tmpdir(), "pi-jobs-no-such-dir") })).done;
    expect(missingDir.cause).toBe("spawn_failed");
    expect(missingDir.message).toMatch(/working directory does not exist/);
    const missingShell = await runtime.start(shellJob("echo hi", { shell: "/nonexistent/shell" })).done;
    expect(missingShell.cause).toBe("spawn_failed");
    expect(missingShell.message).toMatch(/shell not found/);
    expect(runtime.list()).toEqual([]);
  });

  it("writes to stdin and closes it over the control plane", async () => {
    runtime = runtimeFor();
    const job = runtime.start(shellJob("cat", { io: { kind: "pipes", stdin: true } }));
    expect(await job.write(new TextEncoder().encode("hello\n"))).toMatchObject({ ok: true });
    await waitFor(() => text(job).includes("hello"), 30_000, "echo from cat");
    expect(await job.endStdin()).toMatchObject({ ok: true });
    const result = await job.done;
    expect(result.cause).toBe("exit");
    expect(result.exitCode).toBe(0);
    expect(await job.write(new Uint8Array([1]))).toMatchObject({ ok: false });
  });

  it("runs a PTY job: isatty, resize, interrupt", async () => {
    runtime = runtimeFor();
    const job = runtime.start(
      shellJob(`[ -t 0 ] && echo tty-yes; stty size; read line; stty size; echo got-$line; sleep 60`, {
        io: { kind: "pty", cols: 100, rows: 30 },
      }),
    );
    await waitFor(() => text(job).some((line) => line.includes("30 100")), 30_000, "first stty size");
    expect(text(job)).toContain("tty-yes");
    expect(await job.resize(120, 40)).toMatchObject({ ok: true });
    expect(await job.endStdin()).toMatchObject({ ok: false });
    await job.write(new TextEncoder().encode("abc\r"));
    await waitFor(() => text(job).some((line) => line.includes("40 120")), 30_000, "stty size after resize");
    await waitFor(() => text(job).some((line) => line.includes("got-abc")), 30_000, "line read");
    await job.write(new Uint8Array([3]));
    const result = await job.done;
    expect(result.cause).toBe("exit");
    expect(result.exitCode === 130 || result.signal === "SIGINT").toBe(true);
  });

  it("starts and stops a PTY job 50 times in a row without aborting the process", async () => {
    runtime = runtimeFor();
    for (let round = 0; round < 50; round += 1) {
      const job = runtime.start(shellJob("echo ready; sleep 30", { io: { kind: "pty", cols: 80, rows: 24 }, killGraceMs: 500 }));
      if (round % 2 === 0) await waitFor(() => job.phase() === "running", 30_000, "spawn");
      const result = await job.stop();
      expect(["stopped", "exit"]).toContain(result.cause);
      expect(result.cleanup).toBe("confirmed");
    }
    expect(runtime.list()).toEqual([]);
  }, 120_000);

  it("takes over when an actor crashes: group killed, failure reported, other jobs unaffected", async () => {
    runtime = runtimeFor({ actorEntry: FAULTY_ACTOR_ENTRY });
    const bystander = runtime.start(shellJob("sleep 1; echo bystander-done"));
    const crashing = runtime.start(shellJob("echo up; sleep 60", withFault("crash")));
    const result = await crashing.done;
    expect(result.cause).toBe("actor_crashed");
    expect(result.message).toMatch(/injected actor crash/);
    expect(result.cleanup).toBe("confirmed");
    expect(await groupGone(crashing.pgid()!)).toBe(true);
    const other = await bystander.done;
    expect(other.cause).toBe("exit");
    expect(text(bystander)).toContain("bystander-done");
  });

  it("contains a crash in an actor that owns a PTY: the thread stays, the group is gone, the crash is reported", async () => {
    runtime = runtimeFor({ actorEntry: FAULTY_ACTOR_ENTRY });
    const job = runtime.start(shellJob("echo up; sleep 60", { io: { kind: "pty", cols: 80, rows: 24 }, ...withFault("crash") }));
    const result = await job.done;
    expect(result.cause).toBe("actor_crashed");
    expect(result.message).toMatch(/injected actor crash/);
    expect(result.cleanup).toBe("confirmed");
    expect(await groupGone(job.pgid()!)).toBe(true);
    // The runtime and its pool keep working afterwards.
    const next = await runtime.start(shellJob("echo still-fine")).done;
    expect(next.cause).toBe("exit");
  });

  // The actor's thread is held while the command writes 3,000 lines (16,893 bytes on a terminal, CRLF: four times its
  // 4 KiB line buffer) and exits, then once more right after it took the exit in (tests/fixtures/faulty-actor-thread.ts).
  // When the shell's end hangs up the terminal, libuv reads once and takes the hang-up for the end of the output; a
  // descendant that left the group keeps the terminal open instead, and node-pty closes it 200 ms after the exit.
  for (const [ending, tail] of [
    ["the job's end hangs up the terminal", ""],
    ["a descendant that left the group holds the terminal open", "; setsid sleep 30 &"],
  ] as const) {
    it(`keeps the last output of a PTY job that its starved actor had not read when ${ending}`, async () => {
      runtime = runtimeFor({ actorEntry: FAULTY_ACTOR_ENTRY });
      const job = runtime.start(
        shellJob(`until [ -e "$PI_JOBS_TEST_GO" ]; do sleep 0.01; done; seq 1 3000${tail}`, {
          io: { kind: "pty", cols: 80, rows: 24 },
          ...withFault("starve"),
        }),
      );
      const result = await job.done;
      const bytes = Array.from({ length: 3000 }, (_, i) => String(i + 1).length + 2).reduce((a, b) => a + b, 0);
      expect(result.cause).toBe("exit");
      expect(result.exitCode).toBe(0);
      expect(result.totals).toEqual({ bytes, lines: 3000 });
      expect(result.log.bytes).toBe(bytes);
      expect(text(job).at(-1)).toBe("3000");
      expect(result.cleanup).toBe("confirmed");
    });
  }

  it("takes over when an actor hangs past its deadline", async () => {
    // The thread hangs 20 ms after the process exists; the job's clock starts before the fork, so a deadline shorter
    // than a slow start lets the actor time the job out and report before it hangs. Ten seconds leaves room for any
    // start and costs nothing: a hung thread is taken over 15 s after its last heartbeat either way.
    await faultyEnd(withFault("hang"), 10_000, "actor_unresponsive");
  });

  it("takes over when an actor is blocked past its deadline in a call that never returns", async () => {
    // Asleep, not waiting for a CPU: hung however little CPU it had (host/runtime/heartbeat.ts), 15 s after its last beat.
    const result = await faultyEnd(withFault("deadlock"), 10_000, "actor_unresponsive");
    expect(result.message).toMatch(/its thread slept/);
  });

  it.runIf(process.platform === "linux")("never takes over a starved actor: one whose heartbeat stood still while its thread waited for a CPU reports its own end", async () => {
    runtime = runtimeFor({ actorEntry: FAULTY_ACTOR_ENTRY });
    const fault = withFault("crawl");
    const record = fault.env.PI_JOBS_TEST_RECORD!;
    const busy = keepCoresBusy();
    try {
      // The deadline passes at once; the actor's thread, at nice 19 behind the busy cores, cannot act on it for 20 s.
      const job = runtime.start(shellJob("sleep 60", { ...fault, timeoutMs: 500, killGraceMs: 200 }));
      await waitFor(() => job.phase() === "running", 30_000, "the spawn");
      // A read meanwhile waits for the starved actor instead of giving up on it.
      const read = job.readWindow().then(
        () => "answered",
        (error: Error) => error.message,
      );
      await waitFor(() => existsSync(record) || job.phase() === "ended", 55_000, "the crawl's end");
      busy.stop();
      const result = await job.done;
      expect(result.cause).toBe("timeout");
      expect(result.cleanup).toBe("confirmed");
      expect(await groupGone(job.pgid()!)).toBe(true);
      expect(await read).toBe("answered");
      // What makes it starved, not hung: its heartbeat stood still past STALLED_ACTOR_MS while its thread, at the lowest
      // priority, got too little CPU to have beaten.
      const crawled = JSON.parse(readFileSync(record, "utf8")) as CrawlRecord;
      expect(crawled.nice).toBe(19);
      expect(crawled.heldMs).toBeGreaterThan(STALLED_ACTOR_MS);
      expect(crawled.cpuMs).toBeLessThan(HUNG_CPU_MS);
    } finally {
      busy.stop();
    }
  });

  it("lets a late actor whose thread still runs report its own end instead of calling it unresponsive", async () => {
    // The actor times the job out at once but its report comes 6 s late, past the supervisor's backstop (4.5 s): a
    // starved thread's way. Its heartbeat moved after the spawn, so the supervisor waits for the report.
    await faultyEnd(withFault("late-report"), 300, "timeout");
  });

  for (const [engine, failurePattern] of [
    ["linear-time engine", "^(a+)+$"],
    ["sandbox thread", "^(a+)+\\1$"],
  ] as const) {
    it(`a catastrophic failure pattern (${engine}) cannot delay the timeout or the host`, async () => {
      runtime = runtimeFor();
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const job = runtime.start(
        shellJob(`printf '${"a".repeat(40)}b\\n'; sleep 30`, {
          kind: "monitor",
          timeoutMs: 500,
          contract: { resultPattern: "NEVER_MATCHES", failurePattern, completion: "match" },
        }),
      );
      const result = await job.done;
      delay.disable();
      expect(result.cause).toBe("timeout");
      expect(result.monitor?.status).toBe("timeout");
      // Backtracking over 40 a's would take 2^40 steps, hours: a deadline met within seconds, and a host never blocked
      // for as long, show that matching did neither (the bounds are for a loaded machine; no SIGKILL was needed).
      expect(result.elapsedMs).toBeLessThan(15_000);
      expect(result.escalated).toBe(false);
      expect(delay.max / 1e6).toBeLessThan(5_000);
    });
  }

  it("refuses a job over capacity with a clear error", async () => {
    runtime = runtimeFor({ capacity: 2 });
    runtime.start(shellJob("sleep 30"));
    runtime.start(shellJob("sleep 30"));
    expect(() => runtime!.start(shellJob("sleep 30"))).toThrow(/capacity reached: 2 jobs/);
  });

  it("runs 64 concurrent actors, refuses a 65th, then shutdown leaves no process and no worker", async () => {
    runtime = runtimeFor();
    // Each job outlives the longest start of the batch, so that every one of them is ended by the shutdown, not by
    // its own deadline (a loaded run once took over 60 s to start all 64, and the first job timed out meanwhile).
    const jobs = Array.from({ length: 64 }, (_, i) => runtime!.start(shellJob(`echo job-${i}; sleep 600`, { timeoutMs: 600_000 })));
    // 64 fresh threads cost seconds of CPU; on a loaded 2-core machine that is a minute or more.
    await waitFor(() => jobs.every((job) => job.phase() === "running"), 150_000, "all 64 spawned");
    const groups = jobs.map((job) => job.pgid()!);
    expect(runtime.threads()).toBeGreaterThanOrEqual(64);
    // The 65th is refused while the 64 processes really exist (seen in the process table, not only in our state).
    for (const pgid of groups) expect(await groupGone(pgid)).toBe(false);
    expect(() => runtime!.start(shellJob("echo 65th"))).toThrow(/capacity reached: 64 jobs/);
    await runtime.shutdown();
    for (const pgid of groups) expect(await groupGone(pgid)).toBe(true);
    expect(runtime.threads()).toBe(0);
    for (const job of jobs) expect(job.result()?.cause).toBe("stopped");
    runtime = null;
  }, 240_000);
});
