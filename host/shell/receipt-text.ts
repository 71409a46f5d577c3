/**
 * The codemode receipt: the text appended to the outermost result of a script that used shell jobs, with ids, exit
 * status and log paths, bounded in count. The wakes' texts are the delivery's (host/delivery/wake-text.ts).
 */
import { NOTICE_MAX_SESSIONS } from "./limits.ts";

export const RECEIPT_HEADER = "[shell-jobs results]";

export interface ReceiptLine {
  sessionId: number;
  /** "running", or a completion phrase. */
  state: string;
  running: boolean;
  logPath: string | null;
  /** The final output was collected in the script and can be read once more. */
  replayable: boolean;
  /** The session is no longer registered (stopped, evicted). */
  gone: boolean;
}

/** The receipt appended to the outermost tool result of a script that used shell jobs. */
export function receiptText(lines: readonly ReceiptLine[]): string {
  const shown = [...lines].sort((a, b) => a.sessionId - b.sessionId).slice(0, NOTICE_MAX_SESSIONS);
  const out = [RECEIPT_HEADER];
  for (const l of shown) {
    const how = l.running
      ? `running · poll with write_stdin {"session_id": ${l.sessionId}, "yield_time_ms": 0}`
      : l.replayable
        ? `${l.state} · final output replayable once with write_stdin {"session_id": ${l.sessionId}, "yield_time_ms": 0}`
        : l.gone
          ? `${l.state} · no longer registered; use log_path`
          : `${l.state} · collect with write_stdin {"session_id": ${l.sessionId}, "yield_time_ms": 0}`;
    out.push(`- session_id ${l.sessionId}: ${how} · log_path: ${l.logPath ?? "none"}`);
  }
  if (lines.length > shown.length) out.push(`- … and ${lines.length - shown.length} more (see list_sessions)`);
  return out.join("\n");
}
