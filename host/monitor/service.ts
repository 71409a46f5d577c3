/**
 * The monitors of one Pi process: starting them on the job runtime, stopping them, keeping the recent history,
 * and delivering each terminal result exactly once — either as the tool call's own result (direct), or later as
 * one steering custom message that wakes the agent (asynchronous).
 *
 * The service outlives an extension instance across /reload: it is parked with the runtime, and the new instance
 * binds itself as the host (its `deliver` and its runtime). Between the two, terminal results wait in an outbox,
 * so a monitor started before /reload is delivered after it.
 *
 * An asynchronous monitor whose tree the watchdog finds running away (README "Resource limits and the watchdog") also
 * wakes the agent once per episode, through the same outbox: nobody reads a monitor while it runs, so nothing else
 * would tell the model before its report. The watchdog never stops it.
 */
import { NO_HIT } from "../../mailbox/constants.ts";
import type { ActorResult } from "../../mailbox/result.ts";
import type { MonitorOutcome } from "../../mailbox/monitor.ts";
import type { JobEnded, JobHandle, JobRuntime, StopRequester } from "../runtime/api.ts";
import { buildReport, markEarlierSession, structuredResult, type TerminalFacts } from "./report.ts";
import { withoutMatched } from "../evidence-text.ts";
import { readWatchdog } from "../config.ts";
import { runawayFigures, usageFields } from "../runtime/usage-line.ts";
import { escapeText } from "../safety/escape.ts";
import type { MonitorTerminalResult, NormalizedStart } from "./schemas.ts";

/** Finished monitors kept for /monitor and for monitor_stop's "already finished" answer. */
export const HISTORY_LIMIT = 20;
/** A stop of the group: SIGTERM, then SIGKILL after this grace (monitor spec). */
export const MONITOR_KILL_GRACE_MS = 1000;
/** Log quota of one monitor: the log is evidence, so a full one is marked truncated but the run goes on. */
export const MONITOR_LOG_BYTES = 16 * 1024 * 1024;

export const MONITOR_MESSAGE_TYPE = "pi-jobs.monitor";
/** The watchdog's wake for a running monitor: metadata only. */
export const MONITOR_WATCHDOG_TYPE = "pi-jobs.monitor-watchdog";

export interface MonitorDetails {
  description: string;
  monitorId: string;
  result: MonitorTerminalResult;
}

/** What a watchdog wake carries for the transcript: which monitor, and its figures against the thresholds. */
export interface WatchdogDetails {
  description: string;
  monitorId: string;
  figures: string;
}

/** One message for the model: a monitor's terminal report, or a watchdog wake about a running one. */
export type Delivery = { kind: "report"; content: string; details: MonitorDetails } | { kind: "watchdog"; content: string; details: WatchdogDetails };

/** What the current extension instance lends the service: a way to reach the model, and the job runtime. */
export interface MonitorHost {
  /** Hands one terminal report to Pi; throws when Pi cannot take it now (it is retried later). */
  deliver(delivery: Delivery): void;
  runtime(): JobRuntime;
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
  /** Where the terminal result stands on its way to the model. */
  due: ResultDue;
  /** How many wait_jobs calls wait on it now: while any does, an asynchronous result is held for them. */
  claims: number;
  /** The Pi session it was started in (MonitorService.newSession counts them): its wake says if that was an earlier one. */
  readonly piSession: number;
}

/**
 * An asynchronous monitor's result on its way to the model, reported exactly once: by its wake (`queued` in the
 * outbox, then `delivered`) or by a wait_jobs call (`held` while the call waits, then `collected`). A direct
 * monitor's result is its own call's (`own_call`); a stopped one delivers nothing (`none`).
 */
export type ResultDue = "own_call" | "pending" | "held" | "queued" | "delivered" | "collected" | "none";

