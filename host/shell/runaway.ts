/**
 * The watchdog heard of a runaway episode of a shell job (actors/watch/usage-judge.ts): the job is owed one
 * metadata-only wake, batched with the others, whatever its on_exit (the watchdog is on by default and never stops a
 * job). A read of the job before the batch goes out drops it (host/shell/wake-delivery.ts).
 */
import { runawayFigures, usageFields } from "../runtime/usage-line.ts";
import { logPathOf, type ShellSession } from "./session.ts";
import type { ShellState } from "./state.ts";

export function wakeForRunaway(state: ShellState, session: ShellSession, reason: string | null): void {
  const watchdog = session.handle.spec.watch?.watchdog;
  if (state.closing || watchdog === undefined || session.handle.state().stopBy !== null) return;
  const now = performance.now();
  const figures = runawayFigures(usageFields(session.handle.figures().usage), watchdog, reason);
  state.ledger.stuck(
    { sessionId: session.id, cmd: session.cmd, kind: "runaway", prompt: null, tty: session.tty, logPath: logPathOf(session), runaway: { figures, noticedAt: now } },
    now,
  );
  state.onCompletion();
}
