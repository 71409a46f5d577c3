/**
 * Every result owed to the model, of every kind of job, as one pure state machine: which ends still owe the model a
 * message, which are held by a running codemode script or claimed by a wait_jobs call, which were collected,
 * suppressed or handed to Pi, and which running jobs owe a wake about an episode (stuck, runaway). No timers and no
 * Pi: the scheduler (host/delivery/scheduler.ts) asks `dueAt()` when to come back and `take()` what to send.
 *
 * Every result leaves this machine at most once, through `submitted`, `consume`/`collect` or `suppress`: that is the
 * exactly-once rule, the same for a shell job and a monitor. What differs by kind is only how a result travels: shell
 * ends that fall due close together go out as one wake (a quiet time after the last, a maximum delay after the first);
 * a monitor's report and a watchdog wake about a monitor are messages of their own, due at once. A submitted shell
 * wake is `delivered` once Pi shows it in the conversation (its message ended): only then has the model been told,
 * which is what a persisted job's entry waits for before it goes (host/shell/persist-release.ts).
 */
import { WAKE_MAX_DELAY_MS, WAKE_QUIET_MS } from "../shell/limits.ts";
import { nameOfAlert, nameOfResult, type CompletionInfo, type DueAlert, type DueResult, type JobName, type MonitorMessage, type StuckAlert } from "./results.ts";

type ResultState =
  /** Eligible to be sent (if armed and not claimed), since this monotonic time. */
  | { kind: "pending"; since: number }
  /** Observed inside a codemode call that has not finalized yet. */
  | { kind: "held"; outerCallId: string }
  /** Handed to Pi in the message numbered `wake` (a shell wake's details say the number). */
  | { kind: "submitted"; wake: number }
  /** That wake's message reached the conversation. */
  | { kind: "delivered" }
  /** A tool result reported it (a read, wait_jobs, a script's receipt). */
  | { kind: "consumed" }
  /** Nobody is told: the model stopped the job, or the session stopped it. */
  | { kind: "suppressed" };

interface ResultRecord {
  result: DueResult;
  armed: boolean;
  state: ResultState;
}

export type ArmEffect = "armed" | "disarmed" | "unchanged" | "already_notified";

/** Where a result stood when wait_jobs collected it: `now` makes it the caller's; the others say where it went. */
export type Collection = "now" | "wake" | "earlier" | "none" | "unknown";

export interface WakeTiming {
  quietMs: number;
  maxDelayMs: number;
}

/** What is due now: one shell wake's ends and alerts, and each monitor's messages in the order they fell due. */
export interface DueNow {
  completions: CompletionInfo[];
  alerts: StuckAlert[];
  monitors: { name: JobName; message: MonitorMessage; piSession: number | null }[];
}

export class ResultLedger {
  private readonly records = new Map<JobName, ResultRecord>();
  /** Wakes about running jobs not yet handed to Pi, by job. */
  private readonly alerts = new Map<JobName, { alert: DueAlert; since: number }>();
  private readonly timing: WakeTiming;
  /** Jobs a wait_jobs call is waiting on, with how many calls wait: their result is that call's to report. */
  private readonly claims = new Map<JobName, number>();
  /** After a failed submission nothing is retried until the next tool boundary, agent_settled or session start. */
  private waitingForBoundary = false;
  /** The number of the last message handed out: each carries its own, so its delivery names what it carried. */
  private lastWake = 0;
  /**
   * Which of this Pi process's sessions is current, counted from 0: /new, /resume and /fork carry the jobs into the
   * next one (host/session/instance-life.ts), and a job or a result from an earlier one is said to be so.
   */
  piSession = 0;

  constructor(timing: WakeTiming = { quietMs: WAKE_QUIET_MS, maxDelayMs: WAKE_MAX_DELAY_MS }) {
    this.timing = timing;
  }

  /**
   * A job ended. An armed result becomes eligible; an unarmed one stays pending unsent, in case set_on_exit arms it
   * before it is collected.
   */
  completed(result: DueResult, armed: boolean, now: number): void {
    const name = nameOfResult(result);
    // The end says more than a wake about the running job would.
    this.alerts.delete(name);
    if (this.records.has(name)) return;
    this.records.set(name, { result, armed, state: { kind: "pending", since: now } });
  }

  /** A running job began an episode (stuck, runaway) that owes a wake. */
  stuck(alert: DueAlert, now: number): void {
    const name = nameOfAlert(alert);
    if (this.records.has(name)) return;
    this.alerts.set(name, { alert, since: now });
  }