/** What collect() found: the result is now the caller's, or where it already went (or that it goes nowhere). */
export type Collection = "now" | "delivered" | "collected" | "own_call" | "none";

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
  /** Binds the current extension instance (or none, between sessions) and sends anything that waited for one. */
  bind(host: MonitorHost | null): void;
  /** Deliveries that could not be handed to Pi yet. */
  pendingDeliveries(): number;
  /** Retries deliveries that failed (called at tool boundaries and agent_settled). */
  flush(): void;
  /** The monitor with this id, active or in history. */
  find(monitorId: string): MonitorRecord | undefined;
  /** A wait_jobs call waits on the monitor: an asynchronous result that arrives meanwhile is held for it. */
  claim(record: MonitorRecord): void;
  /** The call stopped waiting without collecting: a result held for it goes out as its wake now. */
  release(record: MonitorRecord): void;
  /** Takes an ended monitor's result for wait_jobs: withdrawn from the outbox if queued, never delivered after. */
  collect(record: MonitorRecord): Collection;
  /** A session switch (/new, /resume, /fork) carried the monitors on: the wakes of those started before it say so. */
  newSession(): void;
}

export function createMonitorService(): MonitorService {
  const records = new Map<string, MonitorRecord>();
  const settled = new Map<string, Promise<FinalReport>>();
  const finished: MonitorRecord[] = [];
  const outbox: { record: MonitorRecord; delivery: Delivery }[] = [];
  let host: MonitorHost | null = null;
  let piSession = 0;

  function flush(): void {
    while (host !== null && outbox.length > 0) {
      const next = outbox[0] as { record: MonitorRecord; delivery: Delivery };
      try {
        // Decided when it goes out: a report due before the switch is delivered in the session after it.
        const earlier = next.delivery.kind === "report" && next.record.piSession < piSession;
        host.deliver(earlier ? { ...next.delivery, content: markEarlierSession(next.delivery.content) } : next.delivery);
      } catch {
        // Pi could not take it now (e.g. between sessions); it stays first in line for the next boundary.
        return;
      }
      outbox.shift();
      if (next.delivery.kind === "report") next.record.due = "delivered";
    }
  }

  function enqueue(record: MonitorRecord): void {
    const final = record.final as FinalReport;
    record.due = "queued";
    outbox.push({
      record,
      delivery: {
        kind: "report",
        content: final.asyncReport,
        details: { description: record.description, monitorId: record.monitorId, result: structuredResult(final.facts).result },
      },
    });
    flush();
  }

  /** A running asynchronous monitor ran away: one metadata-only wake, unless it has ended or is being stopped. */
  function warnRunaway(record: MonitorRecord, figures: string): void {
    if (record.final !== null || record.job.state().stopBy !== null) return;
    const content = [
      `[monitor] ${record.monitorId} (${escapeText(record.description)}) uses ${figures}.`,
      `It keeps running (the watchdog never stops a job) and its report still comes when it ends; monitor_stop {"monitor_id":"${record.monitorId}"} stops it if it ran away.`,
    ].join("\n");
    outbox.push({ record, delivery: { kind: "watchdog", content, details: { description: record.description, monitorId: record.monitorId, figures } } });
    flush();
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
    if (finished.length > HISTORY_LIMIT) settled.delete((finished.shift() as MonitorRecord).monitorId);
    if (record.delivery === "async") {
      // A wait_jobs call that waits on it reports it (or releases it to the outbox); a stopped one delivers nothing.
      if (ended.stopBy !== null) record.due = "none";
      else if (record.claims > 0) record.due = "held";
      else enqueue(record);
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
        due: options.delivery === "async" ? "pending" : "own_call",
        claims: 0,
        piSession,
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
      flush();
    },
    pendingDeliveries: () => outbox.length,
    flush,
    find: (monitorId) => records.get(monitorId) ?? finished.find((record) => record.monitorId === monitorId),
    claim(record) {
      record.claims += 1;
    },
    release(record) {
      record.claims = Math.max(0, record.claims - 1);
      if (record.claims === 0 && record.due === "held") enqueue(record);
    },
    newSession() {
      piSession += 1;
    },
    collect(record) {
      switch (record.due) {
        case "held":
        case "queued": {
          // A queued wake not yet handed to Pi is withdrawn: this collection is the one report.
          const queued = outbox.findIndex((entry) => entry.record === record && entry.delivery.kind === "report");
          if (queued !== -1) outbox.splice(queued, 1);
          record.due = "collected";
          return "now";
        }
        case "delivered":
        case "collected":
        case "own_call":
        case "none":
          return record.due;
        case "pending":
          throw new Error(`monitor ${record.monitorId} has not ended: nothing to collect`);
      }
    },
  };
}

/** The outcome when the actor could not produce one (it crashed or hung): a failure that says why. */
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
