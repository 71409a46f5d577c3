/**
 * The job tag with real processes: every process a job starts carries PI_JOBS_JOB=<runtime>/<job>, a descendant
 * that left the job's process group is found by its environment (/proc/<pid>/environ), and a stop reaches it and
 * only then says `confirmed`.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { scanTag, taggedProcesses, taggedProcessesNow } from "../../shared/process-table/proc-tags.ts";
import { TAG_VARIABLE } from "../../shared/process-table/index.ts";
import { groupMembers, stopGroup } from "../../shared/process-group.ts";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { groupGone, killedAfterEach, pidAlive, runtimeFor, shellJob, waitFor } from "./helpers.ts";

const linux = process.platform === "linux";
const leftovers = killedAfterEach();
let runtime: SupervisedRuntime | null = null;

afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
});

const freshTag = () => `${randomBytes(6).toString("hex")}/job_1`;

/** A shell in its own group that starts `setsid sleep 100` (a new session: out of the group's reach) and waits. */
function startEscaping(tag: string, pidFile: string) {
  const child = spawn("sh", ["-c", `setsid sleep 100 & echo $! > ${pidFile}; sleep 100`], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, [TAG_VARIABLE]: tag },
  });
  leftovers.push(child.pid!);
  return child.pid!;
}

async function escapeePid(pidFile: string, pgid: number): Promise<number> {
  const pid = await waitFor(() => {
    try {
      return Number.parseInt(readFileSync(pidFile, "utf8"), 10) || null;
    } catch {
      return null;
    }
  }, 10_000, "the escapee's pid");
  leftovers.push(pid);
  // setsid() happens in the child after fork: wait until it really left the group.
  await waitFor(async () => !(await groupMembers(pgid)).includes(pid) && pidAlive(pid), 10_000, "the escapee to leave the group");
  return pid;
}

