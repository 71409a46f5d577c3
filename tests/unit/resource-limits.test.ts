/**
 * The pure parts of resource limits and the watchdog: the tree's CPU accounting, the judge of limits and runaway
 * episodes, the limits' validation, the watchdog setting, the figures line the tools print, and the console's warning.
 */
import { describe, expect, it } from "vitest";
import { LimitTrip } from "../../mailbox/result.ts";
import { ActorResult } from "../../mailbox/result.ts";
import { Value } from "typebox/value";
import type { TreeUsage } from "../../mailbox/cell.ts";
import { createJobCell, JobCellReader, JobCellWriter } from "../../mailbox/cell.ts";
import { limitPassed, tripMessage, Watchdog } from "../../actors/watch/usage-judge.ts";
import { UsageMeter, type MemberSample } from "../../actors/watch/usage-meter.ts";
import { readWatchdog, WATCHDOG_DEFAULTS } from "../../host/config.ts";
import { limitsOf, MIN_MEMORY_MB } from "../../host/tools/limits.ts";
import { validateExec } from "../../host/shell/validate.ts";
import { validateMonitorStart } from "../../host/monitor/schemas.ts";
import { limitLine } from "../../host/monitor/report.ts";
import { runawayFigures, usageFields, usageLine } from "../../host/runtime/usage-line.ts";
import { pressureOf } from "../../host/console/pressure.ts";
import { renderConsole } from "../../ui/console-view.ts";
import { initialState } from "../../ui/console-state.ts";
import type { FgRole, UiTheme } from "../../ui/theme.ts";
import { monitorJob, snapshotOf } from "../fixtures/ui-snapshots.ts";
import { wakeMessage } from "../../host/delivery/wake-text.ts";
import { shellStatusLine } from "../../host/wait/lines.ts";
import { jobLineText } from "../../host/wait/result-text.ts";
import { listText } from "../../host/shell/result-text.ts";
import { listAnswer, sessionEntry } from "../../host/shell/session-answers.ts";
import { figures, reading, settings } from "../fixtures/shell-readings.ts";

const MIB = 1024 * 1024;
const member = (pid: number, ppid: number, cpuMs: number, over: Partial<MemberSample> = {}): MemberSample => ({ pid, ppid, cpuMs, rssBytes: 10 * MIB, zombie: false, runnable: false, ...over });
const usage = (over: Partial<TreeUsage> = {}): TreeUsage => ({ rssBytes: 0, peakRssBytes: 0, cpuPercent: null, cpuMs: 0, processes: 1, peakProcesses: 1, ...over });

describe("the tree's CPU time", () => {
  it("adds what members gained and new members' whole time, and counts a child reaped by its parent once", () => {
    const meter = new UsageMeter();
    expect(meter.sample(0, [member(10, 1, 100)])).toMatchObject({ cpuMs: 100, cpuPercent: null, processes: 1, rssBytes: 10 * MIB });
    // A child appears with 50 ms; the parent gains 100.
    expect(meter.sample(1000, [member(10, 1, 200), member(11, 10, 50)])).toMatchObject({ cpuMs: 250, cpuPercent: 15, processes: 2 });
    // The child ran 30 ms more and ended; its parent reaped it, so the parent's figure holds its 80 ms now: only the
    // 30 ms are new.
    expect(meter.sample(2000, [member(10, 1, 280)]).cpuMs).toBe(280);
  });

  it("never goes back when a member is reaped outside the tree, and counts a zombie's time but not its memory", () => {
    const meter = new UsageMeter();
    meter.sample(0, [member(10, 1, 100), member(20, 1, 500)]);
    // 20 was reparented away and reaped there: its time stays counted, nothing is taken off.
    expect(meter.sample(1000, [member(10, 1, 100)]).cpuMs).toBe(600);
    const after = meter.sample(2000, [member(10, 1, 100), member(12, 10, 40, { zombie: true })]);
    expect(after).toMatchObject({ cpuMs: 640, processes: 1, rssBytes: 10 * MIB, peakProcesses: 2, peakRssBytes: 20 * MIB });
  });
});

