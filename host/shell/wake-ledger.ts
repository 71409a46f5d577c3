/**
 * The wake-on-exit bookkeeping as a pure state machine: which completions still owe the model a notification,
 * which are held by a running codemode script, which were consumed, suppressed or handed to Pi. No timers and no Pi:
 * the coordinator asks `dueAt()` when to come back and `takeBatch()` what to send. Every completion leaves this
 * machine at most once through `submitted`, `consume` or `suppress` — that is the exactly-once rule. A submitted
 * wake is `delivered` once Pi shows it in the conversation (its message ended): only then has the model been told,
 * which is what a persisted job's entry waits for before it goes (host/shell/persist-release.ts).
 */
import type { Evidence } from "../../mailbox/evidence.ts";
import { WAKE_MAX_DELAY_MS, WAKE_QUIET_MS } from "./limits.ts";

export interface CompletionInfo {
  sessionId: number;
  cmd: string;
  /** The Pi session the job was started in (ShellState.piSession): a wake delivered in a later one says so. */
  piSession: number;
  status: "exited" | "failed" | "timed_out" | "stopped";
  exitCode: number | null;
  signal: string | null;
  failureReason: string | null;
  logPath: string | null;
  logTruncated: boolean;
  elapsedMs: number;
  endedAtEpochMs: number;
  /** What went wrong wherever the job printed it (mailbox/evidence.ts): a wake shows a few blocks of it. */
  evidence: Evidence;
  /** The last lines of its final read, folded (host/last-lines.ts); empty when it printed nothing or was read. */
  lastLines: string;
}

/** A running job that appears stuck: one per episode (output ends an episode; a new one may follow). */
export interface StuckAlert {
  sessionId: number;
  cmd: string;
  kind: "stalled" | "waiting_for_input" | "runaway";
  /** The prompt it shows, for waiting_for_input. */
  prompt: string | null;
  tty: boolean;
  logPath: string | null;
  /**
   * For a runaway (the watchdog's, README "Resource limits and the watchdog"): its figures when the episode was heard
   * of, and when (monotonic ms); a read of the job after that owes no wake.
   */
  runaway?: { figures: string; noticedAt: number };
}

type WakeState =
  /** Eligible for the next batch, since this monotonic time. */
  | { kind: "pending"; since: number }
  /** Observed inside a codemode call that has not finalized yet. */
  | { kind: "held"; outerCallId: string }
  /** Handed to Pi in the wake numbered `wake` (its details say the number). */
  | { kind: "submitted"; wake: number }
  /** That wake's message reached the conversation. */
  | { kind: "delivered" }
  | { kind: "consumed" }
  | { kind: "suppressed" };

interface WakeRecord {
  info: CompletionInfo;
  armed: boolean;
  state: WakeState;
}

export type ArmEffect = "armed" | "disarmed" | "unchanged" | "already_notified";

export interface WakeTiming {
  quietMs: number;
  maxDelayMs: number;
}

export class WakeLedger {
  private readonly records = new Map<number, WakeRecord>();
  /** Stuck alerts not yet handed to Pi, by session; batched with completions. */
  private readonly alerts = new Map<number, { alert: StuckAlert; since: number }>();
  private readonly timing: WakeTiming;
  /** Sessions a wait_jobs call is waiting on, with how many calls wait: their completion is that call's to report. */
  private readonly claims = new Map<number, number>();
  /** After a failed submission nothing is retried until the next tool boundary or agent_settled. */
  private waitingForBoundary = false;
  /** The number of the last wake handed out: each message carries its own, so its delivery names what it carried. */
  private lastWake = 0;

  constructor(timing: WakeTiming = { quietMs: WAKE_QUIET_MS, maxDelayMs: WAKE_MAX_DELAY_MS }) {
    this.timing = timing;
  }

