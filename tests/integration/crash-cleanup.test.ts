/**
 * Nothing outlives Pi, with real processes: the exit net kills a job's group and its escaped descendant when the
 * process calls `process.exit()`; the runtime keeps a registry of its live jobs; a later cleanup ends what a dead
 * owner left (SIGTERM, SIGKILL after the grace), leaves a live owner's jobs alone, and signals nothing of an
 * unrelated process that reuses a recorded pid.
 */
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { processTable, TAG_VARIABLE } from "../../shared/process-table/index.ts";
import { cleanUpAfterCrashes, readStartTicks } from "../../host/safety/crash-cleanup.ts";
import { formatRegistry, parseRegistry, REGISTRY_FILE, type Registry, type RegistryOwner } from "../../host/safety/crash-registry.ts";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { killedAfterEach, pidAlive, runtimeFor, shellJob, waitFor } from "./helpers.ts";

const linux = process.platform === "linux";
const leftovers = killedAfterEach();
const dirs: string[] = [];
let runtime: SupervisedRuntime | null = null;

afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const hex = () => randomBytes(6).toString("hex");

function privateRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "crash-root-"));
  dirs.push(root);
  return root;
}

/** A detached shell that ignores SIGTERM (so the cleanup must escalate) and leaves a `setsid` descendant. */
function tagged(tag: string): number {
  const child = spawn("sh", ["-c", `trap '' TERM; setsid sleep 300 & sleep 300`], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, [TAG_VARIABLE]: tag },
  });
  leftovers.push(child.pid!);
  return child.pid!;
}

function untagged(): number {
  const child = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
  leftovers.push(child.pid!);
  return child.pid!;
}

function writeRegistry(root: string, registry: Registry): string {
  const dir = join(root, `pi-jobs-${hex()}`);
  mkdirSync(dir, { mode: 0o700 });
  const path = join(dir, REGISTRY_FILE);
  writeFileSync(path, formatRegistry(registry), { mode: 0o600 });
  return path;
}

async function deadPid(): Promise<RegistryOwner> {
  const child = spawn("sleep", ["300"], { stdio: "ignore" });
  const pid = child.pid!;
  const startTicks = await waitFor(() => readStartTicks(pid), 5000, "the owner's start time");
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
  return { pid, startTicks, table: processTable().kind };
}

async function allTagged(runtimeId: string, count: number): Promise<number[]> {
  const found = await waitFor(async () => {
    const list = (await processTable().processesOfRuntimes([runtimeId])) ?? [];
    return list.length >= count ? list : null;
  }, 10_000, `${count} tagged processes`);
  const pids = found.map((process) => process.pid);
  leftovers.push(...pids);
  return pids;
}

