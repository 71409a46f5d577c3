/**
 * The keeper of a persisted job (spawner/keeper.pl through host/persist/keeper.ts), with real processes: the job's
 * processes carry the job's own tag and the keeper does not; what leaves the job's group is ended with the job's shell
 * by the keeper, and stopped by stopKept (kill_session's stop), confirmed only once nothing carrying the tag runs.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startKept, stopKept, type KeptJob } from "../../host/persist/keeper.ts";
import { pidAlive } from "./helpers.ts";
import { pollUntil } from "../e2e/harness/wait.ts";

const dirs: string[] = [];
const kept: KeptJob[] = [];
afterEach(async () => {
  for (const job of kept.splice(0)) await stopKept(job, "SIGKILL", { graceMs: 0, confirmMs: 5_000 });
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

const environOf = (pid: number): string[] => readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");

function taggedNow(tag: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return environOf(pid).includes(`PI_JOBS_JOB=${tag}`);
      } catch {
        return false;
      }
    });
}

/** A job whose child leaves its group (setsid) and writes its pid into `escapee.pid`, then `rest`. */
async function keep(rest: string): Promise<{ job: KeptJob; escapee: number; project: string }> {
  const project = temp("keeper-project-");
  const job = await startKept({
    project,
    cwd: project,
    cmd: `setsid sh -c 'echo $$ > escapee.pid.tmp; mv escapee.pid.tmp escapee.pid; exec sleep 300' & ${rest}`,
    shell: "/bin/sh",
    lifetimeMs: 60_000,
    graceMs: 500,
    onExit: "none",
    root: temp("keeper-registry-"),
  });
  kept.push(job);
  const pidFile = join(project, "escapee.pid");
  const escapee = await pollUntil(() => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8").trim()), { what: "the escapee's pid" });
  return { job, escapee, project };
}

describe.runIf(process.platform === "linux")("a persisted job's own tag", () => {
  it("is carried by the job and what leaves its group, not by the keeper; stopKept stops them all, confirmed", async () => {
    const { job, escapee } = await keep("exec sleep 300");
    const { tag, keeperPid, pgid } = job.entry;
    expect(tag).toMatch(/^p[0-9a-f]{12}\/job-/);
    expect(environOf(pgid)).toContain(`PI_JOBS_JOB=${tag}`);
    expect(environOf(keeperPid).some((entry) => entry.startsWith("PI_JOBS_JOB="))).toBe(false);
    expect(taggedNow(tag!).sort((a, b) => a - b)).toEqual([pgid, escapee].sort((a, b) => a - b));
    expect(await stopKept(job, "SIGTERM", { graceMs: 500, confirmMs: 10_000 })).toBe(true);
    expect([pidAlive(pgid), pidAlive(escapee), pidAlive(keeperPid)]).toEqual([false, false, false]);
    expect(readFileSync(join(job.dir, "end"), "utf8")).toMatch(/cause (stopped|exited)/);
  });

  it("what left the group ends when the job's shell does: the keeper reaps it by the tag", async () => {
    const { job, escapee } = await keep("sleep 0.5; exit 7");
    await pollUntil(() => existsSync(join(job.dir, "end")), { what: "the job's end" });
    expect(readFileSync(join(job.dir, "end"), "utf8")).toMatch(/^exit 7 signal - /);
    await pollUntil(() => !pidAlive(escapee), { what: "the escapee's end", timeoutMs: 5_000 });
    expect(taggedNow(job.entry.tag!)).toEqual([]);
  });
});
