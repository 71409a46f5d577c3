/**
 * A running shell job's wakes about an episode, and whether one still holds when its wake goes out. The watchdog heard
 * of a runaway episode (actors/watch/usage-judge.ts): the job is owed one metadata-only wake, batched with the other
 * shell wakes, whatever its on_exit (the watchdog is on by default and never stops a job). A stall or a prompt owes
 * one only to a job that asked for wakes (host/shell/service.ts). The delivery (host/delivery/scheduler.ts) asks
 * `stillStuck` before it sends: output since, or a read of a runaway since it was heard of, drops the alert.
 */
import { shellJobName, type StuckAlert } from "../delivery/results.ts";
import { runawayFigures, usageFields } from "../runtime/usage-line.ts";
import { logPathOf, type ShellSession } from "./session.ts";
import type { ShellState } from "./state.ts";
import { endReported } from "./persist-release.ts";

export function wakeForRunaway(state: ShellState, session: ShellSession, reason: string | null): void {
  const watchdog = session.handle.spec.watch?.watchdog;
  if (state.closing || watchdog === undefined || session.handle.state().stopBy !== null) return;
  const now = performance.now();
  const figures = runawayFigures(usageFields(session.handle.figures().usage), watchdog, reason);
  const alert: StuckAlert = { sessionId: session.id, cmd: session.cmd, kind: "runaway", prompt: null, tty: session.tty, logPath: logPathOf(session), runaway: { figures, noticedAt: now } };
  state.ledger.stuck({ kind: "shell", alert }, now);
  state.onCompletion();
}

/** Whether the job is still as the alert says: an episode that output ended while its wake waited owes nothing. */
export function stillStuck(state: ShellState, alert: StuckAlert): boolean {
  const handle = state.registry.get(alert.sessionId)?.handle;
  const figures = handle?.figures();
  // A runaway the model read since it was heard of has been seen with its figures: it owes no wake.
  const unread = (handle?.lastReadAt() ?? Number.NEGATIVE_INFINITY) < (alert.runaway?.noticedAt ?? Number.POSITIVE_INFINITY);
  const still = alert.kind === "stalled" ? figures?.stalled : alert.kind === "runaway" ? figures?.runaway && unread : figures?.waitingForInput;
  return still === true;
}

/** These jobs' ends reached the model in a wake's message: a persisted job's entry goes (host/shell/persist-release.ts). */
export function endsDelivered(state: ShellState, names: readonly string[]): void {
  for (const session of state.registry.all()) if (names.includes(shellJobName(session.id))) endReported(session);
}
