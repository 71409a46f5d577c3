/**
 * Stopping shell jobs: kill_session's stop of one job, which it reports as `killed` only once the stop is confirmed,
 * and the session end's stop of them all, which owes nothing to anyone. Apart from the service (host/shell/service.ts)
 * because a stop's confirmation and what it leaves registered are their own rules, and the session end needs them
 * without a service (a parked state is abandoned with stopAllIn).
 */
import { releaseEnded, stopKept } from "../persist/keeper.ts";
import { endReported } from "./persist-release.ts";
import type { KillResult } from "./result.ts";
import { killAnswer } from "./session-answers.ts";
import { logPathOf, readSession, type ShellSession } from "./session.ts";
import type { ShellState } from "./state.ts";
import type { StopSignal } from "../../mailbox/control.ts";
import { shellJobName } from "../delivery/results.ts";

/** How long past the grace kill_session waits for the stop to be confirmed before it reports `killed: false`. */
export const KILL_CONFIRM_SLACK_MS = 10_000;

/**
 * kill_session on a registered session: a finished job is discarded (no wake, no replay; the log stays), a live one
 * is stopped and stays registered until its stop is confirmed within `confirmMs`.
 */
export async function killSession(state: ShellState, session: ShellSession, signal: StopSignal, timing: { graceMs: number; confirmMs: number }): Promise<KillResult> {
  const { confirmMs } = timing;
  const { ledger, registry } = state;
  if (session.handle.phase() === "ended") {
    // Stopping a finished job discards it: no wake, no replay; the log stays.
    ledger.suppress(shellJobName(session.id));
    endReported(session);
    registry.remove(session.id, logPathOf(session));
    const message = "the job had already ended; it was removed from the registry (its log remains)";
    return killAnswer(session, readSession(session, Date.now()), { signal, already_exited: true, killed: false, message });
  }
  ledger.suppress(shellJobName(session.id));
  // Asked first, so that the end its follower may report once the keeper has stopped the job is the tool's stop.
  const stopped = session.handle.stop(signal, { by: "tool" });
  // A persisted job is stopped through its keeper, which outlives its follower: the follower's stop alone leaves it.
  if (session.persisted !== null) {
    if (!(await stopKept(session.persisted, signal, timing))) {
      const message = `the persisted job's stop (its keeper, its group and what left it) was not confirmed within ${confirmMs} ms; the job stays registered`;
      return killAnswer(session, readSession(session, Date.now()), { signal, already_exited: false, killed: false, message });
    }
    releaseEnded(session.persisted);
  }
  let timer: ReturnType<typeof setTimeout> | null = null;
  const outcome = await Promise.race([
    stopped.then(() => "ended" as const),
    new Promise<"unconfirmed">((resolveTimer) => {
      timer = setTimeout(() => resolveTimer("unconfirmed"), confirmMs);
    }),
  ]);
  if (timer !== null) clearTimeout(timer);
  const reading = readSession(session, Date.now());
  const result = reading.state.phase === "ended" ? reading.state.result : null;
  if (outcome === "unconfirmed" || result?.cleanup !== "confirmed") {
    const message =
      outcome === "unconfirmed"
        ? `the stop was not confirmed within ${confirmMs} ms; the job stays registered (it is still being stopped)`
        : "the process ended but its process group could not be confirmed gone; the job stays registered";
    return killAnswer(session, reading, { signal, already_exited: false, killed: false, message });
  }
  registry.remove(session.id, reading.logPath);
  return killAnswer(session, reading, { signal, already_exited: false, killed: true, message: "the process group was stopped; no wake will be sent" });
}

/**
 * Stops every job the state owns (session end): nothing is notified, nothing stays registered. A persisted job whose
 * end this Pi has reported (its wake shown, its result read or stopped) is done with: its entry goes. Any other stays
 * for the next Pi, which reports its end if this one did not — a wake handed to Pi but not yet shown included.
 */
export async function stopAllIn(state: ShellState): Promise<void> {
  for (const session of state.registry.all()) {
    // Most reported ends released their entry when reported; one a codemode script's receipt reported goes here.
    if (["delivered", "consumed", "suppressed"].includes(state.ledger.stateOf(shellJobName(session.id)))) endReported(session);
  }
  state.closing = true;
  const running = state.registry.all().filter((s) => s.handle.phase() !== "ended");
  await Promise.all(running.map((s) => s.handle.stop("SIGTERM", { bounded: true, by: "session_shutdown" }).catch(() => undefined)));
  state.registry.clear();
  state.ledger.clear();
  state.scripts.clear();
}
