/**
 * exec_command's and write_stdin's answer as a function of one reading of the job, the output the call took and how
 * its wait ended: the live answer, the one that reports the end, and the one a cancelled call gives instead.
 */
import { describe, expect, it } from "vitest";
import type { JobState } from "../../host/runtime/api.ts";
import { joinTakes, processAnswer, readyAnswer, reportedEnd, waitStatusOf, type ProcessAnswerInput } from "../../host/shell/process-answer.ts";
import { actorResult, reading, settings, STARTED } from "../fixtures/shell-readings.ts";

const taken = { text: "ok\n", bytes: 3, omittedBytes: 0 };
const input = (state: JobState): ProcessAnswerInput => ({
  operation: "write_stdin",
  session: settings(),
  reading: reading(state),
  taken,
  mode: "relative",
  outcome: "deadline",
  notes: [],
});
const answer = (state: JobState, over: Partial<ProcessAnswerInput> = {}) => processAnswer({ ...input(state), ...over });

describe("the answer of a live job", () => {
  it("carries the session id, the output taken, the wait and the supervision", () => {
    expect(answer({ phase: "running", stopBy: null })).toEqual({
      operation: "write_stdin",
      status: "running",
      running: true,
      session_id: 7,
      output: "ok\n",
      output_bytes: 3,
      output_omitted_bytes: 0,
      output_folded_lines: 0,
      output_rendered: "text",
      output_replayed: false,
      output_bytes_total: 12,
      log_path: "/tmp/pi-jobs-x/job_7",
      wait_mode: "relative",
      wait_status: "deadline",
      supervision: {
        state: "running",
        stop_reason: null,
        deadline_utc: "2030-01-01T00:01:00.000Z",
        quiet_ms: 2000,
        log_bytes: 12,
        log_truncated: false,
        cleanup: "none",
        stalled: false,
        waiting_for_input: false,
        runaway: false,
      },
      cmd: "npm test",
      tty: false,
      on_exit: "none",
      elapsed_ms: 3000,
      notes: [],
    });
  });

  it("says starting before the process exists, and stopping (still running) once a stop was asked for", () => {
    expect(answer({ phase: "starting", stopBy: null })).toMatchObject({ status: "starting", running: false, session_id: 7, supervision: { state: "starting" } });
    expect(answer({ phase: "running", stopBy: "tool" })).toMatchObject({ status: "running", running: true, supervision: { state: "stopping", cleanup: "pending" } });
  });

  it("a PTY's output is rendered by the terminal; redactions are counted only when there were some", () => {
    const pty = processAnswer({ ...input({ phase: "running", stopBy: null }), session: settings({ tty: true }), taken: { ...taken, redactions: 2 } });
    expect(pty).toMatchObject({ output_rendered: "terminal", redactions: 2 });
    expect("redactions" in answer({ phase: "running", stopBy: null }, { taken: { ...taken, redactions: 0 } })).toBe(false);
  });
});

describe("the answer that reports the end", () => {
  it("has the exit code, the signal and the failure instead of a session id, and says completed", () => {
    const ended: JobState = { phase: "ended", result: actorResult({ exitCode: 2 }), stopBy: null };
    const r = answer(ended, { outcome: "exit" });
    expect(r).toMatchObject({ status: "exited", running: false, exit_code: 2, signal: null, failure: null, wait_status: "completed", elapsed_ms: 4000 });
    expect(r.session_id).toBeUndefined();
    const timedOut = answer({ phase: "ended", result: actorResult({ cause: "timeout", exitCode: null, signal: "SIGTERM" }), stopBy: null });
    expect(timedOut).toMatchObject({ status: "timed_out", signal: "SIGTERM", failure: { reason: "timed_out" }, supervision: { state: "timed_out" } });
  });

  it("a cancelled call takes no output and reports no end: the session stays to be read, and a note says what is unread", () => {
    const ended: JobState = { phase: "ended", result: actorResult(), stopBy: null };
    const r = answer(ended, { taken: null, outcome: "cancelled", notes: ["wrote 3 bytes"] });
    expect(r).toMatchObject({ status: "exited", running: false, session_id: 7, output: "", output_bytes: 0, wait_status: "cancelled" });
    expect(r.notes).toEqual(["wrote 3 bytes", "output left unread (5 bytes); read it with write_stdin"]);
    expect(reportedEnd(ended, null)).toBeNull();
    expect(reportedEnd(ended, taken)).toBe(ended);
    expect(reportedEnd({ phase: "running", stopBy: null }, taken)).toBeNull();
  });
});

describe("the wait's status", () => {
  it("is completed when the end is reported, else why the wait returned", () => {
    expect(waitStatusOf(true, "deadline", "relative")).toBe("completed");
    expect(waitStatusOf(false, "cancelled", "relative")).toBe("cancelled");
    expect(waitStatusOf(false, "steered", "absolute")).toBe("steered");
    expect(waitStatusOf(false, "ready", "relative")).toBe("ready");
    expect(waitStatusOf(false, "deadline", "immediate")).toBe("snapshot");
    expect(waitStatusOf(false, "deadline", "absolute")).toBe("deadline");
  });
});

describe("the ready field", () => {
  it("is the actor's report when it came, with only the fields it has", () => {
    const report = { status: "ready" as const, elapsedMs: 812, matched: "Local: http://x", captures: { url: "http://x" }, port: null };
    expect(readyAnswer({ kind: "reached", value: report }, settings(), reading({ phase: "running", stopBy: null }))).toEqual({
      status: "ready",
      elapsed_ms: 812,
      matched: "Local: http://x",
      captures: { url: "http://x" },
    });
    const timeout = { status: "timeout" as const, elapsedMs: 5000, matched: null, captures: {}, port: 8080 };
    expect(readyAnswer({ kind: "reached", value: timeout }, settings(), reading({ phase: "running", stopBy: null }))).toEqual({ status: "timeout", elapsed_ms: 5000, port: 8080 });
  });

  it("says exited with the job's run time, or not_ready with the time waited", () => {
    const ended: JobState = { phase: "ended", result: actorResult({ startedAt: STARTED + 100, endedAt: STARTED + 900 }), stopBy: null };
    expect(readyAnswer({ kind: "exit" }, settings(), reading(ended))).toEqual({ status: "exited", elapsed_ms: 800 });
    expect(readyAnswer({ kind: "steered" }, settings(), reading({ phase: "running", stopBy: null }))).toEqual({ status: "not_ready", elapsed_ms: 3000 });
  });
});

describe("two takes of one call", () => {
  it("join into one", () => {
    expect(joinTakes({ text: "a", bytes: 1, omittedBytes: 0, redactions: 1, foldedLines: 2 }, { text: "b", bytes: 5, omittedBytes: 4 })).toEqual({
      text: "ab",
      bytes: 6,
      omittedBytes: 4,
      redactions: 1,
      foldedLines: 2,
    });
  });
});
