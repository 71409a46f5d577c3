/**
 * write_stdin's input to a live job: the resize, the bytes and the end of stdin, in that order, each acknowledged
 * by the job's actor before the next. Apart from the service (host/shell/service.ts), which then waits and answers
 * the same way whether input was sent or not.
 */
import type { ShellSession } from "./session.ts";
import { ToolError } from "../tools/checked.ts";
import type { WriteRequest } from "./validate.ts";

/**
 * Sends what the request carries and returns the notes the answer reports (what was done). A request that does not
 * fit the session (end_stdin on a PTY or a persisted job, a resize of pipes) or that the actor refuses is a ToolError; input for a
 * job that has ended is not sent, and a note says so.
 */
export async function sendInput(session: ShellSession, request: WriteRequest): Promise<string[]> {
  const notes: string[] = [];
  if (request.endStdin && session.tty) {
    throw new ToolError(`write_stdin: end_stdin is for pipes; session ${session.id} is a PTY (send "\\u0004" for Ctrl-D instead)`);
  }
  if (request.endStdin && session.persisted !== null) {
    // Its keeper holds the job's stdin open so that a later Pi can still send input; closing this Pi's pipe to it
    // would say "stdin closed" while the job never sees the end.
    throw new ToolError(
      `write_stdin: end_stdin cannot close the stdin of session ${session.id}, a persisted job: its keeper holds it open for the next Pi; send the input the program takes as its end, or kill_session it`,
    );
  }
  if (request.resize !== null && !session.tty) {
    throw new ToolError(`write_stdin: cols/rows resize a PTY; session ${session.id} uses pipes`);
  }
  if (session.handle.phase() !== "ended") {
    if (request.resize !== null) {
      const ack = await session.handle.resize(request.resize.cols, request.resize.rows);
      if (!ack.ok) throw new ToolError(`write_stdin: resize of session ${session.id} failed: ${ack.error}`);
      notes.push(`resized to ${request.resize.cols}x${request.resize.rows}`);
    }
    if (request.input !== null) {
      const ack = await session.handle.write(request.input);
      if (!ack.ok) throw new ToolError(`write_stdin: input to session ${session.id} was not accepted: ${ack.error}`);
      notes.push(`wrote ${request.input.length} bytes`);
    }
    if (request.endStdin) {
      const ack = await session.handle.endStdin();
      if (!ack.ok) throw new ToolError(`write_stdin: closing stdin of session ${session.id} failed: ${ack.error}`);
      notes.push("stdin closed");
    }
  } else if (request.input !== null || request.endStdin || request.resize !== null) {
    notes.push("input was not sent: the process has ended");
  }
  return notes;
}