describe.runIf(linux)("taggedProcesses (Linux /proc/<pid>/environ)", () => {
  it("finds every process carrying the tag, inside the group or not, and nothing with a longer tag", async () => {
    const tag = freshTag();
    const pidFile = join(mkdtempSync(join(tmpdir(), "pi-jobs-tag-")), "pid");
    const pgid = startEscaping(tag, pidFile);
    const escapee = await escapeePid(pidFile, pgid);
    const other = spawn("sleep", ["100"], { stdio: "ignore", env: { ...process.env, [TAG_VARIABLE]: `${tag}0` } });
    leftovers.push(other.pid!);

    const found = await waitFor(async () => {
      const pids = await taggedProcesses(tag);
      return pids && pids.includes(pgid) && pids.includes(escapee) ? pids : null;
    }, 10_000, "the tagged processes");
    expect(found).not.toContain(other.pid);
    expect(found).not.toContain(process.pid);
    // Restricted to the pids allocated since the leader's spawn: the same answer.
    expect(await taggedProcesses(tag, { firstPid: pgid, spawnedAt: Date.now() })).toEqual(expect.arrayContaining([pgid, escapee]));
    expect(await taggedProcesses(freshTag())).toEqual([]);
    // The synchronous form (an actor's watch) finds the same.
    expect(taggedProcessesNow(tag)).toEqual(expect.arrayContaining([pgid, escapee]));
  });

  it("tells apart a new process whose environment reads empty (as in the middle of an exec) from a tagged one", async () => {
    const tag = freshTag();
    const since = Date.now();
    const tagged = spawn("sleep", ["100"], { stdio: "ignore", env: { [TAG_VARIABLE]: tag } });
    const bare = spawn("sleep", ["100"], { stdio: "ignore", env: {} });
    leftovers.push(tagged.pid!, bare.pid!);
    const scan = await waitFor(async () => {
      const found = await scanTag(tag, { firstPid: tagged.pid!, spawnedAt: since });
      return found && found.tagged.includes(tagged.pid!) && found.unsettled.includes(bare.pid!) ? found : null;
    }, 10_000, "the tagged and the bare process");
    expect(scan.unsettled).not.toContain(tagged.pid);
    expect(scan.unsettled).not.toContain(process.pid);
    // Without a window there is no telling new from old: nothing is unsettled.
    expect((await scanTag(tag))?.unsettled).toEqual([]);
  });

  it("stopGroup with the tag kills what left the group, and confirms only once it is gone", async () => {
    const tag = freshTag();
    const pidFile = join(mkdtempSync(join(tmpdir(), "pi-jobs-tag-")), "pid");
    const pgid = startEscaping(tag, pidFile);
    const escapee = await escapeePid(pidFile, pgid);

    const outcome = await stopGroup(pgid, { graceMs: 2000, tag });
    expect(outcome.confirmed).toBe(true);
    expect(await groupGone(pgid)).toBe(true);
    expect(pidAlive(escapee)).toBe(false);
    expect(await taggedProcesses(tag)).toEqual([]);
  });

  it("a process that leaves the group while the stop is under way gets the stop's own signal before SIGKILL", async () => {
    const tag = freshTag();
    const dir = mkdtempSync(join(tmpdir(), "pi-jobs-tag-"));
    const firstFile = join(dir, "first");
    const laterFile = join(dir, "later");
    const termFile = join(dir, "term");
    // The first escapee ignores SIGTERM, so the stop waits out its grace; 1.5 s in, that escapee starts a second one
    // (in a session of its own) that writes down the SIGTERM it gets, then exits. The child inherits the ignored
    // SIGTERM until its handler is in place, so no stop's signal can come before it is ready to tell.
    const script = join(dir, "first.pl");
    writeFileSync(
      script,
      // It writes its own pid once it ignores SIGTERM: a stop that came while perl still loaded would end it at once.
      `use POSIX; $SIG{TERM} = "IGNORE"; open(my $me, ">", ${JSON.stringify(firstFile)}); print $me $$; close($me);\n` +
        `select(undef, undef, undef, 1.5); my $pid = fork();\n` +
        `if ($pid == 0) { $SIG{TERM} = sub { open(my $t, ">", ${JSON.stringify(termFile)}); print $t "term"; close($t); exit 0; };\n` +
        `  POSIX::setsid(); while (1) { select(undef, undef, undef, 0.1); } }\n` +
        `open(my $f, ">", ${JSON.stringify(laterFile)}); print $f $pid; close($f); sleep 100;\n`,
    );
    const child = spawn("sh", ["-c", `setsid perl ${script} & sleep 100`], {
      detached: true,
      stdio: "ignore",
      env: { ...process.env, [TAG_VARIABLE]: tag },
    });
    leftovers.push(child.pid!);
    const pgid = child.pid!;
    const escapee = await escapeePid(firstFile, pgid);

    const outcome = await stopGroup(pgid, { graceMs: 6000, tag });
    const laterPid = Number.parseInt(readFileSync(laterFile, "utf8"), 10);
    leftovers.push(laterPid);
    expect(outcome).toEqual({ confirmed: true, escalated: true });
    expect(pidAlive(escapee)).toBe(false);
    expect(pidAlive(laterPid)).toBe(false);
    // Found by a look within the grace, not only by the last one after SIGKILL: it had the stop's own signal.
    expect(readFileSync(termFile, "utf8").trim()).toBe("term");
    expect(await taggedProcesses(tag)).toEqual([]);
  }, 30_000);

  it("confirms a stop only once a killed escapee has finished exiting, not once its memory is going", async () => {
    // While the kernel frees an exiting process's memory its environment reads as nothing, yet the process runs on,
    // holding its descriptors, until it is a zombie: tens of milliseconds for a heap this large, which the checks
    // after SIGKILL (5 ms doubling to 50 ms) fall into.
    for (let round = 0; round < 3; round += 1) {
      const tag = freshTag();
      const dir = mkdtempSync(join(tmpdir(), "pi-jobs-tag-"));
      const pidFile = join(dir, "pid");
      const script = join(dir, "heavy.pl");
      writeFileSync(
        script,
        `$SIG{TERM} = "IGNORE"; my $heap = "x" x ($ARGV[0] * 1024 * 1024);\n` +
          `open(my $f, ">", ${JSON.stringify(pidFile)}); print $f $$; close($f); sleep 100;\n`,
      );
      const child = spawn("sh", ["-c", `setsid perl ${script} 384 & sleep 100`], {
        detached: true,
        stdio: "ignore",
        env: { ...process.env, [TAG_VARIABLE]: tag },
      });
      leftovers.push(child.pid!);
      const escapee = await escapeePid(pidFile, child.pid!);

      const outcome = await stopGroup(child.pid!, { graceMs: 200, tag });
      const running = pidAlive(escapee);
      expect(outcome).toEqual({ confirmed: true, escalated: true });
      expect(running).toBe(false);
    }
  }, 60_000);

  it("64 scans of every process at once share passes over /proc and never hold the thread for long", async () => {
    const tag = freshTag();
    const pidFile = join(mkdtempSync(join(tmpdir(), "pi-jobs-tag-")), "pid");
    const pgid = startEscaping(tag, pidFile);
    const escapee = await escapeePid(pidFile, pgid);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    // As 64 takeovers fired by one timer phase look: each scans every process, three times over.
    const scans = await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let round = 0; round < 2; round += 1) await scanTag(tag);
        return scanTag(tag);
      }),
    );
    delay.disable();
    for (const found of scans) expect(found?.tagged).toEqual(expect.arrayContaining([pgid, escapee]));
    // A slice is 2 ms; a busy machine preempts this thread too, so the bound is generous. Unsliced, 192 scans of all
    // processes took seconds here.
    expect(delay.max / 1e6).toBeLessThan(200);
  });
});

describe.runIf(linux)("a job whose descendant leaves its process group", () => {
  for (const io of [{ kind: "pipes", stdin: false }, { kind: "pty", cols: 80, rows: 24 }] as const) {
    it(`stop kills the escapee before it says confirmed (${io.kind})`, async () => {
      runtime = runtimeFor();
      const pidFile = join(mkdtempSync(join(tmpdir(), "pi-jobs-tag-")), "pid");
      const job = runtime.start(shellJob(`setsid sleep 100 < /dev/null > /dev/null 2>&1 & echo $! > ${pidFile}; sleep 100`, { io }));
      await waitFor(() => job.phase() === "running", 30_000, "the job to run");
      const escapee = await escapeePid(pidFile, job.pgid()!);

      const result = await job.stop();
      expect(result.cause).toBe("stopped");
      expect(result.cleanup).toBe("confirmed");
      expect(pidAlive(escapee)).toBe(false);
      expect(await groupGone(job.pgid()!)).toBe(true);
    }, 60_000);
  }

  it("an escapee that holds the job's pipes is reclaimed when the shell exits on its own", async () => {
    runtime = runtimeFor();
    const pidFile = join(mkdtempSync(join(tmpdir(), "pi-jobs-tag-")), "pid");
    const job = runtime.start(shellJob(`setsid sleep 100 & echo $! > ${pidFile}; echo started`));
    const result = await job.done;
    const escapee = Number.parseInt(readFileSync(pidFile, "utf8"), 10);
    leftovers.push(escapee);
    expect(result.cause).toBe("exit");
    expect(result.cleanup).toBe("confirmed");
    expect(pidAlive(escapee)).toBe(false);
  }, 60_000);
});
