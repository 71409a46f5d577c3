/**
 * Reading a shell job's output for a tool result, and wait_jobs' collection of a job that ended. Apart from the
 * service (host/shell/service.ts) so that the read and the collection are one narrow thing each: wait_jobs
 * (host/wait/) collects through here and nowhere else, with the same read, rendering and redaction as write_stdin.
 */
import type { TakenOutput } from "../../mailbox/output.ts";
import { processAnswer } from "./process-answer.ts";
import type { ProcessResult } from "./result.ts";
import { endReported } from "./persist-release.ts";
import { outerCallOf, touchScript } from "./scripts.ts";
import { readSession, type ShellSession } from "./session.ts";
import type { ShellState } from "./state.ts";
import { shellJobName } from "../delivery/results.ts";
import type { Collection } from "../delivery/ledger.ts";

/** One read: the output since the previous one, asked of the job's actor (or its final record); folded unless `raw`. */
export async function takeOutput(session: ShellSession, final: boolean, raw: boolean, notes: string[]): Promise<TakenOutput> {
  try {
    return await session.handle.takeUnread(final, raw);
  } catch (error) {
    notes.push(`output could not be read now (${(error as Error).message}); it stays unread`);
    return { text: "", bytes: 0, omittedBytes: 0 };
  }
}

/**
 * wait_jobs reports this ended job. Its final read is taken as write_stdin's, and collected in the ledger as a read
 * that reports the end is: no wake after it (`collection` says where its end stood: `wake` if a wake already said how
 * it ended, whose output is still this call's to show). The registration stays with the read saved, so a later
 * write_stdin replays it (`output_replayed`) instead of failing or reading new output; in a codemode script the
 * script holds the wake until its outermost call finalizes, as for any nested read.
 */
export async function collectEnded(state: ShellState, session: ShellSession, toolCallId: string): Promise<{ answer: ProcessResult; collection: Collection }> {
  touchScript(state.scripts, toolCallId, session.id);
  const notes: string[] = [];
  const taken = await takeOutput(session, true, false, notes);
  const reading = readSession(session, Date.now());
  const answer = processAnswer({ operation: "write_stdin", session, reading, taken, mode: "immediate", outcome: "exit", notes });
  session.replay = { ...answer, notes: [...answer.notes] };
  const outer = outerCallOf(toolCallId);
  const collection = state.ledger.collect(shellJobName(session.id), outer);
  if (outer === null) endReported(session);
  return { answer, collection };
}