  /** The episode ended (new output, a read) before its wake went out: nothing is owed any more. */
  unstuck(name: JobName): void {
    this.alerts.delete(name);
  }

  /** set_on_exit on a job that has already ended (running jobs carry their flag themselves until completion). */
  setArmed(name: JobName, armed: boolean, now: number): ArmEffect {
    const record = this.records.get(name);
    if (record === undefined) return "unchanged";
    if (record.state.kind === "submitted" || record.state.kind === "delivered") return "already_notified";
    if (record.armed === armed) return "unchanged";
    record.armed = armed;
    if (record.state.kind === "consumed" || record.state.kind === "suppressed") return "unchanged";
    // Arming late starts the batching window now, not at the exit.
    if (armed && record.state.kind === "pending") record.state = { kind: "pending", since: now };
    return armed ? "armed" : "disarmed";
  }

  /** A direct tool result reported the end: nothing is owed any more. Returns whether a wake was owed. */
  consume(name: JobName): boolean {
    const record = this.records.get(name);
    if (record === undefined) return false;
    const owed = this.owes(record);
    if (record.state.kind === "pending" || record.state.kind === "held") record.state = { kind: "consumed" };
    return owed;
  }

  /**
   * wait_jobs reports this ended job: where its result stood. One not yet sent is the caller's now (consumed, or held
   * for the caller's codemode script until its outermost call finalizes, as any nested read is).
   */
  collect(name: JobName, outerCallId: string | null): Collection {
    const record = this.records.get(name);
    if (record === undefined) return "unknown";
    switch (record.state.kind) {
      case "pending":
      case "held":
        record.state = outerCallId === null ? { kind: "consumed" } : { kind: "held", outerCallId };
        return "now";
      case "submitted":
      case "delivered":
        return "wake";
      case "consumed":
        return "earlier";
      case "suppressed":
        return "none";
    }
  }

  /** An explicit stop: the model (or the session) asked for the end, so nobody is told about it. */
  suppress(name: JobName): void {
    this.alerts.delete(name);
    const record = this.records.get(name);
    if (record !== undefined && record.state.kind !== "submitted" && record.state.kind !== "delivered") record.state = { kind: "suppressed" };
  }

  /**
   * A wait_jobs call waits on this job: while claimed, its result is not sent, because the call will report it (and
   * collect it) or release it. Counted, so two calls waiting on one job do not free it early.
   */
  claim(name: JobName): void {
    this.claims.set(name, (this.claims.get(name) ?? 0) + 1);
  }

  /** The wait ended without reporting this job: its result, if owed, is due again, its batching window from now. */
  release(name: JobName, now: number): void {
    const left = (this.claims.get(name) ?? 1) - 1;
    if (left > 0) {
      this.claims.set(name, left);
      return;
    }
    this.claims.delete(name);
    const record = this.records.get(name);
    if (record !== undefined && record.state.kind === "pending") record.state = { kind: "pending", since: now };
  }

  /** A codemode script observed the end; the outcome waits for its outermost call to finalize. */
  hold(name: JobName, outerCallId: string): void {
    const record = this.records.get(name);
    if (record !== undefined && record.state.kind === "pending") record.state = { kind: "held", outerCallId };
  }

  /**
   * The outermost call finalized. On success its receipt reported the ends, which consumes them; on failure they
   * become eligible again.
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

  private owes(record: ResultRecord): boolean {
    return record.armed && (record.state.kind === "pending" || record.state.kind === "held");
  }

  /** Armed, pending, unclaimed results: what may go out. */
  private eligible(): { name: JobName; record: ResultRecord; since: number }[] {
    const out: { name: JobName; record: ResultRecord; since: number }[] = [];
    for (const [name, record] of this.records) {
      if (record.armed && record.state.kind === "pending" && !this.claims.has(name)) out.push({ name, record, since: record.state.since });
    }
    return out;
  }

  /** Names of the jobs whose result is owed (pending or held). */
  owedNames(): JobName[] {
    return [...this.records].filter(([, record]) => this.owes(record)).map(([name]) => name);
  }

  /** When the shell wake is due: a quiet time after the last end (or alert), at most the maximum delay after the first. */
  private shellDueAt(): number | null {
    const since = [
      ...this.eligible().flatMap((e) => (e.record.result.kind === "shell" ? [e.since] : [])),
      ...[...this.alerts.values()].flatMap((a) => (a.alert.kind === "shell" ? [a.since] : [])),
    ];
    if (since.length === 0) return null;
    return Math.min(Math.min(...since) + this.timing.maxDelayMs, Math.max(...since) + this.timing.quietMs);
  }

