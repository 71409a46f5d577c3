/**
 * When a persisted job's registry entry goes: as soon as its end has reached the model — its wake's message is in
 * the conversation showing it (not only counting it), a direct tool result reported it (a read that saw the exit,
 * wait_jobs, list_sessions showing its exit code; in a codemode script, its receipt, at quit), or kill_session
 * discarded it. From then on no later Pi may report that end again, so the entry is removed at once rather than at
 * quit: a Pi killed a moment later leaves nothing that the next one would report a second time. An end handed to Pi
 * but not yet shown (Pi quit or died in between) keeps its entry, and the next Pi reports it. The job's log the model
 * was pointed at is the actor's, not the entry's, so nothing the model can still read goes with the entry.
 */
import { releaseEnded } from "../persist/keeper.ts";
import type { ShellSession } from "./session.ts";

/** The session's end has been reported to the model: a persisted job's entry goes (once its end is recorded). */
export function endReported(session: ShellSession): void {
  // A follower stopped by Pi (its quit, a takeover) ended while the job may still run: that end is not the job's.
  if (session.persisted === null || session.handle.phase() !== "ended" || session.handle.state().stopBy !== null) return;
  releaseEnded(session.persisted);
}
