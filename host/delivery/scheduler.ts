/**
 * Sends what the ledger (host/delivery/ledger.ts) says is due: one wake for the shell ends and alerts that fell due
 * together, and each monitor's message on its own. The only timer of delivery: it fires when the ledger says a message
 * is due. A submission that throws (an error we can observe, e.g. Pi between sessions) is kept and retried at the next
 * tool boundary, agent_settled or session start; a submission that returned is never resent — there is no guessed
 * acknowledgement timeout.
 */
import { markEarlierSession } from "../monitor/report.ts";
import type { ResultLedger } from "./ledger.ts";
import { shellJobName, type CompletionInfo, type MonitorMessage, type StuckAlert } from "./results.ts";
import { wakeMessage } from "./wake-text.ts";

/** Hands one shell wake to Pi; `wake` is its number (ResultLedger.nextWake), which its message's details must carry. */
export type ShellWakeSender = (batch: readonly CompletionInfo[], message: ReturnType<typeof wakeMessage>, alerts: readonly StuckAlert[], wake: number) => void;

/** Hands one monitor's message (its report, or a watchdog wake) to Pi. */
export type MonitorSender = (message: MonitorMessage) => void;

export interface SchedulerOptions {
  ledger: () => ResultLedger;
  shellWake: ShellWakeSender;
  monitor: MonitorSender;
  /** Whether a shell job's alert still holds when its wake goes out (an episode that output ended owes nothing). */
  stillStuck: (alert: StuckAlert) => boolean;
}

export class DeliveryScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private active = false;
  private readonly options: SchedulerOptions;
  /** Errors of refused submissions, newest last (bounded), for diagnostics and tests. */
  readonly failures: string[] = [];

  constructor(options: SchedulerOptions) {
    this.options = options;
  }

  /** Deliveries may happen (between session_start and session_shutdown); a message refused before may go now. */
  start(): void {
    this.active = true;
    this.options.ledger().boundary();
    this.schedule();
  }

  stop(): void {
    this.active = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Re-reads when the next message is due and arms the timer for it. */
  schedule(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (!this.active) return;
    const due = this.options.ledger().dueAt();
    if (due === null) return;
    // Due already (a monitor's report, a release): sent now, as the event that made it due happens, not a turn later.
    if (due <= performance.now()) return this.flush();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, Math.max(0, due - performance.now()));
    // A pending wake must not keep a finished Pi process alive.
    this.timer.unref();
  }

  /** A tool boundary or agent_settled: retry a refused message, and send what is due. */
  boundary(): void {
    this.options.ledger().boundary();
    this.flush();
  }

  flush(): void {
    if (!this.active) return;
    const ledger = this.options.ledger();
    const due = ledger.take(performance.now());
    const alerts = due.alerts.filter((alert) => {
      const still = this.options.stillStuck(alert);
      if (!still) ledger.unstuck(shellJobName(alert.sessionId));
      return still;
    });
    try {
      if (due.completions.length > 0 || alerts.length > 0) {
        const wake = ledger.nextWake();
        this.options.shellWake(due.completions, wakeMessage(due.completions, alerts, ledger.piSession), alerts, wake);
        ledger.submitted(due.completions.map((c) => shellJobName(c.sessionId)), wake);
        ledger.alertsSubmitted(alerts.map((a) => shellJobName(a.sessionId)));
      }
      for (const { name, message, piSession } of due.monitors) {
        const wake = ledger.nextWake();
        // Decided when it goes out: a report due before a session switch is delivered in the session after it.
        const earlier = piSession !== null && piSession < ledger.piSession;
        this.options.monitor(earlier ? { ...message, content: markEarlierSession(message.content) } : message);
        if (message.kind === "report") ledger.submitted([name], wake);
        else ledger.alertsSubmitted([name]);
      }
    } catch (error) {
      ledger.submissionFailed();
      this.failures.push((error as Error)?.message ?? String(error));
      if (this.failures.length > 16) this.failures.shift();
    }
    this.schedule();
  }
}
