/**
 * The end of a codemode script that used shell jobs (host/shell/scripts.ts says which did): the receipt appended to
 * its outermost call's result, and what the end does to the wakes the script's calls held back. Apart from the
 * service (host/shell/service.ts) because it acts on a whole script, never on one tool call.
 */
import { receiptText, type ReceiptLine } from "./receipt-text.ts";
import { receiptLine } from "./session-answers.ts";
import { readSession } from "./session.ts";
import type { ShellState } from "./state.ts";

/**
 * The outermost call finalized: its receipt text (or null if it never touched a shell job). A successful call's
 * receipt reports its completions, which consumes their wakes; a failed one leaves them eligible.
 */
export function finalizeScript(state: ShellState, outerCallId: string, success: boolean): string | null {
  const touched = state.scripts.get(outerCallId);
  if (touched === undefined) return null;
  state.scripts.delete(outerCallId);
  const now = Date.now();
  const lines: ReceiptLine[] = [...touched].map((id) => {
    const session = state.registry.get(id);
    if (session === undefined) {
      return { sessionId: id, state: "ended", running: false, logPath: state.registry.removedLog(id) ?? null, replayable: false, gone: true };
    }
    return receiptLine(session, readSession(session, now), session.replay !== null);
  });
  state.ledger.finalize(outerCallId, success, performance.now());
  state.onCompletion();
  return receiptText(lines);
}

/** A run ended with scripts that never finalized: what they held becomes eligible again. */
export function releaseScripts(state: ShellState): void {
  if (state.scripts.size === 0) return;
  state.scripts.clear();
  state.ledger.releaseAllHeld(performance.now());
  state.onCompletion();
}