describe.runIf(linux)("the exit net", () => {
  it("process.exit() leaves no process of a live job running, not even one that left the group", async () => {
    const child = fileURLToPath(new URL("../fixtures/exit-net-child.ts", import.meta.url));
    const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
      execFile(process.execPath, [child, "0"], { timeout: 60_000 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${out}\n${err}`)) : resolve({ stdout: out }),
      ),
    );
    const runtimeId = stdout.trim();
    expect(runtimeId).toMatch(/^[0-9a-f]{12}$/);
    // The child printed its id only once three tagged processes ran; once it exited, none may be left.
    let left: number[] = [];
    try {
      await waitFor(async () => {
        // A scan that could not be made (null) proves nothing.
        const found = await processTable().processesOfRuntimes([runtimeId]);
        left = (found ?? []).map((process) => process.pid);
        return found !== null && left.length === 0;
      }, 10_000, "no tagged process left");
    } catch (error) {
      leftovers.push(...left);
      // What survived, and in which state, says which way it escaped the exit net.
      const stateOf = (pid: number) => {
        try {
          return `${readFileSync(`/proc/${pid}/stat`, "utf8").trim()} [${readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")}]`;
        } catch {
          return `${pid} (gone)`;
        }
      };
      throw new Error(`${(error as Error).message}; left: ${left.map(stateOf).join("; ")}\n${stdout}`);
    }
  });
});

describe.runIf(linux)("the registry of live jobs", () => {
  it("names each running job, leaves an ended one at the next spawn's write, and is removed at shutdown", async () => {
    runtime = runtimeFor();
    const registered = (tags: string[]) =>
      waitFor(() => {
        const path = join(runtime!.logDir, REGISTRY_FILE);
        if (!existsSync(path)) return null;
        const result = parseRegistry(readFileSync(path, "utf8"));
        return "registry" in result && result.registry.jobs.map((job) => job.tag).join() === tags.join() ? result.registry : null;
      }, 5000, `the registry to name ${tags.length} job(s)`);
    const first = runtime.start(shellJob("sleep 30", { label: "a sleeping job" }));
    await waitFor(() => first.phase() === "running", 30_000, "the job to run");
    const parsed = await registered([first.spec.tag]);
    expect(parsed.owner).toEqual({ pid: process.pid, startTicks: readStartTicks(process.pid), table: processTable().kind });
    expect(parsed.jobs[0]).toMatchObject({ tag: first.spec.tag, pid: first.pid(), pgid: first.pgid(), label: "a sleeping job" });
    expect(parsed.jobs[0]!.leaderStartTicks).toBe(readStartTicks(first.pid()!));
    await first.stop();
    // An end is not written on its own (an ended job's entry is never acted on): the file still names the first job.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(parseRegistry(readFileSync(join(runtime.logDir, REGISTRY_FILE), "utf8"))).toMatchObject({ registry: { jobs: [{ tag: first.spec.tag }] } });
    // The next spawn's write names only the live job: the ended one leaves the file then.
    const second = runtime.start(shellJob("sleep 30", { label: "another" }));
    await waitFor(() => second.phase() === "running", 30_000, "the second job to run");
    await registered([second.spec.tag]);
    await second.stop();
    const path = join(runtime.logDir, REGISTRY_FILE);
    await runtime.shutdown();
    runtime = null;
    expect(existsSync(path)).toBe(false);
  });
});

describe.runIf(linux)("cleanup after a crash", () => {
  it("stops a dead owner's processes with escalation, reports them in one line and removes the registry", async () => {
    const root = privateRoot();
    const owner = await deadPid();
    const runtimeId = hex();
    const leader = tagged(`${runtimeId}/job_1`);
    const pids = await allTagged(runtimeId, 3);
    const path = writeRegistry(root, {
      owner,
      runtimeId,
      jobs: [{ tag: `${runtimeId}/job_1`, pid: leader, pgid: leader, leaderStartTicks: readStartTicks(leader), startedAt: Date.now(), label: "npm run dev" }],
    });
    const report = await cleanUpAfterCrashes({ root, graceMs: 300 });
    expect(report.stopped).toBe(3);
    expect(report.unconfirmed).toBe(0);
    expect(report.notice).toBe("pi-jobs: stopped 3 processes left by a Pi session that ended without shutdown: npm run dev");
    for (const pid of pids) expect(pidAlive(pid)).toBe(false);
    expect(existsSync(path)).toBe(false);
  });

  it("never touches a live owner's registry or processes", async () => {
    const root = privateRoot();
    const runtimeId = hex();
    const leader = tagged(`${runtimeId}/job_1`);
    const pids = await allTagged(runtimeId, 3);
    const path = writeRegistry(root, {
      owner: { pid: process.pid, startTicks: readStartTicks(process.pid)!, table: processTable().kind },
      runtimeId,
      jobs: [{ tag: `${runtimeId}/job_1`, pid: leader, pgid: leader, leaderStartTicks: readStartTicks(leader), startedAt: Date.now(), label: "x" }],
    });
    const report = await cleanUpAfterCrashes({ root, graceMs: 300 });
    expect(report).toEqual({ stopped: 0, labels: [], unconfirmed: 0, notice: null });
    for (const pid of pids) expect(pidAlive(pid)).toBe(true);
    expect(existsSync(path)).toBe(true);
  });

  it("signals nothing of an unrelated process that now holds the owner's or a job's pid", async () => {
    const root = privateRoot();
    const reused = untagged();
    const reusedTicks = await waitFor(() => readStartTicks(reused), 5000, "the unrelated process's start time");
    const runtimeId = hex();
    const path = writeRegistry(root, {
      // The owner's pid and the job's leader pid both belong to a process that started at another time.
      owner: { pid: reused, startTicks: reusedTicks + 1, table: processTable().kind },
      runtimeId,
      jobs: [{ tag: `${runtimeId}/job_1`, pid: reused, pgid: reused, leaderStartTicks: reusedTicks + 1, startedAt: Date.now(), label: "gone" }],
    });
    const report = await cleanUpAfterCrashes({ root, graceMs: 300 });
    expect(report.stopped).toBe(0);
    expect(report.notice).toBeNull();
    expect(pidAlive(reused)).toBe(true);
    // Its owner is gone and nothing of its runtime runs: the registry is done with.
    expect(existsSync(path)).toBe(false);
  });
});
