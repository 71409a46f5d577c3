/**
 * wait_jobs with real processes: monitors and shell jobs mixed, each result collected exactly once under every
 * `until`, no wake for what it collected (and the wakes of what it did not), a later write_stdin that replays instead
 * of reading anew, cancellation, the timeout, and errors that name the field.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import type { WaitJobLine } from "../../host/wait/result.ts";
import { runtimeFor, waitFor } from "./helpers.ts";
import { direct, waitingJobs, type WaitingJobs } from "./waiting-jobs.ts";

let runtime: SupervisedRuntime;
let jobs: WaitingJobs;

beforeEach(() => {
  runtime = runtimeFor();
  jobs = waitingJobs(runtime);
});

afterEach(async () => {
  await jobs.close();
  await runtime.shutdown();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const byId = (lines: readonly WaitJobLine[]) => new Map(lines.map((l) => [l.id, l]));
const wokenShells = () => jobs.shellWakes.flat().map((c) => c.sessionId);
const wokenMonitors = () => jobs.monitorWakes.map((d) => d.details.monitorId);

/** Eight jobs ending at different times, one of each kind failing. */
async function startEight(): Promise<{ shells: number[]; monitors: string[] }> {
  const shells = await Promise.all([
    jobs.exec("sleep 1.5; echo one; echo shell-1-done"),
    jobs.exec("sleep 2.4; echo two; echo shell-2-done"),
    jobs.exec("sleep 1.8; echo lint error >&2; exit 3"),
    jobs.exec("sleep 3; echo four; echo shell-4-done", "none"),
  ]);
  const monitors = [
    jobs.monitor("sleep 1.6; echo DONE"),
    jobs.monitor("sleep 2.6; echo DONE"),
    jobs.monitor("sleep 2; echo broken; exit 2"),
    jobs.monitor("sleep 2.8; echo '{\"n\":3}'; echo DONE"),
  ];
  return { shells, monitors };
}