describe("limits", () => {
  const limits = { memoryBytes: 200 * MIB, cpuMs: 2000, processes: 50 };

  it("trip on the first figure past its limit, with the peak, and say it in the limit's unit", () => {
    expect(limitPassed(limits, usage({ rssBytes: 200 * MIB, cpuMs: 2000, processes: 50 }))).toBeNull();
    const memory = limitPassed(limits, usage({ rssBytes: 231 * MIB }));
    expect(memory).toEqual({ cause: "memory_limit", limit: 200 * MIB, peak: 231 * MIB });
    expect(Value.Check(LimitTrip, memory)).toBe(true);
    expect(tripMessage(memory!)).toBe("the job's process tree passed its memory limit (resident 231 MiB, limit 200 MiB); the process group was stopped");
    expect(limitPassed(limits, usage({ cpuMs: 2100 }))).toEqual({ cause: "cpu_limit", limit: 2000, peak: 2100 });
    expect(limitLine({ cause: "cpu_limit", limit: 2000, peak: 2100 })).toBe("cpu_seconds_used=2.1 limit=cpu_seconds:2");
    expect(limitPassed(limits, usage({ processes: 57 }))).toEqual({ cause: "process_limit", limit: 50, peak: 57 });
    expect(limitLine({ cause: "process_limit", limit: 50, peak: 57 })).toBe("peak_processes=57 limit=processes:50");
    expect(limitPassed({ memoryBytes: null, cpuMs: null, processes: null }, usage({ rssBytes: 1e12 }))).toBeNull();
  });

  it("an ended job's result carries the limit only as an optional, checked field", () => {
    const result = {
      cause: "memory_limit",
      exitCode: null,
      signal: "SIGTERM",
      message: "m",
      startedAt: 1,
      endedAt: 2,
      elapsedMs: 1,
      cleanup: "confirmed",
      escalated: false,
      log: { path: null, bytes: 0, truncated: false, error: null },
      totals: { bytes: 0, lines: 0 },
      evidence: { count: 0, blocks: [], omitted: 0 },
      monitor: null,
    };
    expect(Value.Check(ActorResult, result)).toBe(true);
    expect(Value.Check(ActorResult, { ...result, limit: { cause: "memory_limit", limit: 1, peak: 2 } })).toBe(true);
  });

  it("reject bad input with an error naming the field", () => {
    expect(limitsOf("exec_command", { memory_mb: -5 })).toEqual({ ok: false, error: expect.stringMatching(/^exec_command: limits\.memory_mb must be/) });
    expect(limitsOf("exec_command", { memory_mb: MIN_MEMORY_MB - 1 })).toMatchObject({ ok: false, error: expect.stringContaining(`from ${MIN_MEMORY_MB}`) });
    expect(limitsOf("exec_command", { cpu_seconds: "2" })).toMatchObject({ ok: false, error: expect.stringContaining("limits.cpu_seconds") });
    expect(limitsOf("exec_command", { cpu_seconds: 0 })).toMatchObject({ ok: false, error: expect.stringContaining("limits.cpu_seconds") });
    expect(limitsOf("exec_command", { processes: 2.5 })).toMatchObject({ ok: false, error: expect.stringContaining("limits.processes") });
    expect(limitsOf("exec_command", { rss: 5 })).toMatchObject({ ok: false, error: expect.stringContaining("limits.rss") });
    expect(limitsOf("exec_command", 200)).toMatchObject({ ok: false, error: expect.stringContaining("limits must be an object") });
    expect(limitsOf("exec_command", { memory_mb: 200, cpu_seconds: 1.5, processes: 50 })).toEqual({
      ok: true,
      value: { memoryBytes: 200 * MIB, cpuMs: 1500, processes: 50 },
    });
    expect(limitsOf("exec_command", {})).toEqual({ ok: true, value: null });
  });

  it("both tools take them, each error naming the field", () => {
    if (process.platform !== "linux") return;
    expect(validateExec({ cmd: "x", limits: { memory_mb: 200 } })).toMatchObject({ ok: true, value: { limits: { memoryBytes: 200 * MIB } } });
    expect(validateExec({ cmd: "x", limits: { memory_mb: "lots" } })).toMatchObject({ ok: false, error: expect.stringContaining("limits.memory_mb") });
    expect(validateMonitorStart({ command: "x", result_pattern: "y", limits: { processes: 0 } })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^limits\.processes must be/),
    });
    expect(validateMonitorStart({ command: "x", result_pattern: "y", limits: { cpu_seconds: 2 } })).toMatchObject({ ok: true, value: { limits: { cpuMs: 2000 } } });
  });
});