  /**
   * A job ended. An armed completion becomes eligible for the next batch; an unarmed one stays pending unsent, in
   * case set_on_exit arms it before it is collected.
   */
  completed(info: CompletionInfo, armed: boolean, now: number): void {
    // The end says more than a stall of the same job would.
    this.alerts.delete(info.sessionId);
    if (this.records.has(info.sessionId)) return;
    this.records.set(info.sessionId, { info, armed, state: { kind: "pending", since: now } });
  }

  /** A running job began a stuck episode and asked to wake the model about it. */
  stuck(alert: StuckAlert, now: number): void {
    if (this.records.has(alert.sessionId)) return;
    this.alerts.set(alert.sessionId, { alert, since: now });
  }

  /** The episode ended (new output) before its wake went out: nothing is owed any more. */
  unstuck(sessionId: number): void {
    this.alerts.delete(sessionId);
  }

  /** The stuck alerts to send now (with the completions of takeBatch), in session order. */
  takeAlerts(now: number): StuckAlert[] {
    const due = this.dueAt();
    if (due === null || now < due) return [];
    return [...this.alerts.values()].map((a) => a.alert).sort((a, b) => a.sessionId - b.sessionId);
  }

  /** Pi accepted the batch that carried these alerts. */
  alertsSubmitted(sessionIds: readonly number[]): void {
    for (const id of sessionIds) this.alerts.delete(id);
  }

  /** set_on_exit on a job that has already ended (running jobs carry their flag themselves until completion). */
  setArmed(sessionId: number, armed: boolean, now: number): ArmEffect {
    const record = this.records.get(sessionId);
    if (record === undefined) return "unchanged";
    if (record.state.kind === "submitted" || record.state.kind === "delivered") return "already_notified";
    if (record.armed === armed) return "unchanged";
    record.armed = armed;
    if (record.state.kind === "consumed" || record.state.kind === "suppressed") return "unchanged";
    // Arming late starts the batching window now, not at the exit.
    if (armed && record.state.kind === "pending") record.state = { kind: "pending", since: now };
    return armed ? "armed" : "disarmed";
  }

  /** A direct tool result reported the completion: no wake is owed any more. Returns whether one was pending. */
  consume(sessionId: number): boolean {
    const record = this.records.get(sessionId);
    if (record === undefined) return false;
    const owed = this.owes(record);
    if (record.state.kind === "pending" || record.state.kind === "held") record.state = { kind: "consumed" };
    return owed;
  }

  /** An explicit stop: the model asked for the end, so it is not told about it again. */
  suppress(sessionId: number): void {
    this.alerts.delete(sessionId);
    const record = this.records.get(sessionId);
    if (record !== undefined && record.state.kind !== "submitted" && record.state.kind !== "delivered") record.state = { kind: "suppressed" };
  }

  /**
   * A wait_jobs call waits on this session: while claimed, its completion is not sent, because the call will report
   * it (and then consume it) or release it. Counted, so two calls waiting on one job do not free it early.
   */
  claim(sessionId: number): void {
    this.claims.set(sessionId, (this.claims.get(sessionId) ?? 0) + 1);
  }

  /** The wait ended without reporting this session: its wake, if owed, is due again, its batching window from now. */
  release(sessionId: number, now: number): void {
    const left = (this.claims.get(sessionId) ?? 1) - 1;
    if (left > 0) {
      this.claims.set(sessionId, left);
      return;
    }
    this.claims.delete(sessionId);
    const record = this.records.get(sessionId);
    if (record !== undefined && record.state.kind === "pending") record.state = { kind: "pending", since: now };
  }

  /** A codemode script observed the completion; the outcome waits for its outermost call to finalize. */
  hold(sessionId: number, outerCallId: string): void {
    const record = this.records.get(sessionId);
    if (record !== undefined && record.state.kind === "pending") record.state = { kind: "held", outerCallId };
  }

  /**
   * The outermost call finalized. On success its receipt reported the completions, which consumes them; on failure
   * they become eligible for notification again.
   */
  finalize(outerCallId: string, success: boolean, now: number): void {
    for (const record of this.records.values()) {
      if (record.state.kind !== "held" || record.state.outerCallId !== outerCallId) continue;
      record.state = success ? { kind: "consumed" } : { kind: "pending", since: now };
    }
  }