describe("wait_jobs", () => {
  it("all: returns once every job ended, each result exactly once, and no wake follows for any of them", async () => {
    const { shells, monitors } = await startEight();
    // On a very busy machine a job may end, and wake, before the call: it is then said to have woken, once.
    const wokenBefore = new Set([...wokenShells().map((id) => `job_${id}`), ...wokenMonitors()]);
    const r = await jobs.wait.wait({ ids: [...shells.map(String), ...monitors] }, direct("wait"));
    expect(r.wait_status).toBe("all_ended");
    expect(r.jobs).toHaveLength(8);
    for (const line of r.jobs) expect(line.collected).toBe(wokenBefore.has(line.id) ? "wake" : "now");
    expect(r.running).toEqual([]);
    const lines = byId(r.jobs);
    expect(lines.get(`job_${shells[0]}`)).toMatchObject({ verdict: "success", status: "exited", exit_code: 0 });
    expect(lines.get(`job_${shells[0]}`)?.output).toContain("shell-1-done");
    expect(lines.get(`job_${shells[2]}`)).toMatchObject({ verdict: "failure", exit_code: 3 });
    expect(lines.get(`job_${shells[2]}`)?.output).toContain("lint error");
    expect(lines.get(monitors[0]!)).toMatchObject({ verdict: "success", status: "success" });
    expect(lines.get(monitors[2]!)).toMatchObject({ verdict: "failure", exit_code: 2 });
    expect(r.summary).toMatch(/^8 jobs: 6 success, 2 failure \(/);
    expect(r.summary).toContain(`job_${shells[2]} exit 3`);

    // Longer than the wake batching (300 ms quiet, 1 s at most) on a busy machine: nothing is sent for them.
    await pause(3000);
    jobs.shell.wakes.boundary();
    expect(wokenShells().length + wokenMonitors().length).toBe(wokenBefore.size);

    // Asked again, every job says it was collected, without its output.
    const again = await jobs.wait.wait({ ids: [...shells.map(String), ...monitors] }, direct("again"));
    expect(again.wait_status).toBe("nothing_to_wait_for");
    expect(again.jobs.every((l) => (l.collected === "earlier" || l.collected === "wake") && l.output === undefined)).toBe(true);
    // Omitted ids mean the jobs not yet collected: none.
    expect((await jobs.wait.wait({}, direct("rest"))).jobs).toEqual([]);

    // A later write_stdin replays the saved read (output_replayed), it does not read anew; the next one finds it gone.
    const replay = await jobs.shell.service.writeStdin({ session_id: shells[0], yield_time_ms: 0 }, direct("read"));
    expect(replay.output_replayed).toBe(true);
    expect(replay.output).toContain("shell-1-done");
    await expect(jobs.shell.service.writeStdin({ session_id: shells[0], yield_time_ms: 0 }, direct("read2"))).rejects.toThrow(/no longer registered/);
    expect((await jobs.wait.wait({ ids: [String(shells[0])] }, direct("gone"))).jobs[0]).toMatchObject({ collected: "earlier", verdict: "unknown" });
  });

  it("any: returns the first job to end; the others keep running and later wake as they asked", async () => {
    // The fast job ends only once the wait has claimed it: ended earlier, its own wake could report it first.
    const gate = join(mkdtempSync(join(tmpdir(), "pi-jobs-wait-")), "go");
    const fast = await jobs.exec(`while [ ! -e '${gate}' ]; do sleep 0.02; done; echo quick`, "wake");
    const slowShell = await jobs.exec("sleep 2; echo slow", "wake");
    const slowMonitor = jobs.monitor("sleep 2; echo DONE");
    const waiting = jobs.wait.wait({ ids: [String(fast), String(slowShell), slowMonitor], until: "any" }, direct());
    writeFileSync(gate, "");
    const r = await waiting;
    expect(r.wait_status).toBe("one_ended");
    const lines = byId(r.jobs);
    expect(lines.get(`job_${fast}`)).toMatchObject({ collected: "now", verdict: "success" });
    expect(lines.get(`job_${slowShell}`)).toMatchObject({ collected: "not_yet", verdict: "running" });
    expect(lines.get(slowMonitor)).toMatchObject({ collected: "not_yet", verdict: "running" });
    expect(r.running.sort()).toEqual([`job_${slowShell}`, slowMonitor].sort());
    // Released to their own wakes: each arrives once, the collected job's never.
    await waitFor(() => wokenShells().includes(slowShell) && wokenMonitors().includes(slowMonitor), 30_000, "the wakes of the jobs left running");
    expect(wokenShells()).toEqual([slowShell]);
    expect(wokenMonitors()).toEqual([slowMonitor]);
  });

  it("first_failure: returns at the failing job while the others keep running", async () => {
    const failing = await jobs.exec("sleep 0.2; echo boom >&2; exit 1", "none");
    const long = await jobs.exec("sleep 6; echo long", "none");
    const monitor = jobs.monitor("sleep 6; echo DONE");
    const r = await jobs.wait.wait({ until: "first_failure" }, direct());
    expect(r.wait_status).toBe("failed");
    const lines = byId(r.jobs);
    expect(lines.get(`job_${failing}`)).toMatchObject({ verdict: "failure", exit_code: 1, collected: "now" });
    expect(lines.get(`job_${failing}`)?.output).toContain("boom");
    expect(lines.get(`job_${long}`)?.verdict).toBe("running");
    expect(lines.get(monitor)?.verdict).toBe("running");
    expect(jobs.shell.service.session(long)?.handle.phase()).not.toBe("ended");
    expect(r.summary).toContain(`job_${failing} exit 1`);
    expect(r.summary).toContain("2 running");
  });

  it("a wake queued before the call is withdrawn; one already delivered is said, not repeated", async () => {
    const delivered = jobs.monitor("echo DONE");
    const ledger = jobs.shell.service.state.ledger;
    await waitFor(() => ledger.stateOf(delivered) === "submitted", 30_000, "the monitor's wake to be delivered");
    jobs.refuse.monitors = true;
    const queued = jobs.monitor("echo DONE");
    await waitFor(() => jobs.shell.wakes.failures.length > 0 && ledger.stateOf(queued) === "pending", 30_000, "the monitor's wake to be refused, and kept");

    const r = await jobs.wait.wait({ ids: [queued, delivered] }, direct());
    const lines = byId(r.jobs);
    expect(lines.get(queued)).toMatchObject({ collected: "now", verdict: "success" });
    expect(lines.get(delivered)).toMatchObject({ collected: "wake" });
    jobs.refuse.monitors = false;
    jobs.shell.wakes.boundary();
    expect(wokenMonitors()).toEqual([delivered]);
    expect(ledger.owedNames()).toEqual([]);
  });

  it("a cancelled call collects nothing and returns at once; the jobs go on and wake as before", async () => {
    const shell = await jobs.exec("sleep 1; echo done", "wake");
    const monitor = jobs.monitor("sleep 1; echo DONE");
    const abort = new AbortController();
    const pending = jobs.wait.wait({}, { ...direct(), signal: abort.signal });
    await pause(100);
    abort.abort();
    const r = await pending;
    expect(r.wait_status).toBe("cancelled");
    expect(r.jobs.every((l) => l.collected === "not_yet")).toBe(true);
    await waitFor(() => wokenShells().includes(shell) && wokenMonitors().includes(monitor), 30_000, "both wakes after the cancelled wait");
  });

  it("without ids, a running server started with ready is left out: the call does not wait out its timeout", async () => {
    const server = await jobs.shell.service.exec({ cmd: "echo listening; sleep 30", ready: { pattern: "listening" } }, direct("server"));
    expect(server.ready?.status).toBe("ready");
    const work = await jobs.exec("sleep 0.5; echo built", "none");
    const r = await jobs.wait.wait({}, direct());
    expect(r.wait_status).toBe("all_ended");
    expect(r.jobs.map((l) => l.id)).toEqual([`job_${work}`]);
  });

  it("a human's new message ends the wait at once; what ended is still collected, the rest goes on", async () => {
    const quick = await jobs.exec("sleep 0.3; echo quick-done", "none");
    const long = await jobs.exec("sleep 30", "none");
    await waitFor(() => jobs.shell.service.session(quick)?.handle.phase() === "ended", 30_000, "the quick job to end");
    const pending = jobs.wait.wait({ ids: [String(quick), String(long)] }, direct());
    await pause(100);
    jobs.shell.service.steer();
    const r = await pending;
    expect(r.wait_status).toBe("steered");
    expect(byId(r.jobs).get(`job_${quick}`)).toMatchObject({ collected: "now", verdict: "success" });
    expect(r.running).toEqual([`job_${long}`]);
  });

  it("the timeout returns with the jobs still running, named", async () => {
    const long = await jobs.exec("sleep 30", "none");
    const r = await jobs.wait.wait({ ids: [`job_${long}`], timeout_ms: 300 }, direct());
    expect(r.wait_status).toBe("timeout");
    expect(r.running).toEqual([`job_${long}`]);
    expect(r.jobs[0]).toMatchObject({ verdict: "running", collected: "not_yet" });
  });

  it("bad input gets a clear error naming the field", async () => {
    const shell = await jobs.exec("sleep 5", "none");
    await expect(jobs.wait.wait({ ids: ["99", "monitor_42"] }, direct())).rejects.toThrow(
      new RegExp(`wait_jobs: ids: job_99, monitor_42 are not jobs of this session; its jobs: job_${shell}`),
    );
    await expect(jobs.wait.wait({ ids: [] }, direct())).rejects.toThrow(/wait_jobs: ids is an empty list/);
    await expect(jobs.wait.wait({ ids: ["build"] }, direct())).rejects.toThrow(/wait_jobs: ids: "build" is not a job id/);
    await expect(jobs.wait.wait({ until: "some" }, direct())).rejects.toThrow(/wait_jobs: until: "some" is not one of all, any, first_failure/);
    await expect(jobs.wait.wait({ timeout_ms: -1 }, direct())).rejects.toThrow(/wait_jobs: timeout_ms: -1 is negative/);
  });
});