describe("the watchdog", () => {
  const spec = { memoryBytes: 100 * MIB, cpuPercent: 100, sustainMs: 10_000 };

  it("begins an episode once, ends it only well under the threshold, and may begin another", () => {
    const dog = new Watchdog(spec);
    expect(dog.sample(0, usage({ rssBytes: 50 * MIB }))).toBeNull();
    expect(dog.sample(1000, usage({ rssBytes: 150 * MIB }))).toEqual({ kind: "runaway", reason: "memory" });
    for (let at = 2000; at < 6000; at += 1000) expect(dog.sample(at, usage({ rssBytes: 150 * MIB }))).toBeNull();
    // Just under the threshold is still the same episode.
    expect(dog.sample(6000, usage({ rssBytes: 95 * MIB }))).toBeNull();
    expect(dog.runaway).toBe(true);
    expect(dog.sample(7000, usage({ rssBytes: 50 * MIB }))).toEqual({ kind: "calm" });
    expect(dog.sample(8000, usage({ rssBytes: 150 * MIB }))).toEqual({ kind: "runaway", reason: "memory" });
  });

  it("judges CPU only over its whole window: a burst is not a runaway, a sustained load is", () => {
    const dog = new Watchdog(spec);
    // Two cores busy for 5 s, then idle: 100 % on average over 10 s is not more than one core.
    let cpuMs = 0;
    for (let at = 0; at <= 10_000; at += 1000) {
      expect(dog.sample(at, usage({ cpuMs }))).toBeNull();
      if (at < 5000) cpuMs += 2000;
    }
    const busy = new Watchdog(spec);
    let events = 0;
    for (let at = 0, used = 0; at <= 20_000; at += 1000, used += 1500) if (busy.sample(at, usage({ cpuMs: used })) !== null) events += 1;
    expect(events).toBe(1);
    expect(busy.runaway).toBe(true);
  });

  it("is set in one documented variable: on by default, 0 turns it off, thresholds can be moved", () => {
    const machine = 8 * 1024 ** 3;
    expect(readWatchdog({}, machine)).toEqual({ ok: true, spec: { memoryBytes: 2 * 1024 ** 3, cpuPercent: 100, sustainMs: 600_000 } });
    expect(readWatchdog({}, 64 * 1024 ** 3)).toMatchObject({ spec: { memoryBytes: WATCHDOG_DEFAULTS.memoryCapBytes } });
    expect(readWatchdog({ PI_JOBS_WATCHDOG: "0" }, machine)).toEqual({ ok: true, spec: null });
    expect(readWatchdog({ PI_JOBS_WATCHDOG: "memory_mb=64,cpu_percent=150,cpu_minutes=0.5" }, machine)).toEqual({
      ok: true,
      spec: { memoryBytes: 64 * MIB, cpuPercent: 150, sustainMs: 30_000 },
    });
    expect(readWatchdog({ PI_JOBS_WATCHDOG: "memory=64" }, machine)).toMatchObject({ ok: false, error: expect.stringMatching(/^PI_JOBS_WATCHDOG="memory=64"/) });
  });
});

describe("the figures the model sees", () => {
  it("one compact line and the same structured figures, from the cell the actor writes", () => {
    const buffer = createJobCell();
    const reader = new JobCellReader(buffer);
    expect(reader.read().usage).toBeNull();
    new JobCellWriter(buffer).setUsage({ rssBytes: 231 * MIB, peakRssBytes: 240 * MIB, cpuPercent: 95.26, cpuMs: 4000, processes: 3, peakProcesses: 4 });
    const fields = usageFields(reader.read().usage);
    expect(fields).toEqual({ rss_bytes: 231 * MIB, cpu_percent: 95.3, processes: 3, peak_rss_bytes: 240 * MIB });
    expect(usageLine(fields!)).toBe("usage: rss=231.0MiB cpu=95% processes=3 peak_rss=240.0MiB");
    expect(usageLine({ ...fields!, cpu_percent: null, rss_bytes: 5.1 * 1024 * MIB })).toContain("rss=5.10GiB cpu=unknown");
    expect(runawayFigures(fields, { memoryBytes: 64 * MIB, cpuPercent: 100, sustainMs: 600_000 }, "memory")).toBe(
      "231.0MiB and 95% CPU (passed: memory; watchdog: over 64.0MiB, or over 100% CPU for 10 min)",
    );
  });

  it("list_sessions and wait_jobs print them on the job's lines and carry them structured", () => {
    const sampled = { rssBytes: 231 * MIB, peakRssBytes: 240 * MIB, cpuPercent: 95, cpuMs: 4000, processes: 3, peakProcesses: 4 };
    const entry = sessionEntry(settings(), reading({ phase: "running", stopBy: null }, { figures: figures({ usage: sampled, runaway: true }) }), { collected: false, listening: undefined });
    expect(entry.usage).toEqual({ rss_bytes: 231 * MIB, cpu_percent: 95, processes: 3, peak_rss_bytes: 240 * MIB });
    const text = listText(listAnswer([entry]));
    expect(text).toContain("  usage: rss=231.0MiB cpu=95% processes=3 peak_rss=240.0MiB");
    expect(text).toContain("runaway=true");
    const line = shellStatusLine(entry, "not_yet");
    expect(line.usage).toEqual(entry.usage);
    expect(jobLineText(line).split("\n")[0]).toContain("usage: rss=231.0MiB cpu=95% processes=3 peak_rss=240.0MiB");
    // Before the first sample there is nothing to say, and nothing is said.
    expect("usage" in sessionEntry(settings(), reading({ phase: "running", stopBy: null }), { collected: false, listening: undefined })).toBe(false);
  });

  it("the runaway flag sits beside the stuck flags without disturbing them", () => {
    const buffer = createJobCell();
    const writer = new JobCellWriter(buffer);
    writer.setRunaway(true);
    writer.setStuck({ stalled: true, waitingForInput: false });
    expect(new JobCellReader(buffer).read()).toMatchObject({ runaway: true, stalled: true, waitingForInput: false });
    writer.setRunaway(false);
    expect(new JobCellReader(buffer).read()).toMatchObject({ runaway: false, stalled: true });
  });
});

