/**
 * The monitors of one Pi process: starting them on the job runtime, stopping them and keeping the recent history.
 * A terminal result reaches the model exactly once, either as the tool call's own result (direct), or later as one
 * steering custom message that wakes the agent (asynchronous): an asynchronous result is handed to the delivery's
 * ledger (host/delivery/ledger.ts), which keeps it until it is sent, collected by wait_jobs, or suppressed.
 *
 * The service outlives an extension instance across /reload: it is parked with the runtime, and the new instance
 * binds itself as the host (its runtime, and the delivery that sends what fell due). The ledger is parked with it, so
 * a monitor started before /reload is delivered after it.
 *
 * An asynchronous monitor whose tree the watchdog finds running away (README "Resource limits and the watchdog") also
 * wakes the agent once per episode, through the same ledger: nobody reads a monitor while it runs, so nothing else
 * would tell the model before its report. The watchdog never stops it.
 */
import { NO_HIT } from "../../mailbox/constants.ts";
import type { ActorResult } from "../../mailbox/result.ts";
import type { MonitorOutcome } from "../../mailbox/monitor.ts";
import type { JobEnded, JobHandle, JobRuntime, StopRequester } from "../runtime/api.ts";
import { buildReport, structuredResult, type TerminalFacts } from "./report.ts";
import { withoutMatched } from "../evidence-text.ts";
import { readWatchdog } from "../config.ts";
import { runawayFigures, usageFields } from "../runtime/usage-line.ts";
import type { ResultLedger } from "../delivery/ledger.ts";
import { monitorWatchdogText } from "../delivery/wake-text.ts";
import type { NormalizedStart } from "./schemas.ts";

/** Finished monitors kept for /monitor and for monitor_stop's "already finished" answer. */
export const HISTORY_LIMIT = 20;
/** A stop of the group: SIGTERM, then SIGKILL after this grace (monitor spec). */
export const MONITOR_KILL_GRACE_MS = 1000;
/** Log quota of one monitor: the log is evidence, so a full one is marked truncated but the run goes on. */
export const MONITOR_LOG_BYTES = 16 * 1024 * 1024;

/** What the current extension instance lends the service: the job runtime, and the delivery that sends what fell due. */
export interface MonitorHost {
  runtime(): JobRuntime;
  /** A result or a watchdog wake fell due in the ledger: the delivery schedules it. */
  due(): void;
}

export interface FinalReport {
  facts: TerminalFacts;
  /** The tool call's own result text. */
  report: string;
  /** The wake message text (always the full report: an asynchronous reply has no tool call to correlate with). */
  asyncReport: string;
}

export interface MonitorRecord {
  readonly monitorId: string;
  readonly description: string;
  readonly request: NormalizedStart;
  readonly job: JobHandle;
  /**
   * How the terminal result reaches the model. A monitor someone stopped (its job's state names who) delivers
   * nothing asynchronously: its result is kept in history only.
   */
  readonly delivery: "direct" | "async";
  /** The terminal result once known: built when the job ends, from its result. */
  final: FinalReport | null;
  /** The Pi session it was started in (ResultLedger.piSession): its wake says if that was an earlier one. */
  readonly piSession: number;
}

export interface MonitorService {
  /** Starts a monitor on the bound host's runtime; throws when no session is bound or the runtime refuses. */
  start(request: NormalizedStart, options: { cwd: string; delivery: "direct" | "async" }): MonitorRecord;
  /** Waits for the terminal result of a monitor (resolves exactly once per record, never rejects). */
  settle(record: MonitorRecord): Promise<FinalReport>;
  /**
   * Stops one monitor, or all active ones, on behalf of `by` (a tool unless given); stopped monitors deliver nothing.
   * Resolves with how many were running.
   */
  stop(monitorId: string | null, by?: StopRequester): Promise<number>;
  active(): MonitorRecord[];
  /** Finished monitors, oldest first, at most HISTORY_LIMIT. */
  history(): MonitorRecord[];
  /** Binds the current extension instance (or none, between sessions). */
  bind(host: MonitorHost | null): void;
  /** The monitor with this id, active or in history. */
  find(monitorId: string): MonitorRecord | undefined;
}

