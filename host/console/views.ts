/**
 * Builds the UI's snapshots from the host's own records: the job runtime's handles (figures, retained output, pgid),
 * the monitor service (active and recent monitors with their requests and final facts) and the shell service's
 * registry. Runs at human rate (the console's 250 ms refresh, a key press, the widget's tick), never per output
 * batch. Shell jobs are remembered here (finished ones: the last 20) because the shell registry forgets a job once the
 * model has collected its result, and the console should still show how it ended.
 */
import type { JobFigures, JobHandle } from "../runtime/api.ts";
import { usageFields, usageLine } from "../runtime/usage-line.ts";
import type { MonitorRecord, MonitorService } from "../monitor/service.ts";
import { structuredResult } from "../monitor/report.ts";
import type { ShellService } from "../shell/service.ts";
import type { ShellSession } from "../shell/session.ts";
import { listeningOf, refreshSoon } from "../shell/listening.ts";
import { livePhaseOf, liveStatus } from "../../mailbox/lifecycle.ts";
import { endingOf, statusOf } from "../shell/supervision.ts";
import { monitorConfigFields, monitorHeadFields, monitorPayloadFields, monitorTone } from "../../ui/monitor-fields.ts";
import { shownStatus, startingOf } from "../../shared/start-stage.ts";
import { RateTracker } from "./rates.ts";
import { pressureOf } from "./pressure.ts";
import type { DetailField, JobsSnapshot, JobView, LiveFigures, Tone } from "../../ui/views.ts";
import type { RetainedWindow } from "../runtime/api.ts";

export const SHELL_HISTORY_LIMIT = 20;

export interface SnapshotSources {
  monitors(): MonitorService | null;
  shell(): ShellService | null;
}

export interface SnapshotRequest {
  /** Key of the job whose retained output to include. */
  outputFor?: string | null;
}

export interface SnapshotBuilder {
  build(request?: SnapshotRequest): JobsSnapshot;
  /** Running jobs only, cheaply (for the activity rows). */
  running(): { kind: "monitor" | "shell"; title: string; elapsedMs: number }[];
  /** Stops one job by key; resolves with a short human answer. */
  stop(key: string): Promise<string>;
  stopAll(): Promise<string>;
}

/**
 * The `/jobs` overview: one line per live job of the runtime, a starting one with its stage, after a count of the
 * starting jobs by stage while any start.
 */
export function jobsOverview(jobs: readonly (Pick<JobHandle, "startStage" | "phase" | "kind" | "label" | "pid"> & Partial<Pick<JobHandle, "figures">>)[]): string {
  if (jobs.length === 0) return "No background jobs are running.";
  // The stage before the phase, as a shell answer reads them (host/shell/session.ts, readSession).
  // A listed job is live: the runtime forgets a job as its result comes in.
  const shown = jobs.map((job) => ({ job, startStage: job.startStage(), status: livePhaseOf(job.phase()) }));
  const lines = shown.map(({ job, ...start }) => `${shownStatus(start)} · ${job.kind} · ${job.label} · pid ${job.pid() ?? "-"}${resourcesOf(job.figures?.())}`);
  const starting = startingOf(shown);
  return (starting === null ? lines : [starting, ...lines]).join("\n");
}

/** A job's tree figures on its /jobs line, and its runaway flag: ` · usage: rss=… · runaway`. */
function resourcesOf(figures: JobFigures | undefined): string {
  const fields = usageFields(figures?.usage ?? null);
  return `${fields === null ? "" : ` · ${usageLine(fields)}`}${figures?.runaway ? " · runaway" : ""}`;
}

function outputOf(handle: JobHandle): RetainedWindow {
  const kept = handle.retained();
  return { lines: kept.lines.map((line) => ({ source: line.source, text: line.text })), droppedLines: kept.droppedLines, droppedBytes: kept.droppedBytes };
}