  /** When a monitor's message is due: at once (a monitor's report is a message of its own, never batched). */
  private monitorDueAt(): number | null {
    const since = [
      ...this.eligible().flatMap((e) => (e.record.result.kind === "monitor" ? [e.since] : [])),
      ...[...this.alerts.values()].flatMap((a) => (a.alert.kind === "monitor" ? [a.since] : [])),
    ];
    return since.length === 0 ? null : Math.min(...since);
  }

  /** When the next message should be sent (monotonic ms), or null when nothing is due or a boundary is awaited. */
  dueAt(): number | null {
    if (this.waitingForBoundary) return null;
    const due = [this.shellDueAt(), this.monitorDueAt()].filter((at) => at !== null);
    return due.length === 0 ? null : Math.min(...due);
  }

  /** What to send now: the shell wake's ends and alerts (in session order) if it is due, and every due monitor message. */
  take(now: number): DueNow {
    if (this.waitingForBoundary) return { completions: [], alerts: [], monitors: [] };
    const shellDue = this.shellDueAt();
    const shellNow = shellDue !== null && now >= shellDue;
    const completions: CompletionInfo[] = [];
    const alerts: StuckAlert[] = [];
    const monitors: (DueNow["monitors"][number] & { since: number })[] = [];
    for (const { name, record, since } of this.eligible()) {
      const result = record.result;
      if (result.kind === "shell") {
        if (shellNow) completions.push(result.completion);
      } else if (since <= now) monitors.push({ name, message: result.report, piSession: result.piSession, since });
    }
    for (const [name, { alert, since }] of this.alerts) {
      if (alert.kind === "shell") {
        if (shellNow) alerts.push(alert.alert);
      } else if (since <= now) monitors.push({ name, message: alert.watchdog, piSession: null, since });
    }
    completions.sort((a, b) => a.sessionId - b.sessionId);
    alerts.sort((a, b) => a.sessionId - b.sessionId);
    // In the order they fell due, as the monitor's own messages always went.
    monitors.sort((a, b) => a.since - b.since);
    return { completions, alerts, monitors: monitors.map(({ name, message, piSession }) => ({ name, message, piSession })) };
  }

  /** The number the next message carries. */
  nextWake(): number {
    this.lastWake += 1;
    return this.lastWake;
  }

  /** Pi accepted the message numbered `wake` that carried these results: they are done, whatever happens later. */
  submitted(names: readonly JobName[], wake: number): void {
    for (const name of names) {
      const record = this.records.get(name);
      if (record !== undefined && record.state.kind === "pending") record.state = { kind: "submitted", wake };
    }
  }

  /** Pi accepted the message that carried these wakes about running jobs. */
  alertsSubmitted(names: readonly JobName[]): void {
    for (const name of names) this.alerts.delete(name);
  }

  /**
   * Wake `wake`'s message reached the conversation showing the results `shown`: those are delivered. One the message
   * only counted ("… and N more") stays submitted: notified, but its exit code has not reached the model.
   */
  delivered(wake: number, shown: readonly JobName[]): JobName[] {
    const names: JobName[] = [];
    for (const [name, record] of this.records) {
      if (record.state.kind !== "submitted" || record.state.wake !== wake || !shown.includes(name)) continue;
      record.state = { kind: "delivered" };
      names.push(name);
    }
    return names;
  }

  /** Pi refused a message with an error we could see: keep it pending and retry at the next boundary. */
  submissionFailed(): void {
    this.waitingForBoundary = true;
  }

  /** A tool boundary, agent_settled or a session start: a refused message may be retried now. */
  boundary(): void {
    this.waitingForBoundary = false;
  }

  /** Forget a job entirely (registry eviction); an owed result stays owed until sent or consumed. */
  forget(name: JobName): void {
    this.alerts.delete(name);
    const record = this.records.get(name);
    if (record !== undefined && !this.owes(record)) this.records.delete(name);
  }

  /** Everything ends with the session (quit): nothing is owed to anyone, and the next start is a first session. */
  clear(): void {
    this.records.clear();
    this.claims.clear();
    this.alerts.clear();
    this.waitingForBoundary = false;
    this.piSession = 0;
  }

  /** For lists, wait_jobs and tests: where a result stands ("parked" = pending but not armed). */
  stateOf(name: JobName): ResultState["kind"] | "parked" | "unknown" {
    const record = this.records.get(name);
    if (record === undefined) return "unknown";
    if (record.state.kind === "pending" && !record.armed) return "parked";
    return record.state.kind;
  }
}
