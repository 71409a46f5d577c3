/**
 * Actor threads run ten nice steps below the host on Linux, and so do the processes their jobs start: under
 * contention Pi's thread gets a core first. The host's own thread keeps its priority, and a thread the pool reuses
 * is lowered once, not once per job.
 */
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime.ts";
import type { StartRequest } from "../../host/runtime-api.ts";
import { NEVER_MATCHES } from "../../bench/shared.ts";
import { runtimeFor, shellJob, waitFor } from "./helpers.ts";

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
/** What a job's process should run at: ten steps nicer than the host on Linux (19 at most), unchanged elsewhere. */
const expectedJobNice = linux ? Math.min(19, hostNice + 10) : hostNice;

async function niceOfJob(request: StartRequest): Promise<number> {
  const job = runtime!.start(request);
  const pid = await waitFor(() => job.pid(), 10_000, "the job's process");
  const nice = niceOf(pid);
  const result = await job.stop();
  expect(result.cleanup).toBe("confirmed");
  return nice;
}

describe("actor priority", () => {
  it("a job's process runs ten nice steps below the host, with pipes, a PTY or as a monitor", async () => {
    runtime = runtimeFor();
    expect(await niceOfJob(shellJob("exec sleep 30"))).toBe(expectedJobNice);
    expect(await niceOfJob(shellJob("exec sleep 30", { io: { kind: "pty", cols: 80, rows: 24 } }))).toBe(expectedJobNice);
    expect(await niceOfJob(shellJob("exec sleep 30", { kind: "monitor", contract: NEVER_MATCHES }))).toBe(expectedJobNice);
    if (linux) expect(expectedJobNice).toBeGreaterThanOrEqual(10);
  });

  it("a thread the pool reuses is lowered once, not once per job", async () => {
    // One warm thread and jobs one after another: they run on the same thread, which must not sink further.
    runtime = runtimeFor({ warm: 1 });
    for (let round = 0; round < 4; round += 1) {
      expect(await niceOfJob(shellJob("exec sleep 30"))).toBe(expectedJobNice);
    }
  });

  it("the host's own thread keeps its priority", async () => {
    runtime = runtimeFor();
    const job = runtime.start(shellJob("exec sleep 30"));
    await waitFor(() => job.pid(), 10_000, "the job's process");
    expect(getPriority(0)).toBe(hostNice);
    if (linux) {
      // The main thread's task id is the process id; the actor's thread is another task of this process.
      expect(niceFromStat(`/proc/${process.pid}/task/${process.pid}/stat`)).toBe(hostNice);
      const threads = readdirSync(`/proc/${process.pid}/task`).map((tid) => niceFromStat(`/proc/${process.pid}/task/${tid}/stat`));
      expect(threads).toContain(expectedJobNice);
    }
    await job.stop();
    expect(getPriority(0)).toBe(hostNice);
  });
});