export function createSnapshotBuilder(
  sources: SnapshotSources,
  options: { now?: () => number; clock?: () => number } = {},
): SnapshotBuilder {
  const now = options.now ?? Date.now;
  const clock = options.clock ?? (() => performance.now());
  const rates = new RateTracker();

  function live(key: string, handle: JobHandle, running: boolean, request: SnapshotRequest): LiveFigures {
    const figures = handle.figures();
    // Only the job whose output is on screen asks its actor for a fresh window; the others show what is known.
    const kept = handle.retained(request.outputFor === key);
    const rate = running ? rates.observe(key, figures, clock()) : { linesPerSecond: null, bytesPerSecond: null };
    const pgid = handle.pgid();
    // The tree's figures come from the job's cell, sampled on its actor's thread: reading them here costs nothing.
    const usage = figures.usage;
    const limits = handle.spec.watch?.limits ?? null;
    return {
      ...rate,
      totalLines: figures.lines,
      totalBytes: figures.bytes,
      retainedLines: kept.lines.length,
      droppedLines: kept.droppedLines,
      droppedBytes: kept.droppedBytes,
      paused: figures.paused,
      pgid,
      tree: usage === null ? null : { rssBytes: usage.rssBytes, peakRssBytes: usage.peakRssBytes, cpuPercent: running ? usage.cpuPercent : null, cpuMs: usage.cpuMs, processes: running ? usage.processes : 0 },
      limits,
      pressure: running ? pressureOf(usage, limits, figures.runaway) : "none",
    };
  }

  function monitorView(record: MonitorRecord, request: SnapshotRequest, nowEpoch: number): JobView {
    const key = `monitor:${record.monitorId}`;
    const final = record.final;
    const running = final === null;
    const result = final === null ? null : structuredResult(final.facts).result;
    // The stage before the phase, as a shell answer reads them (readSession): a stage only moves on.
    const stage = record.job.startStage();
    // The job may have ended before the monitor's record is final: it reads `running` until then.
    const status: JobView["status"] = result?.status ?? livePhaseOf(record.job.phase());
    const body: DetailField[] = [
      { label: "Name", value: record.description, layout: "inline" },
      { label: "ID", value: record.monitorId, layout: "inline" },
      ...(result !== null ? monitorPayloadFields(result) : []),
    ];
    const view: JobView = {
      key,
      kind: "monitor",
      id: record.monitorId,
      title: record.description,
      running,
      status,
      ...(status === "starting" && stage !== null ? { startStage: stage } : {}),
      tone: monitorTone(status),
      elapsedMs: result?.elapsedMs ?? Math.max(0, nowEpoch - record.job.requestedAtEpoch),
      head: result !== null ? monitorHeadFields(result) : [],
      body,
      config: monitorConfigFields(record.request),
      live: live(key, record.job, running, request),
    };
    if (request.outputFor === key) view.output = outputOf(record.job);
    return view;
  }

  function shellView(session: ShellSession, request: SnapshotRequest, nowEpoch: number): JobView {
    const key = `shell:${session.id}`;
    // Before the state, as in monitorView.
    const stage = session.handle.startStage();
    const state = session.handle.state();
    const ending = endingOf(state, session.timeoutMs);
    const result = state.phase === "ended" ? state.result : null;
    const running = result === null || ending === null;
    const stopping = state.phase !== "ended" && state.stopBy !== null;
    const head: DetailField[] = [];
    let tone: Tone = "pending";
    if (!running) {
      tone = ending.status === "stopped" ? "stopped" : ending.status === "exited" && result.exitCode === 0 ? "success" : "error";
      if (result.exitCode !== null) head.push({ label: "Exit code", value: String(result.exitCode), layout: "inline" });
      if (result.signal !== null) head.push({ label: "Signal", value: result.signal, layout: "inline" });
      if (ending.failure !== null) head.push({ label: "Reason", value: `${ending.failure.reason}: ${ending.failure.message}`, layout: "inline" });
      else if (ending.stopReason !== null) head.push({ label: "Reason", value: ending.stopReason, layout: "inline" });
      if (result.cleanup !== "confirmed") head.push({ label: "Warning", value: "the process group was not confirmed gone", layout: "inline" });
      if (result.log.truncated) head.push({ label: "Warning", value: "the log is truncated", layout: "inline" });
    } else if (stopping) {
      head.push({ label: "Reason", value: "stopping", layout: "inline" });
    } else {
      const figures = session.handle.figures();
      if (figures.waitingForInput) head.push({ label: "Warning", value: "waiting for input (answer with write_stdin, or stop it)", layout: "inline" });
      if (figures.stalled) head.push({ label: "Warning", value: "stalled: no output and no CPU for its stall time", layout: "inline" });
    }
    if (running) refreshSoon(session);
    const listening = running ? listeningOf(session) : undefined;
    const logPath = result?.log.path ?? null;
    const status: JobView["status"] = state.phase === "ended" ? statusOf(state, session.timeoutMs) : liveStatus(state.phase, stopping);
    const view: JobView = {
      key,
      kind: "shell",
      id: String(session.id),
      title: session.cmd,
      running,
      status,
      ...(status === "starting" && stage !== null ? { startStage: stage } : {}),
      tone,
      elapsedMs: result?.elapsedMs ?? Math.max(0, nowEpoch - session.startedEpochMs),
      head,
      body: [
        { label: "Session", value: String(session.id), layout: "inline" },
        { label: "Terminal", value: session.tty ? "PTY" : "pipes", layout: "inline" },
        { label: "On exit", value: session.onExit, layout: "inline" },
        { label: "Unread", value: `${session.handle.figures().unreadBytes} bytes`, layout: "inline" },
        ...(listening !== undefined && listening !== null && listening.length > 0
          ? [{ label: "Listening", value: listening.join(", "), layout: "inline" as const }]
          : []),
        ...(logPath !== null ? [{ label: "Log", value: logPath, layout: "inline" as const }] : []),
      ],
      config: [
        { label: "Command", value: session.cmd, layout: "code" },
        { label: "Working directory", value: session.cwd, layout: "inline" },
        { label: "Lifetime", value: `${Math.round(session.timeoutMs / 1000)}s`, layout: "inline" },
      ],
      live: live(key, session.handle, running, request),
    };
    if (request.outputFor === key) view.output = outputOf(session.handle);
    return view;
  }

  // Every session seen, so one the model already collected (and the registry forgot) still shows how it ended.
  const known = new Map<number, ShellSession>();

  function shellSessions(): ShellSession[] {
    const registered = sources.shell()?.state.registry.all() ?? [];
    for (const session of registered) if (known.get(session.id) !== session) known.set(session.id, session);
    const finished = [...known.values()].filter((session) => session.endedAt() !== null);
    if (finished.length > SHELL_HISTORY_LIMIT) {
      finished.sort((a, b) => (a.endedAt() ?? 0) - (b.endedAt() ?? 0));
      for (const old of finished.slice(0, finished.length - SHELL_HISTORY_LIMIT)) known.delete(old.id);
    }
    return [...known.values()];
  }

  function build(request: SnapshotRequest = {}): JobsSnapshot {
    const nowEpoch = now();
    const monitors = sources.monitors();
    const running: JobView[] = [];
    const finished: { view: JobView; endedAt: number }[] = [];
    for (const record of monitors?.active() ?? []) running.push(monitorView(record, request, nowEpoch));
    for (const record of monitors?.history() ?? []) {
      finished.push({ view: monitorView(record, request, nowEpoch), endedAt: record.final?.facts.completedAt ?? 0 });
    }
    for (const session of shellSessions()) {
      const view = shellView(session, request, nowEpoch);
      if (view.running) running.push(view);
      else finished.push({ view, endedAt: session.endedAt() ?? 0 });
    }
    running.sort((a, b) => b.elapsedMs - a.elapsedMs);
    finished.sort((a, b) => b.endedAt - a.endedAt);
    rates.retain(new Set(running.map((view) => view.key)));
    return { takenAt: nowEpoch, jobs: [...running, ...finished.map((entry) => entry.view)] };
  }

  function runningJobs(): { kind: "monitor" | "shell"; title: string; elapsedMs: number }[] {
    const nowEpoch = now();
    const jobs: { kind: "monitor" | "shell"; title: string; elapsedMs: number; at: number }[] = [];
    for (const record of sources.monitors()?.active() ?? []) {
      jobs.push({ kind: "monitor", title: record.description, elapsedMs: nowEpoch - record.job.requestedAtEpoch, at: record.job.requestedAtEpoch });
    }
    for (const session of shellSessions()) {
      if (session.handle.phase() === "ended") continue;
      jobs.push({ kind: "shell", title: session.cmd, elapsedMs: nowEpoch - session.startedEpochMs, at: session.startedEpochMs });
    }
    return jobs.sort((a, b) => a.at - b.at).map(({ kind, title, elapsedMs }) => ({ kind, title, elapsedMs: Math.max(0, elapsedMs) }));
  }

  async function stop(key: string): Promise<string> {
    const [kind, id] = [key.slice(0, key.indexOf(":")), key.slice(key.indexOf(":") + 1)];
    if (kind === "monitor") {
      const monitors = sources.monitors();
      if (monitors === null || !monitors.active().some((record) => record.monitorId === id)) return `${id} is not running`;
      await monitors.stop(id);
      return `stopped ${id}`;
    }
    const shell = sources.shell();
    const session = shell?.state.registry.get(Number(id));
    if (shell === null || shell === undefined || session === undefined || session.handle.phase() === "ended") return `shell job ${id} is not running`;
    const answer = await shell.kill({ session_id: Number(id) }, { toolCallId: "monitor-console", cwd: session.cwd });
    return answer.killed ? `stopped shell job ${id}` : `shell job ${id}: ${answer.message}`;
  }

  async function stopAll(): Promise<string> {
    const keys = build().jobs.filter((job) => job.running).map((job) => job.key);
    if (keys.length === 0) return "no job is running";
    const answers = await Promise.all(keys.map((key) => stop(key).catch((error: unknown) => `${key}: ${(error as Error).message}`)));
    const failed = answers.filter((answer) => !answer.startsWith("stopped"));
    return failed.length === 0 ? `stopped ${keys.length} job${keys.length === 1 ? "" : "s"}` : failed.join("; ");
  }

  return { build, running: runningJobs, stop, stopAll };
}
