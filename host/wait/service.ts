/**
 * wait_jobs: one call waits for many jobs, monitors and shell jobs alike, and collects each result exactly once. It
 * keeps no bookkeeping of its own: while it waits it claims its jobs in the delivery's ledger (host/delivery/ledger.ts),
 * the one exactly-once machine of every kind of job, so a wake that falls due meanwhile is held for it; what it
 * reports it collects there (a shell job with the read that reports its end, a monitor's result before it is sent),
 * and what it does not report it releases, to be woken about as before.
 */
import type { CallContext } from "../shell/service.ts";
import type { ShellService } from "../shell/service.ts";
import { statusOf } from "../shell/supervision.ts";
import type { MonitorService } from "../monitor/service.ts";
import type { ResultLedger } from "../delivery/ledger.ts";
import { collectedShellLine, monitorLine, monitorVerdict, shellStatusLine, shellVerdict, summaryOf } from "./lines.ts";
import type { Verdict, WaitEndReason, WaitJobLine, WaitJobsResult } from "./result.ts";
import { jobOf, monitorFacts, resolveEntries, type Entry, type Target } from "./targets.ts";
import { conditionMet } from "./until.ts";
import { validateWaitJobs, WAIT_JOBS } from "./validate.ts";
import { waitUntil } from "./wait-until.ts";
import { ToolError } from "../tools/checked.ts";

/** Room past a job's deadline for its stop (the kill grace) and its report, on a busy machine too. */
export const LIFETIME_SLACK_MS = 10_000;

export interface WaitServiceOptions {
  shell: () => ShellService;
  monitors: () => MonitorService;
  ledger: () => ResultLedger;
  /** Released results may be due again: the delivery schedules them. */
  due: () => void;
}

function verdictOf(target: Target): Verdict {
  if (target.kind === "monitor") return monitorVerdict(target.record.final?.facts.outcome.status ?? null);
  const state = target.session.handle.state();
  return shellVerdict({ status: statusOf(state, target.session.timeoutMs), exit_code: state.phase === "ended" ? state.result.exitCode : null });
}

/** The longest a target may still run: its hard lifetime's remainder (the whole of it before its process exists). */
function lifetimeLeftMs(target: Target, now: number): number {
  const job = jobOf(target);
  if (job.phase() === "ended") return 0;
  const deadline = job.deadline();
  const lifetime = target.kind === "shell" ? target.session.timeoutMs : target.record.request.timeoutMs;
  return (deadline !== null ? Math.max(0, deadline - now) : lifetime) + LIFETIME_SLACK_MS;
}

export class WaitService {
  private readonly options: WaitServiceOptions;

  constructor(options: WaitServiceOptions) {
    this.options = options;
  }

  async wait(raw: unknown, call: CallContext): Promise<WaitJobsResult> {
    const checked = validateWaitJobs(raw);
    if (!checked.ok) throw new ToolError(checked.error);
    const request = checked.value;
    if (call.signal?.aborted) throw new ToolError(`${WAIT_JOBS}: the call was cancelled before it waited; nothing was collected`);
    const shell = this.options.shell();
    const monitors = this.options.monitors();
    const ledger = this.options.ledger();
    const resolved = resolveEntries(request.ids, shell, monitors, ledger, Date.now());
    if (!resolved.ok) throw new ToolError(resolved.error);
    const entries = resolved.value;
    const targets = entries.flatMap((e) => (e.kind === "target" ? [e.target] : []));

    const startedAt = performance.now();
    const waitMs = Math.min(request.timeoutMs, Math.max(0, ...targets.map((t) => lifetimeLeftMs(t, startedAt))));
    for (const target of targets) ledger.claim(target.name);
    try {
      const reason = await waitUntil({
        jobs: targets.map(jobOf),
        check: () => conditionMet(request.until, targets.map(verdictOf)),
        waitMs,
        signal: call.signal,
        steering: shell.steering(),
      });
      const lines = await this.lines(entries, reason, shell, ledger, call);
      return {
        operation: "wait_jobs",
        until: request.until,
        wait_status: reason,
        waited_ms: Math.round(performance.now() - startedAt),
        jobs: lines,
        running: lines.filter((l) => l.verdict === "running").map((l) => l.id),
        summary: summaryOf(lines),
      };
    } finally {
      // Collected ones are consumed already; the rest keep their own wake settings, their batching window from now.
      for (const target of targets) ledger.release(target.name, performance.now());
      this.options.due();
    }
  }

  /** Each entry's line, in the order named; the ended targets are collected, unless the call was cancelled. */
  private async lines(entries: readonly Entry[], reason: WaitEndReason, shell: ShellService, ledger: ResultLedger, call: CallContext): Promise<WaitJobLine[]> {
    // A cancelled call's answer may never reach the model: it collects nothing, so nothing is lost.
    const collect = reason !== "cancelled";
    return await Promise.all(
      entries.map(async (entry): Promise<WaitJobLine> => {
        if (entry.kind === "settled") return entry.line;
        const target = entry.target;
        const ended = verdictOf(target) !== "running";
        if (target.kind === "shell") {
          const { session } = target;
          if (ended && collect) {
            // A shell wake says only how the job ended: its output is this call's to show, and the line says it woke.
            const { answer, collection } = await shell.collectEnded(session, call);
            const state = session.handle.state();
            const line = collectedShellLine(session.id, answer, state.phase === "ended" ? state.result : null);
            return collection === "wake" ? { ...line, collected: "wake" } : line;
          }
          return shellStatusLine(shell.view(session, Date.now()), "not_yet");
        }
        const facts = monitorFacts(target.record, Date.now());
        if (!ended || !collect) return monitorLine(facts, "not_yet");
        const got = ledger.collect(target.name, null);
        if (got === "unknown") throw new Error(`${target.name} ended without a result in the ledger`);
        return monitorLine(facts, got);
      }),
    );
  }
}