  /** Calls that never finalized (a run ended without their result): release what they held. */
  releaseAllHeld(now: number): void {
    for (const record of this.records.values()) if (record.state.kind === "held") record.state = { kind: "pending", since: now };
  }

  private owes(record: WakeRecord): boolean {
    return record.armed && (record.state.kind === "pending" || record.state.kind === "held");
  }

  private eligible(): { info: CompletionInfo; since: number }[] {
    const out: { info: CompletionInfo; since: number }[] = [];
    for (const record of this.records.values()) {
      if (record.armed && record.state.kind === "pending" && !this.claims.has(record.info.sessionId)) out.push({ info: record.info, since: record.state.since });
    }
    return out;
  }

  /** Session ids whose wake is owed (pending or held). */
  owedSessionIds(): number[] {
    return [...this.records.values()].filter((r) => this.owes(r)).map((r) => r.info.sessionId);
  }

  /** When the next batch should be sent (monotonic ms), or null when nothing is due or a boundary is awaited. */
  dueAt(): number | null {
    if (this.waitingForBoundary) return null;
    const eligible = [...this.eligible().map((e) => e.since), ...[...this.alerts.values()].map((a) => a.since)].map((since) => ({ since }));
    if (eligible.length === 0) return null;
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (const { since } of eligible) {
      first = Math.min(first, since);
      last = Math.max(last, since);
    }
    return Math.min(first + this.timing.maxDelayMs, last + this.timing.quietMs);
  }

  /** The completions to send now, in session order, or an empty list when nothing is due. */
  takeBatch(now: number): CompletionInfo[] {
    const due = this.dueAt();
    if (due === null || now < due) return [];
    return this.eligible()
      .map((r) => r.info)
      .sort((a, b) => a.sessionId - b.sessionId);
  }

  /** The number the next wake message carries in its details. */
  nextWake(): number {
    this.lastWake += 1;
    return this.lastWake;
  }

  /** Pi accepted the batch (sendMessage returned) in wake `wake`: these are done, whatever happens later. */
  submitted(sessionIds: readonly number[], wake: number): void {
    for (const id of sessionIds) {
      const record = this.records.get(id);
      if (record !== undefined && record.state.kind === "pending") record.state = { kind: "submitted", wake };
    }
  }

  /**
   * Wake `wake`'s message reached the conversation showing the completions `shown`: those are delivered. One the
   * message only counted ("… and N more") stays submitted: notified, but its exit code has not reached the model.
   */
  delivered(wake: number, shown: readonly number[]): number[] {
    const ids: number[] = [];
    for (const record of this.records.values()) {
      if (record.state.kind !== "submitted" || record.state.wake !== wake || !shown.includes(record.info.sessionId)) continue;
      record.state = { kind: "delivered" };
      ids.push(record.info.sessionId);
    }
    return ids;
  }

  /** Pi refused the batch with an error we could see: keep it pending and retry at the next boundary. */
  submissionFailed(): void {
    this.waitingForBoundary = true;
  }

  /** A tool boundary or agent_settled: a failed batch may be retried now. */
  boundary(): void {
    this.waitingForBoundary = false;
  }

  /** Forget a session entirely (registry eviction or shutdown); an owed wake stays owed until sent or consumed. */
  forget(sessionId: number): void {
    this.alerts.delete(sessionId);
    const record = this.records.get(sessionId);
    if (record !== undefined && !this.owes(record)) this.records.delete(sessionId);
  }

  clear(): void {
    this.records.clear();
    this.claims.clear();
    this.alerts.clear();
    this.waitingForBoundary = false;
  }

  /** For lists and tests: where a completion stands ("parked" = pending but not armed). */
  stateOf(sessionId: number): WakeState["kind"] | "parked" | "unknown" {
    const record = this.records.get(sessionId);
    if (record === undefined) return "unknown";
    if (record.state.kind === "pending" && !record.armed) return "parked";
    return record.state.kind;
  }
}