describe("the watchdog's wake", () => {
  it("says the figures and that nothing was stopped, apart from the stuck jobs, with the figures in its details", () => {
    const runaway = {
      sessionId: 3,
      cmd: "npm run dev",
      kind: "runaway" as const,
      prompt: null,
      tty: false,
      logPath: "/logs/job_3",
      runaway: { figures: "5.10GiB and 190% CPU (passed: memory; watchdog: over 4.00GiB, or over 100% CPU for 10 min)", noticedAt: 1 },
    };
    const stalled = { sessionId: 4, cmd: "make", kind: "stalled" as const, prompt: null, tty: false, logPath: "/logs/job_4" };
    const message = wakeMessage([], [stalled, runaway]);
    const lines = message.content.split("\n");
    expect(lines[0]).toBe("[shell-jobs] A running job uses more than the watchdog allows:");
    expect(lines[1]).toMatch(/^- session_id 3 uses 5\.10GiB and 190% CPU \(passed: memory; .*\); it keeps running \(the watchdog never stops a job\)/);
    expect(lines[2]).toBe("[shell-jobs] A running job may be stuck:");
    expect(message.details.stuck).toEqual([
      expect.objectContaining({ session_id: 4, kind: "stalled" }),
      expect.objectContaining({ session_id: 3, kind: "runaway", figures: runaway.runaway.figures }),
    ]);
  });
});

describe("the console", () => {
  it("warns near a limit and for a runaway", () => {
    const limits = { memoryBytes: 200 * MIB, cpuMs: null, processes: null };
    expect(pressureOf(usage({ rssBytes: 100 * MIB }), limits, false)).toBe("none");
    expect(pressureOf(usage({ rssBytes: 170 * MIB }), limits, false)).toBe("near_limit");
    expect(pressureOf(usage({ rssBytes: 10 * MIB }), null, true)).toBe("runaway");
    expect(pressureOf(null, limits, false)).toBe("none");
  });

  it("shows the limits beside the live figures, in the theme's warning role when near one", () => {
    const roles: FgRole[] = [];
    const theme: UiTheme = { fg: (role, text) => (roles.push(role), `<${role}>${text}</${role}>`), bg: (_role, text) => text, bold: (text) => text };
    const job = monitorJob(1, null);
    job.live = {
      ...job.live!,
      tree: { rssBytes: 170 * MIB, peakRssBytes: 180 * MIB, cpuPercent: 40, cpuMs: 1500, processes: 2 },
      limits: { memoryBytes: 200 * MIB, cpuMs: 2000, processes: null },
      pressure: "near_limit",
    };
    const snapshot = snapshotOf([job]);
    const lines = renderConsole(snapshot, initialState(snapshot), { width: 160, height: 60, theme }).lines;
    const tree = lines.find((line) => line.includes("Process tree:"));
    expect(tree).toContain("<warning>2 processes · CPU 40% (1.5 s) · memory 170.0 MiB (peak 180.0 MiB)</warning>");
    expect(lines.find((line) => line.includes("Limits:"))).toContain("<warning>memory 200.0 MiB · CPU 2 s</warning>");
    expect(lines.some((line) => line.includes("<warning>▲ near limit</warning>"))).toBe(true);
  });
});
