/**
 * A burst reports honest progress: a starting job says why it is still starting (waiting for a thread, booting,
 * forking), in the shell tools' structured answers and text, in the /monitor console, the sessions picker and the
 * `/jobs` overview, and each of them counts the starting jobs by stage while any start.
 */
import { Compile } from "typebox/compile";
import { describe, expect, it } from "vitest";
import { Job } from "../../host/runtime/job.ts";
import type { ActorPool } from "../../host/runtime/pool.ts";
import type { JobHandle, JobState, StartStage } from "../../host/runtime/api.ts";
import { JobCellWriter } from "../../mailbox/cell.ts";
import type { ActorTask } from "../../mailbox/task.ts";
import type { JobSpec } from "../../mailbox/spec.ts";
import { processAnswer } from "../../host/shell/process-answer.ts";
import { ListResultSchema, ProcessResultSchema } from "../../host/shell/result-schemas.ts";
import { listText, processResultText } from "../../host/shell/result-text.ts";
import { listAnswer, sessionEntry } from "../../host/shell/session-answers.ts";
import { jobsOverview } from "../../host/console/views.ts";
import type { JobView } from "../../ui/views.ts";
import { initialState } from "../../ui/console-state.ts";
import { renderConsole } from "../../ui/console-view.ts";
import { renderPicker } from "../../ui/sessions-picker.ts";
import { shownStatus, startingCounts, startingOf, startingStatus, startingSummary } from "../../shared/start-stage.ts";
import { PLAIN_THEME } from "../fixtures/plain-theme.ts";
import { actorResult, figures, reading, settings } from "../fixtures/shell-readings.ts";
import { monitorJob, snapshotOf } from "../fixtures/ui-snapshots.ts";

const starting: JobState = { phase: "starting", stopBy: null };
const running: JobState = { phase: "running", stopBy: null };
const exited: JobState = { phase: "ended", result: actorResult(), stopBy: null };

/** A burst of twelve: five wait for a thread, four boot, three fork. */
const BURST: StartStage[] = [...Array<StartStage>(5).fill("waiting_for_thread"), ...Array<StartStage>(4).fill("booting"), ...Array<StartStage>(3).fill("forking")];

describe("the host's job", () => {
  /** A pool that only keeps the task it is handed, and says whether its start still waits as the test tells it. */
  function fakePool(): { pool: ActorPool; tasks: ActorTask[]; waiting: { now: boolean } } {
    const tasks: ActorTask[] = [];
    const waiting = { now: true };
    const pool: ActorPool = {
      run: (task) => {
        tasks.push(task);
        return new Promise(() => {});
      },
      waits: (jobId) => waiting.now && tasks.some((task) => task.spec.id === jobId),
      lastError: () => null,
      threads: () => 0,
      codeCacheUses: () => 0,
      destroy: async () => {},
    };
    return { pool, tasks, waiting };
  }
  const jobOn = (pool: ActorPool) =>
    new Job({ spec: { id: "job_1", timeoutMs: 60_000, killGraceMs: 500 } as JobSpec, number: 1, kind: "shell", label: "x", pool, logBudget: new SharedArrayBuffer(8), checkMessages: false, onEnded: () => {} });

  it("reads each stage from the fact that owns it: the pool's queue, then the cell's claim, until the process exists", async () => {
    const { pool, tasks, waiting } = fakePool();
    const job = jobOn(pool);
    expect(job.startStage()).toBe("waiting_for_thread");
    waiting.now = false;
    expect(job.startStage()).toBe("booting");
    const task = tasks[0]!;
    const cell = new JobCellWriter(task.cell);
    expect(cell.claimSpawn()).toBe(true);
    expect(job.startStage()).toBe("forking");
    expect(job.phase()).toBe("starting");
    cell.publishSpawn(4242, 4242, Date.now());
    expect(job.phase()).toBe("running");
    expect(job.startStage()).toBeNull();
    task.data.postMessage({ type: "exit", result: actorResult(), window: { lines: [], droppedLines: 0, droppedBytes: 0 }, unread: null });
    await job.done;
    expect(job.startStage()).toBeNull();
    task.data.close();
    task.control.close();
  });

  it("a job stopped while it waits for a thread has no stage any more", async () => {
    const { pool, tasks } = fakePool();
    const job = jobOn(pool);
    expect(job.startStage()).toBe("waiting_for_thread");
    expect((await job.stop()).cause).toBe("stopped");
    expect(job.startStage()).toBeNull();
    tasks[0]!.data.close();
    tasks[0]!.control.close();
  });
});

