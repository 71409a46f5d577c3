/**
 * The spawner, both its programs (spawner/spawner.pl and spawner/spawner.ts), with real processes: a pipe job's process
 * is forked by the session's small spawner process, not by Pi's, and behaves exactly as one the actor forked itself —
 * exit codes, signals, both output streams, stdin, spawn errors. A spawner that dies costs no job: a running job still
 * ends when its process does, and later jobs are spawned anyway. A perl that cannot serve gives way to the Node one.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import type { JobHandle } from "../../host/runtime/api.ts";
import { autogroupEnabled, STARTING_SESSION_NICE } from "../../shared/process-table/autogroup.ts";
import { createSpawner, type Spawner, type SpawnerOptions, type SpawnerProgram } from "../../host/runtime/spawner.ts";
import { findPerl, JOB_NICE_STEPS } from "../../spawner/job-group.ts";
import { pidAlive, pidExists, runtimeFor, shellJob, waitFor } from "./helpers.ts";

const linux = process.platform === "linux";
let runtime: SupervisedRuntime | null = null;

afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
});

/** A runtime whose spawner listens, so that its pipe jobs go through it. */
async function spawnerRuntime(program: SpawnerProgram): Promise<SupervisedRuntime> {
  runtime = runtimeFor({ spawnerProgram: program });
  runtime.warmUp();
  expect(await runtime.spawnerReady()).toBe(true);
  return runtime;
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** Fields of /proc/<pid>/stat after the command name: [2] is the process group, [3] the session, [16] the nice value. */
function statOf(pid: number): { pgid: number; sid: number; nice: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgid: Number(fields[2]), sid: Number(fields[3]), nice: Number(fields[16]) };
}

/** Where jobs share the spawner's session: the kernel schedules by session and perl can give each job its group. */
const sharedSession = autogroupEnabled() && findPerl() !== null;

function commandLineOrEmpty(pid: number): string {
  try {
    return commandLineOf(pid);
  } catch {
    return "";
  }
}

function commandLineOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ");
}

async function output(job: JobHandle): Promise<string> {
  return (await job.takeUnread(true, true)).text;
}

const withOutput = { unread: { headBytes: 1 << 16, tailBytes: 1 << 16 } };

/** The spawner process listening on `socket`, found by its command line. */
function spawnerListeningOn(socket: string): number {
  return Number(readdirSync("/proc").find((entry) => /^\d+$/.test(entry) && commandLineOrEmpty(Number(entry)).includes(socket)));
}

