/**
 * Actor threads and the processes their jobs start run at the host's priority. Lowering them (once done, ten nice
 * steps) starved the actors whenever other work filled the cores: a control call such as `end_stdin` went unanswered
 * for seconds (docs/decisions.md). No thread of this process, and no job, may end up nicer than the host.
 */
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime.ts";
import type { StartRequest } from "../../host/runtime-api.ts";
import { NEVER_MATCHES } from "../fixtures/jobs.ts";
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
/** What a job's process runs at: the host's own priority, on every platform. */
const expectedJobNice = hostNice;

async function niceOfJob(request: StartRequest): Promise<number> {
  const job = runtime!.start(request);
  const pid = await waitFor(() => job.pid(), 30_000, "the job's process");
  const nice = niceOf(pid);
  const result = await job.stop();
  expect(result.cleanup).toBe("confirmed");
  return nice;
}

describe("actor priority", () => {
  it("a job's process runs at the host's priority, with pipes, a PTY or as a monitor", async () => {
    runtime = runtimeFor();
    expect(await niceOfJob(shellJob("exec sleep 30"))).toBe(expectedJobNice);
    expect(await niceOfJob(shellJob("exec sleep 30", { io: { kind: "pty", cols: 80, rows: 24 } }))).toBe(expectedJobNice);
    expect(await niceOfJob(shellJob("exec sleep 30", { kind: "monitor", contract: NEVER_MATCHES }))).toBe(expectedJobNice);
  });

  it("a thread the pool reuses keeps the host's priority, job after job", async () => {
    // One warm thread and jobs one after another: they run on the same thread, which must never sink.
    runtime = runtimeFor({ warm: 1 });
    for (let round = 0; round < 4; round += 1) {
      expect(await niceOfJob(shellJob("exec sleep 30"))).toBe(expectedJobNice);
    }
  });

  it("the host's own thread keeps its priority", async () => {
    runtime = runtimeFor();
    const job = runtime.start(shellJob("exec sleep 30"));
    await waitFor(() => job.pid(), 30_000, "the job's process");
    expect(getPriority(0)).toBe(hostNice);
    if (linux) {
      // The main thread's task id is the process id; the actor's thread is another task of this process.
      expect(niceFromStat(`/proc/${process.pid}/task/${process.pid}/stat`)).toBe(hostNice);
      const threads = readdirSync(`/proc/${process.pid}/task`).map((tid) => niceFromStat(`/proc/${process.pid}/task/${tid}/stat`));
      expect(threads.every((nice) => nice === hostNice)).toBe(true);
    }
    await job.stop();
    expect(getPriority(0)).toBe(hostNice);
  });
});