describe("the words for a start stage", () => {
  it("say why a job is starting, and count a burst by stage in the order a start goes through them", () => {
    expect(startingStatus("waiting_for_thread")).toBe("starting: waiting for a thread");
    expect(startingStatus("booting")).toBe("starting: booting");
    expect(startingStatus("forking")).toBe("starting: forking");
    expect(startingSummary(startingCounts([...BURST].reverse()))).toBe("12 starting: 5 waiting for a thread, 4 booting, 3 forking");
    // A stage no job is in is left out; no starting job, no summary.
    expect(startingSummary(startingCounts(["booting", null, undefined, "booting"]))).toBe("2 starting: 2 booting");
    expect(startingSummary(startingCounts([null, undefined]))).toBeNull();
  });

  it("a status shows its stage only while it is `starting`", () => {
    expect(shownStatus({ status: "starting", startStage: "forking" })).toBe("starting: forking");
    expect(shownStatus({ status: "starting" })).toBe("starting");
    // A stage read a moment before the process appeared does not relabel a running job.
    expect(shownStatus({ status: "running", startStage: "forking" })).toBe("running");
    expect(startingOf([{ status: "running", startStage: "forking" }, { status: "starting", startStage: "booting" }])).toBe("1 starting: 1 booting");
  });
});

describe("list_sessions", () => {
  const entries = () => [
    ...BURST.map((stage, i) => sessionEntry(settings({ id: i + 1 }), reading(starting, { startStage: stage }), { collected: false, listening: undefined })),
    sessionEntry(settings({ id: 20 }), reading(running), { collected: false, listening: [5173] }),
    sessionEntry(settings({ id: 21 }), reading(exited), { collected: false, listening: undefined }),
  ];

  it("gives each starting session its stage, and counts them by stage while any starts", () => {
    const list = listAnswer(entries());
    expect(list.sessions[0]).toMatchObject({ session_id: 1, status: "starting", running: false, start_stage: "waiting_for_thread" });
    expect(list.sessions[11]).toMatchObject({ session_id: 12, status: "starting", start_stage: "forking" });
    // A job whose process exists, or that ended, has no stage.
    expect("start_stage" in list.sessions[12]!).toBe(false);
    expect("start_stage" in list.sessions[13]!).toBe(false);
    expect(list).toMatchObject({ active_count: 13, completed_count: 1, starting_counts: { waiting_for_thread: 5, booting: 4, forking: 3 } });
    expect(Compile(ListResultSchema).Check(list)).toBe(true);
    expect(Compile(ListResultSchema).Check({ ...list, sessions: [{ ...list.sessions[0]!, start_stage: "sleeping" }] })).toBe(false);
  });

  it("says in its text why each starting session is starting, after a line that counts them", () => {
    const text = listText(listAnswer(entries())).split("\n");
    expect(text[1]).toBe("12 starting: 5 waiting for a thread, 4 booting, 3 forking");
    expect(text.find((line) => line.startsWith("session_id 1:"))).toMatch(/^session_id 1: starting: waiting for a thread \(its process does not exist yet\) · pipes/);
    expect(text.find((line) => line.startsWith("session_id 6:"))).toMatch(/^session_id 6: starting: booting \(its process does not exist yet\)/);
    expect(text.find((line) => line.startsWith("session_id 12:"))).toMatch(/^session_id 12: starting: forking \(its process does not exist yet\)/);
    expect(text.find((line) => line.startsWith("session_id 20:"))).toMatch(/^session_id 20: running · pipes/);
  });

  it("adds nothing while no job is starting", () => {
    const list = listAnswer(entries().slice(12));
    expect("starting_counts" in list).toBe(false);
    expect(listText(list)).not.toContain("starting");
    expect(Compile(ListResultSchema).Check(list)).toBe(true);
  });
});

describe("exec_command and write_stdin", () => {
  const answer = (state: JobState, startStage: StartStage | null) =>
    processAnswer({
      operation: "exec_command",
      session: settings(),
      reading: reading(state, { startStage }),
      taken: { text: "", bytes: 0, omittedBytes: 0 },
      mode: "relative",
      outcome: "deadline",
      notes: [],
    });

  it("an answer for a job still starting carries its stage, in structured content and text", () => {
    const r = answer(starting, "waiting_for_thread");
    expect(r).toMatchObject({ status: "starting", running: false, session_id: 7, start_stage: "waiting_for_thread", supervision: { state: "starting" } });
    expect(Compile(ProcessResultSchema).Check(r)).toBe(true);
    expect(Compile(ProcessResultSchema).Check({ ...r, start_stage: "sleeping" })).toBe(false);
    expect(processResultText(r).split("\n")[0]).toBe("Process starting with session_id 7 (exec_command): it does not exist yet (stage: waiting for a thread).");
    expect(processResultText(answer(starting, "forking")).split("\n")[0]).toContain("(stage: forking)");
  });

  it("a running job's answer has no stage", () => {
    const r = answer(running, null);
    expect("start_stage" in r).toBe(false);
    expect(processResultText(r).split("\n")[0]).toBe("Process running with session_id 7 (exec_command).");
  });
});