/** A spawner of its own in a fresh directory, once it listens; stopped and its directory removed after `use`. */
async function withSpawner(options: SpawnerOptions, use: (spawner: Spawner, dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "pi-jobs-spawner-"));
  const spawner = createSpawner(dir, options);
  // The spawner holds no event loop open; this does.
  const held = setInterval(() => {}, 1000);
  try {
    expect(await spawner.ready()).toBe(true);
    await use(spawner, dir);
  } finally {
    clearInterval(held);
    await spawner.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What each program's command line names. */
const PROGRAM_FILE: Record<SpawnerProgram, RegExp> = { perl: /spawner[\\/]spawner\.pl /, node: /spawner[\\/]spawner\.[jt]s / };

describe.each(["perl", "node"] as const)("the %s spawner", (program) => {
  it.runIf(linux)("forks a pipe job's process from its own small process, not from Pi's", async () => {
    const rt = await spawnerRuntime(program);
    const job = rt.start(shellJob("exec sleep 30"));
    const pid = await waitFor(() => job.pid(), 30_000, "the job's process");
    const parent = parentOf(pid);
    expect(parent).not.toBe(process.pid);
    expect(commandLineOf(parent)).toMatch(PROGRAM_FILE[program]);
    expect(job.spec.spawner).toBe(join(rt.logDir, "spawner.sock"));
    expect((await job.stop()).cleanup).toBe("confirmed");
  });

  it.runIf(sharedSession)("pipe jobs share the spawner's session, each in a process group of its own, below the spawner", async () => {
    const rt = await spawnerRuntime(program);
    const jobs = [0, 1, 2].map(() => rt.start(shellJob("exec sleep 30")));
    const pids = await Promise.all(jobs.map((job) => waitFor(() => job.pid(), 30_000, "a job's process")));
    const spawner = parentOf(pids[0]!);
    // Inside the session, below the spawner, whose forks must not wait behind the jobs.
    const nice = Math.min(19, statOf(spawner).nice + JOB_NICE_STEPS);
    for (const [index, pid] of pids.entries()) {
      expect(statOf(pid)).toEqual({ pgid: pid, sid: spawner, nice });
      expect(jobs[index]!.pgid()).toBe(pid);
    }
    // A stop reaches its own group only.
    expect((await jobs[0]!.stop()).cleanup).toBe("confirmed");
    expect(pidAlive(pids[1]!) && pidAlive(pids[2]!)).toBe(true);
    await Promise.all(jobs.slice(1).map((job) => job.stop()));
  });

  it.runIf(autogroupEnabled())("the jobs' session yields to Pi's while jobs start, and is back at nice 0 after", async () => {
    await withSpawner({ program }, async (spawner, dir) => {
      const pid = spawnerListeningOn(join(dir, "spawner.sock"));
      const niceOfSession = () => Number(/nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, "latin1"))?.[1]);
      expect(niceOfSession()).toBe(0);
      spawner.setStarting(true);
      await waitFor(() => niceOfSession() === STARTING_SESSION_NICE, 10_000, "the session to yield");
      spawner.setStarting(false);
      await waitFor(() => niceOfSession() === 0, 10_000, "the session to be back at nice 0");
    });
  });

  it.runIf(sharedSession)("a job's environment reaches its command exactly, and nothing of it reaches the launcher", async () => {
    const rt = await spawnerRuntime(program);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      // Each of these would change or garble a perl that read them.
      PERL5OPT: "-Mno::such::module",
      PERL5LIB: "/no/such/lib",
      LC_ALL: "xx_XX.bogus",
      WITH_EQUALS: "a=b=c",
      UNICODE: "größe ✓",
      EMPTY: "",
      MULTI_LINE: "one\ntwo",
    };
    const names = Object.keys(env);
    const job = rt.start(shellJob(`printf '%s\\n' ${names.map((name) => `"\${${name}-unset}"`).join(" ")}`, { env, ...withOutput }));
    expect(await job.done).toMatchObject({ cause: "exit", exitCode: 0 });
    expect(await output(job)).toBe(names.map((name) => `${env[name]}\n`).join(""));
  });

  it.runIf(linux)("a job's process starts with no signal ignored or blocked, whatever the spawner ignores for itself", async () => {
    const rt = await spawnerRuntime(program);
    // The command's own mask, read by itself: a shell blocks every signal for a moment around each fork.
    const job = rt.start(shellJob("exec grep -E '^Sig(Ign|Blk)' /proc/self/status", withOutput));
    expect(await job.done).toMatchObject({ cause: "exit", exitCode: 0 });
    expect(await output(job)).toBe("SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
  });

  it.runIf(linux)("closes what it cannot use: a first line that is not the protocol's, the streams of a request whose control closed", async () => {
    await withSpawner({ program }, async (_spawner, dir) => {
      const socket = join(dir, "spawner.sock");
      const open = async (first: string): Promise<{ socket: Socket; closed: Promise<void> }> => {
        const connection = connect(socket);
        await once(connection, "connect");
        connection.on("error", () => {});
        const closed = new Promise<void>((resolve) => connection.once("close", () => resolve()));
        connection.resume();
        connection.write(`${first}\n`);
        return { socket: connection, closed };
      };
      await (await open("not json")).closed;
      await (await open(JSON.stringify({ spawn: "x", role: "nobody" }))).closed;
      // The control line comes last and its connection ends at once: the request is dropped, and the spawner closes
      // the stream that had come for it (at once; were the stream's line read only after the drop, by the 30 s limit
      // on a request that never completes).
      const stdout = await open(JSON.stringify({ spawn: "y", role: "stdout" }));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const request = { spawn: "y", role: "control", shell: "/bin/sh", command: "touch started", cwd: dir, env: {}, stdin: false };
      (await open(JSON.stringify(request))).socket.end();
      await stdout.closed;
      // Its last stream starts nothing.
      const stderr = await open(JSON.stringify({ spawn: "y", role: "stderr" }));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(existsSync(join(dir, "started"))).toBe(false);
      stderr.socket.destroy();
    });
  });

  it("reports exit codes, signals and both output streams as a process the actor forked", async () => {
    const rt = await spawnerRuntime(program);
    const plain = rt.start(shellJob("echo out; echo err >&2; exit 3", withOutput));
    const result = await plain.done;
    expect(result).toMatchObject({ cause: "exit", exitCode: 3, signal: null, cleanup: "confirmed" });
    expect((await output(plain)).split("\n").sort()).toEqual(["", "err", "out"]);
    expect(result.totals.bytes).toBe(8);

    const signalled = await rt.start(shellJob("kill -TERM $$")).done;
    expect(signalled).toMatchObject({ cause: "exit", exitCode: null, signal: "SIGTERM" });

    const many = rt.start(shellJob("seq 1 200000", withOutput));
    const counted = await many.done;
    expect(counted.totals).toEqual({ bytes: 1_288_895, lines: 200_000 });
  });

  it("carries stdin to the process and closes it on end_stdin", async () => {
    const rt = await spawnerRuntime(program);
    const job = rt.start(shellJob("cat; echo closed", { io: { kind: "pipes", stdin: true }, ...withOutput }));
    await waitFor(() => job.phase() === "running", 30_000, "the job to run");
    expect(await job.write(Buffer.from("hello\n"))).toMatchObject({ ok: true });
    expect(await job.endStdin()).toMatchObject({ ok: true });
    expect(await job.done).toMatchObject({ cause: "exit", exitCode: 0 });
    expect(await output(job)).toBe("hello\nclosed\n");
  });

  it("refuses a missing working directory and a missing shell by name", async () => {
    const rt = await spawnerRuntime(program);
    const noDir = await rt.start(shellJob("true", { cwd: join(tmpdir(), "pi-jobs-no-such-dir") })).done;
    expect(noDir).toMatchObject({ cause: "spawn_failed", message: expect.stringContaining("working directory does not exist") });
    const noShell = await rt.start(shellJob("true", { shell: "/no/such/shell" })).done;
    expect(noShell).toMatchObject({ cause: "spawn_failed", message: expect.stringContaining("shell not found") });
  });

  it.runIf(linux)("a spawner that dies costs no job: the running one still ends, later ones still start", async () => {
    const rt = await spawnerRuntime(program);
    const trigger = join(rt.logDir, "trigger");
    const running = rt.start(shellJob(`while [ ! -e ${trigger} ]; do sleep 0.05; done; echo done`, withOutput));
    const pid = await waitFor(() => running.pid(), 30_000, "the job's process");
    const spawner = parentOf(pid);
    process.kill(spawner, "SIGKILL");
    // Until this process has reaped it, and so heard of its exit: a zombie the runtime has not heard of would still
    // take the next job's spawn (which then fails over to the actor), and no new spawner would be started for it.
    await waitFor(() => !pidExists(spawner), 30_000, "the spawner to die and be reaped");
    writeFileSync(trigger, "");
    // Its exit status went with the spawner; its end and its output did not.
    const result = await running.done;
    expect(result).toMatchObject({ cause: "exit", exitCode: null, cleanup: "confirmed" });
    expect(await output(running)).toBe("done\n");

    const later = await rt.start(shellJob("exit 7")).done;
    expect(later).toMatchObject({ cause: "exit", exitCode: 7 });
    // A new spawner is started for the jobs after that.
    expect(await rt.spawnerReady()).toBe(true);
    const again = rt.start(shellJob("exec sleep 30"));
    const againPid = await waitFor(() => again.pid(), 30_000, "the next job's process");
    expect(parentOf(againPid)).not.toBe(process.pid);
    await again.stop();
  });

  it.runIf(linux)("without a spawner the actor forks the process itself; shutdown ends the spawner", async () => {
    runtime = runtimeFor({ spawner: false });
    const direct = runtime.start(shellJob("exec sleep 30"));
    const pid = await waitFor(() => direct.pid(), 30_000, "the job's process");
    expect(parentOf(pid)).toBe(process.pid);
    expect(direct.spec.spawner).toBeUndefined();
    await direct.stop();
    await runtime.shutdown();

    const rt = await spawnerRuntime(program);
    const job = rt.start(shellJob("exec sleep 30"));
    const spawner = parentOf(await waitFor(() => job.pid(), 30_000, "the job's process"));
    await rt.shutdown();
    runtime = null;
    await waitFor(() => !pidAlive(spawner), 10_000, "the spawner to end with the runtime");
  });

  it.runIf(existsSync("/bin/bash"))(
    "a bash job runs its command as typed at a shell, never the user's ~/.bashrc, through the spawner or not",
    async () => {
      // bash runs ~/.bashrc for a `-c` command whose stdin is a socket when it is the outermost shell (SHLVL unset or
      // 0); a pipe job's stdin is one. The job must not depend on how Pi itself was started.
      const home = mkdtempSync(join(tmpdir(), "pi-jobs-home-"));
      writeFileSync(join(home, ".bashrc"), "echo bashrc-ran\n");
      const bashJob = (shlvl: string | null) =>
        shellJob('echo "level $SHLVL"', {
          shell: "/bin/bash",
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, ...(shlvl === null ? {} : { SHLVL: shlvl }) },
          io: { kind: "pipes", stdin: true },
          ...withOutput,
        });
      try {
        for (const viaSpawner of [true, false]) {
          const rt = viaSpawner ? await spawnerRuntime(program) : (runtime = runtimeFor({ spawner: false }));
          for (const [shlvl, level] of [[null, "2"], ["0", "2"], ["3", "4"]] as const) {
            const job = rt.start(bashJob(shlvl));
            expect(await job.done, `SHLVL ${shlvl}`).toMatchObject({ cause: "exit", exitCode: 0 });
            expect(await output(job), `SHLVL ${shlvl}, ${viaSpawner ? "spawner" : "actor"}`).toBe(`level ${level}\n`);
          }
          await rt.shutdown();
          runtime = null;
        }
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
  );
});

describe("the spawner's programs", () => {
  for (const [what, perl] of [
    ["missing", "/no/such/perl"],
    ["that ends before it listens", "/bin/false"],
  ] as const) {
    it.runIf(linux)(`a perl ${what} gives way to the Node spawner at once`, async () => {
      await withSpawner({ perl }, async (spawner, dir) => {
        const socket = join(dir, "spawner.sock");
        expect(spawner.socketPath()).toBe(socket);
        expect(commandLineOf(spawnerListeningOn(socket))).toMatch(PROGRAM_FILE.node);
      });
    });
  }
});
