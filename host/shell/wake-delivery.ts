/**
 * Sends the wake batches the ledger decides on. The only timer of the wake path: it fires when the ledger says a
 * batch is due. A submission that throws (an error we can observe) is kept and retried at the next tool boundary or
 * agent_settled; a submission that returned is never resent — there is no guessed acknowledgement timeout.
 */
import { wakeMessage } from "./notices.ts";
import { endReported } from "./persist-release.ts";
import type { ShellState } from "./state.ts";
import type { CompletionInfo, StuckAlert } from "./wake-ledger.ts";

/** Hands one wake to Pi; `wake` is its number (WakeLedger.nextWake), which its message must carry. */
export type WakeSender = (batch: readonly CompletionInfo[], message: ReturnType<typeof wakeMessage>, alerts: readonly StuckAlert[], wake: number) => void;

export class WakeScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private active = false;
  private readonly state: () => ShellState;
  private readonly send: WakeSender;
  /** Errors of refused submissions, newest last (bounded), for diagnostics and tests. */
  readonly failures: string[] = [];

  constructor(state: () => ShellState, send: WakeSender) {
    this.state = state;
    this.send = send;
  }

  /** Deliveries may happen (between session_start and session_shutdown). */
  start(): void {
    this.active = true;
    this.schedule();
  }

  stop(): void {
    this.active = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Re-reads when the next batch is due and arms the timer for it. */
  schedule(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (!this.active) return;
    const due = this.state().ledger.dueAt();
    if (due === null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, Math.max(0, due - performance.now()));
    // A pending wake must not keep a finished Pi process alive.
    this.timer.unref();
  }

  /** A tool boundary or agent_settled: retry a refused batch, and send one that is due. */
  boundary(): void {
    this.state().ledger.boundary();
    this.flush();
  }

  flush(): void {
    if (!this.active) return;
    const ledger = this.state().ledger;
    const now = performance.now();
    const batch = ledger.takeBatch(now);
    // An episode that output ended while its wake waited for the batch owes nothing any more.
    const alerts = ledger.takeAlerts(now).filter((alert) => {
      const handle = this.state().registry.get(alert.sessionId)?.handle;
      const figures = handle?.figures();
      // A runaway the model read since it was heard of has been seen with its figures: it owes no wake.
      const unread = (handle?.lastReadAt() ?? Number.NEGATIVE_INFINITY) < (alert.runaway?.noticedAt ?? Number.POSITIVE_INFINITY);
      const still = alert.kind === "stalled" ? figures?.stalled : alert.kind === "runaway" ? figures?.runaway && unread : figures?.waitingForInput;
      if (!still) ledger.unstuck(alert.sessionId);
      return still === true;
    });
    if (batch.length > 0 || alerts.length > 0) {
      try {
        const wake = ledger.nextWake();
        this.send(batch, wakeMessage(batch, alerts, this.state().piSession), alerts, wake);
        ledger.submitted(batch.map((c) => c.sessionId), wake);
        ledger.alertsSubmitted(alerts.map((a) => a.sessionId));
      } catch (error) {
        ledger.submissionFailed();
        this.failures.push((error as Error)?.message ?? String(error));
        if (this.failures.length > 16) this.failures.shift();
      }
    }
    this.schedule();
  }
}

/** Wake `wake`'s message reached the conversation (its message ended): the ends it showed have been reported. */
export function wakeDelivered(state: ShellState, wake: number, shown: readonly number[]): void {
  for (const id of state.ledger.delivered(wake, shown)) {
    const session = state.registry.get(id);
    if (session !== undefined) endReported(session);
  }
}