describe("the console, the sessions picker and /jobs", () => {
  const startingView = (id: number, stage: StartStage, kind: JobView["kind"] = "monitor"): JobView =>
    monitorJob(id, null, { status: "starting", startStage: stage, kind, key: `${kind}:${id}`, id: String(id) });
  const jobs = () => [
    startingView(1, "waiting_for_thread"),
    startingView(2, "waiting_for_thread", "shell"),
    startingView(3, "booting", "shell"),
    startingView(4, "forking", "shell"),
    monitorJob(5, null),
  ];

  it("the console counts the starting jobs by stage and shows each one's stage in its row and details", () => {
    const snapshot = snapshotOf(jobs());
    const view = renderConsole(snapshot, initialState(snapshot), { width: 160, height: 40, theme: PLAIN_THEME });
    expect(view.lines[0]).toContain("Jobs · 5 running · 0 finished · 4 starting: 2 waiting for a thread, 1 booting, 1 forking");
    expect(view.lines[1]).toMatch(/^▸ starting: waiting for a thread · monitor · /);
    expect(view.lines[4]).toMatch(/^ {2}starting: forking · shell · /);
    expect(view.lines[5]).toMatch(/^ {2}running · monitor · /);
    expect(view.lines).toContain("Status: starting: waiting for a thread");
  });

  it("the console's title says nothing of starts when none is starting", () => {
    const snapshot = snapshotOf([monitorJob(5, null)]);
    expect(renderConsole(snapshot, initialState(snapshot), { width: 160, height: 20, theme: PLAIN_THEME }).lines[0]).toMatch(/^Jobs · 1 running · 0 finished\s*$/);
  });

  it("the sessions picker does the same for the shell jobs", () => {
    const lines = renderPicker(snapshotOf(jobs()), { selectedKey: "shell:3", selectedIndex: 1, confirming: false }, { width: 160, height: 30, theme: PLAIN_THEME });
    expect(lines[0]).toContain("Shell jobs · 3 running · 0 finished · 3 starting: 1 waiting for a thread, 1 booting, 1 forking");
    expect(lines[2]).toMatch(/^▸ starting: booting · 3 · /);
    expect(lines.some((line) => line.startsWith("Status: starting: booting · "))).toBe(true);
  });

  it("/jobs counts the starting jobs and gives each one's stage", () => {
    const handle = (phase: "starting" | "running", stage: StartStage | null, pid: number | null) => ({
      startStage: () => stage,
      phase: () => phase,
      kind: "shell" as const,
      label: "npm test",
      pid: () => pid,
    });
    const handles: Pick<JobHandle, "startStage" | "phase" | "kind" | "label" | "pid">[] = [
      handle("starting", "waiting_for_thread", null),
      handle("starting", "booting", null),
      handle("running", null, 4242),
    ];
    expect(jobsOverview(handles).split("\n")).toEqual([
      "2 starting: 1 waiting for a thread, 1 booting",
      "starting: waiting for a thread · shell · npm test · pid -",
      "starting: booting · shell · npm test · pid -",
      "running · shell · npm test · pid 4242",
    ]);
    expect(jobsOverview([handle("running", null, 4242)])).toBe("running · shell · npm test · pid 4242");
    expect(jobsOverview([])).toBe("No background jobs are running.");
  });

  it("/jobs gives a running job's tree figures and its runaway flag", () => {
    const usage = { rssBytes: 5.1 * 1024 ** 3, peakRssBytes: 5.2 * 1024 ** 3, cpuPercent: 190, cpuMs: 1e6, processes: 4, peakProcesses: 6 };
    const job = { startStage: () => null, phase: () => "running" as const, kind: "shell" as const, label: "npm run dev", pid: () => 4242, figures: () => ({ ...figures(), usage, runaway: true }) };
    expect(jobsOverview([job])).toBe("running · shell · npm run dev · pid 4242 · usage: rss=5.10GiB cpu=190% processes=4 peak_rss=5.20GiB · runaway");
  });
});
