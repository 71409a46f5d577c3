/**
 * The monitors of one Pi process: starting them on the job runtime, stopping them, keeping the recent history,
 * and delivering each terminal result exactly once — either as the tool call's own result (direct), or later as
 * one steering custom message that wakes the agent (asynchronous). The service outlives an extension instance
 * across /reload: it is parked with the runtime, and the new instance rebinds `deliver`.
 */
import { performance } from "node:perf_hooks";
import type { ActorResult } from "../../mailbox/protocol.ts";
import type { MonitorOutcome } from "../../mailbox/monitor.ts";
import type { JobHandle, JobRuntime } from "../runtime-api.ts";
import { buildReport, structuredResult, type TerminalFacts } from "./report.ts";
import type { MonitorTerminalResult, NormalizedStart } from "./schemas.ts";

/** Finished monitors kept for /monitor and later inspection. */
export const HISTORY_LIMIT = 20;
/** A stop of the group: SIGTERM, then SIGKILL after this grace (monitor spec). */
export const MONITOR_KILL_GRACE_MS = 1000;
/** Log quota of one monitor: the log is evidence, so a full one is marked truncated but the run goes on. */
export const MONITOR_LOG_BYTES = 16 * 1024 * 1024;

export const MONITOR_MESSAGE_TYPE = "pi-jobs.monitor";

export interface MonitorDetails {
  description: string;
  monitorId: string;
  result: MonitorTerminalResult;
}

export interface Delivery {
  content: string;
  details: MonitorDetails;
}

export interface MonitorRecord {
  monitorId: string;
  description: string;
  request: NormalizedStart;
  startedAt: number;
  job: JobHandle;
  /** How the terminal result reaches the model. */
  delivery: "direct" | "async";
  /** Set by monitor_stop: the result is kept in history but never delivered. */
  suppressed: boolean;
  /** The terminal result once known. */
  final: { facts: TerminalFacts; report: string; asyncReport: string } | null;
}

export interface MonitorService {
  start(request: NormalizedStart, options: { cwd: string; delivery: "direct" | "async" }): MonitorRecord;
  /** Waits for the terminal result of a direct monitor. */
  settle(record: MonitorRecord): Promise<NonNullable<MonitorRecord["final"]>>;
  /** Stops one monitor, or all active ones; stopped monitors deliver nothing. Returns how many were running. */
  stop(monitorId: string | null): Promise<number>;
  active(): MonitorRecord[];
  history(): MonitorRecord[];
  /** Rebinds delivery to the current extension instance and sends anything that waited for one. */
  bind(deliver: ((delivery: Delivery) => void) | null): void;
  /** Deliveries that could not be handed to Pi yet. */
  pendingDeliveries(): number;
  /** Retries deliveries that failed (called at tool boundaries and agent_settled). */
  flush(): void;
}

export function createMonitorService(runtime: () => JobRuntime): MonitorService {
  const records = new Map<string, MonitorRecord>();
  const finished: MonitorRecord[] = [];
  const outbox: Delivery[] = [];
  let deliver: ((delivery: Delivery) => void) | null = null;
  let counter = 0;

  function flush(): void {
    while (deliver && outbox.length > 0) {
      const next = outbox[0]!;
      try {
        deliver(next);
      } catch {
        // Pi could not take it now (e.g. between sessions); it stays first in line for the next boundary.
        return;
      }
      outbox.shift();
    }
  }

  function onEnded(record: MonitorRecord, result: ActorResult): void {
    const completedAt = Date.now();
    const outcome = result.monitor ?? supervisorOutcome(record.request, result);
    const facts: TerminalFacts = {
      monitorId: record.monitorId,
      description: record.description,
      outcome,
      elapsedMs: result.elapsedMs,
      timeoutMs: record.request.timeoutMs,
      startedAt: result.startedAt,
      completedAt,
    };
    const base = {
      monitorId: record.monitorId,
      description: record.description,
      outcome,
      elapsedMs: result.elapsedMs,
      timeoutMs: record.request.timeoutMs,
      compact: record.request.compact,
      expected: record.request.resultPattern,
    };
    record.final = {
      facts,
      report: buildReport({ ...base, direct: true }),
      asyncReport: buildReport({ ...base, direct: false }),
    };
    records.delete(record.monitorId);
    finished.push(record);
    if (finished.length > HISTORY_LIMIT) finished.shift();
    if (record.delivery === "async" && !record.suppressed) {
      outbox.push({
        content: record.final.asyncReport,
        details: { description: record.description, monitorId: record.monitorId, result: structuredResult(facts).result },
      });
      flush();
    }
  }

  return {
    start(request, options) {
      counter += 1;
      const monitorId = `monitor_${counter}`;
      const job = runtime().start({
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
      });
      const record: MonitorRecord = {
        monitorId,
        description: request.description,
        request,
        startedAt: performance.now(),
        job,
        delivery: options.delivery,
        suppressed: false,
        final: null,
      };
      records.set(monitorId, record);
      void job.done.then((result) => onEnded(record, result));
      return record;
    },
    async settle(record) {
      await record.job.done;
      // onEnded ran in the same microtask chain that resolved `done` first.
      return record.final!;
    },
    async stop(monitorId) {
      const targets = monitorId === null ? [...records.values()] : [records.get(monitorId)].filter((r) => r !== undefined);
      for (const record of targets) record.suppressed = true;
      await Promise.all(targets.map((record) => record.job.stop()));
      return targets.length;
    },
    active: () => [...records.values()],
    history: () => [...finished],
    bind(next) {
      deliver = next;
      flush();
    },
    pendingDeliveries: () => outbox.length,
    flush,
  };
}

/** The outcome when the actor could not produce one (it crashed or hung): a failure that says why. */
function supervisorOutcome(request: NormalizedStart, result: ActorResult): MonitorOutcome {
  return {
    status: "failure",
    completion: request.completion,
    stoppedBy: null,
    matched: null,
    matchedTruncated: false,
    matchedSource: null,
    captures: {},
    capturesTruncated: false,
    hasResult: false,
    resultParseError: null,
    exitCode: result.exitCode,
    signal: result.signal,
    reason: result.cause,
    output: result.message ? [{ source: "stderr", text: result.message, count: 1, clipped: false }] : [],
    outputTruncated: false,
  };
}