/** `ledger` keeps the asynchronous results (and watchdog wakes) until they reach the model. */
export function createMonitorService(ledger: ResultLedger): MonitorService {
  const records = new Map<string, MonitorRecord>();
  const settled = new Map<string, Promise<FinalReport>>();
  const finished: MonitorRecord[] = [];
  let host: MonitorHost | null = null;

  /** A running asynchronous monitor ran away: one metadata-only wake, unless it has ended or is being stopped. */
  function warnRunaway(record: MonitorRecord, figures: string): void {
    if (record.final !== null || record.job.state().stopBy !== null) return;
    const content = monitorWatchdogText(record.monitorId, record.description, figures);
    ledger.stuck({ kind: "monitor", watchdog: { kind: "watchdog", content, details: { description: record.description, monitorId: record.monitorId, figures } } }, performance.now());
    host?.due();
  }

  /** Runs as the job's state changes to ended (JobHandle.onEnd): no stop can find the record active after that. */
  function onEnded(record: MonitorRecord, ended: JobEnded): FinalReport {
    const { result } = ended;
    const outcome = result.monitor ?? supervisorOutcome(record.request, result);
    const evidence = withoutMatched(result.evidence, outcome.matched);
    const facts: TerminalFacts = {
      monitorId: record.monitorId,
      description: record.description,
      outcome,
      elapsedMs: result.elapsedMs,
      timeoutMs: record.request.timeoutMs,
      startedAt: result.startedAt,
      completedAt: Date.now(),
      ...(result.limit !== undefined ? { limit: result.limit } : {}),
      evidence,
    };
    const base = {
      monitorId: record.monitorId,
      description: record.description,
      outcome,
      elapsedMs: result.elapsedMs,
      timeoutMs: record.request.timeoutMs,
      compact: record.request.compact,
      expected: record.request.resultPattern,
      limit: result.limit ?? null,
      evidence,
      logPath: result.log.path,
    };
    const final: FinalReport = {
      facts,
      report: buildReport({ ...base, direct: true }),
      asyncReport: buildReport({ ...base, direct: false }),
    };
    record.final = final;
    records.delete(record.monitorId);
    finished.push(record);
    if (finished.length > HISTORY_LIMIT) {
      const evicted = finished.shift() as MonitorRecord;
      settled.delete(evicted.monitorId);
      ledger.forget(evicted.monitorId);
    }
    if (record.delivery === "async") {
      // Owed once: its wake, unless a wait_jobs call that waits on it reports it; a stopped one delivers nothing.
      const report = { kind: "report" as const, content: final.asyncReport, details: { description: record.description, monitorId: record.monitorId, result: structuredResult(facts).result } };
      ledger.completed({ kind: "monitor", report, piSession: record.piSession }, true, performance.now());
      if (ended.stopBy !== null) ledger.suppress(record.monitorId);
      host?.due();
    }
    return final;
  }

  return {
    start(request, options) {
      if (host === null) throw new Error("monitor_start: no live session to run a monitor in");
      const setting = readWatchdog(process.env);
      if (!setting.ok) throw new Error(`monitor_start: ${setting.error}`);
      const watch = {
        ready: null,
        stallMs: request.stallMs,
        ...(request.limits !== null ? { limits: request.limits } : {}),
        ...(setting.spec !== null ? { watchdog: setting.spec } : {}),
      };
      const job = host.runtime().start({
        kind: "monitor",
        command: request.command,
        cwd: options.cwd,
        io: { kind: "pipes", stdin: false },
        timeoutMs: request.timeoutMs,
        killGraceMs: MONITOR_KILL_GRACE_MS,
        log: { maxBytes: MONITOR_LOG_BYTES, onQuota: "truncate" },
        contract: {
          resultPattern: request.resultPattern,
          failurePattern: request.failurePattern,
          completion: request.completion,
        },
        label: request.description,
        ...(request.stallMs !== null || request.limits !== null || setting.spec !== null ? { watch } : {}),
      });
      // The runtime's id: the model, the console and the log file name the monitor alike.
      const record: MonitorRecord = {
        monitorId: job.id,
        description: request.description,
        request,
        job,
        delivery: options.delivery,
        final: null,
        piSession: ledger.piSession,
      };
      records.set(record.monitorId, record);
      if (record.delivery === "async" && setting.spec !== null) {
        const watchdog = setting.spec;
        job.onNotice((notice) => {
          if (notice.kind === "runaway") warnRunaway(record, runawayFigures(usageFields(job.figures().usage), watchdog, notice.detail));
        });
      }
      settled.set(record.monitorId, new Promise((resolve) => job.onEnd((ended) => resolve(onEnded(record, ended)))));
      return record;
    },
    settle(record) {
      const known = settled.get(record.monitorId);
      if (known !== undefined) return known;
      // Evicted from history: its final report is still on the record.
      return record.final !== null ? Promise.resolve(record.final) : record.job.done.then(() => record.final as FinalReport);
    },
    async stop(monitorId, by = "tool") {
      const targets = monitorId === null ? [...records.values()] : [records.get(monitorId)].filter((r) => r !== undefined);
      await Promise.all(targets.map((record) => record.job.stop("SIGTERM", { by })));
      // Stopped monitors are in history once stop() resolves.
      await Promise.all(targets.map((record) => settled.get(record.monitorId)));
      return targets.length;
    },
    active: () => [...records.values()],
    history: () => [...finished],
    bind(next) {
      host = next;
    },
    find: (monitorId) => records.get(monitorId) ?? finished.find((record) => record.monitorId === monitorId),
  };
}

/**
 * The outcome of a monitor whose actor did not report one: a failure of the supervisor's, or a stop that cancelled
 * the monitor before its process existed (then there was nothing to match, and it is simply stopped).
 */
function supervisorOutcome(request: NormalizedStart, result: ActorResult): MonitorOutcome {
  return {
    status: result.cause === "stopped" ? "stopped" : "failure",
    completion: request.completion,
    stoppedBy: null,
    ...NO_HIT,
    captures: {},
    exitCode: result.exitCode,
    signal: result.signal,
    reason: result.cause,
    output: result.message ? [{ source: "stderr", text: result.message, count: 1, clipped: false }] : [],
    outputTruncated: false,
  };
}
