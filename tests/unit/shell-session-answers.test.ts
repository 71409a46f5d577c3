/** list_sessions', set_on_exit's and kill_session's answers and the receipt's lines as functions of one reading. */
import { describe, expect, it } from "vitest";
import type { JobState } from "../../host/runtime/api.ts";
import { killAnswer, listAnswer, receiptLine, sessionEntry, setOnExitAnswer } from "../../host/shell/session-answers.ts";
import { actorResult, reading, settings } from "../fixtures/shell-readings.ts";

const running: JobState = { phase: "running", stopBy: null };
const exited: JobState = { phase: "ended", result: actorResult({ exitCode: 1 }), stopBy: null };

describe("list_sessions", () => {
  it("lists a running job with the ports it listens on, and an ended one with its exit", () => {
    const live = sessionEntry(settings(), reading(running), { collected: false, listening: [5173] });
    expect(live).toMatchObject({
      session_id: 7,
      running: true,
      status: "running",
      exit_code: null,
      output_bytes_total: 12,
      output_pending_bytes: 5,
      started_utc: "2030-01-01T00:00:00.000Z",
      elapsed_ms: 3000,
      listening: [5173],
      supervision: { state: "running" },
    });
    const ended = sessionEntry(settings({ id: 8 }), reading(exited), { collected: true, listening: [5173] });
    expect(ended).toMatchObject({ session_id: 8, running: false, status: "exited", exit_code: 1, collected: true, elapsed_ms: 4000 });
    expect("listening" in ended).toBe(false);
    // Ports never read are not claimed to be none.
    expect("listening" in sessionEntry(settings(), reading(running), { collected: false, listening: undefined })).toBe(false);
  });

  it("counts starting and running jobs as active", () => {
    const starting = sessionEntry(settings({ id: 1 }), reading({ phase: "starting", stopBy: null }), { collected: false, listening: undefined });
    const live = sessionEntry(settings({ id: 2 }), reading(running), { collected: false, listening: undefined });
    const ended = sessionEntry(settings({ id: 3 }), reading(exited), { collected: false, listening: undefined });
    expect(listAnswer([starting, live, ended])).toMatchObject({ active_count: 2, completed_count: 1, just_exited_count: 1 });
  });
});

describe("set_on_exit", () => {
  it("answers with the session's new setting and whether the job still runs", () => {
    expect(setOnExitAnswer(settings({ onExit: "wake" }), reading(running), { previous_on_exit: "none", effect: "armed" })).toEqual({
      operation: "set_on_exit",
      session_id: 7,
      cmd: "npm test",
      on_exit: "wake",
      previous_on_exit: "none",
      running: true,
      status: "running",
      effect: "armed",
    });
    expect(setOnExitAnswer(settings(), reading(exited), { previous_on_exit: "wake", effect: "disarmed" })).toMatchObject({ running: false, status: "exited" });
  });
});

describe("kill_session", () => {
  it("a confirmed stop reports the stopped job", () => {
    const stopped: JobState = { phase: "ended", result: actorResult({ cause: "stopped", exitCode: null, signal: "SIGKILL", escalated: true }), stopBy: "tool" };
    const r = killAnswer(settings(), reading(stopped), { signal: "SIGTERM", already_exited: false, killed: true, message: "stopped" });
    expect(r).toMatchObject({
      killed: true,
      escalated: true,
      status: "stopped",
      running: false,
      exit_code: null,
      exit_signal: "SIGKILL",
      cleanup: "confirmed",
      supervision: { state: "stopped", stop_reason: "stopped", cleanup: "confirmed" },
    });
  });

  it("a stop not confirmed in time leaves the job running with its cleanup unconfirmed", () => {
    const stopping: JobState = { phase: "running", stopBy: "tool" };
    const r = killAnswer(settings(), reading(stopping), { signal: "SIGTERM", already_exited: false, killed: false, message: "not confirmed" });
    expect(r).toMatchObject({ killed: false, running: true, status: "running", cleanup: "unconfirmed", supervision: { state: "stopping", cleanup: "unconfirmed" } });
  });

  it("a job that had already ended keeps its own ending", () => {
    const r = killAnswer(settings(), reading(exited), { signal: "SIGTERM", already_exited: true, killed: false, message: "already ended" });
    expect(r).toMatchObject({ killed: false, already_exited: true, status: "exited", running: false, exit_code: 1, cleanup: "confirmed" });
  });
});

describe("the receipt's line", () => {
  it("says running, or how the job ended", () => {
    expect(receiptLine(settings(), reading(running), false)).toEqual({ sessionId: 7, state: "running", running: true, logPath: "/tmp/pi-jobs-x/job_7", replayable: false, gone: false });
    expect(receiptLine(settings(), reading(exited), true)).toMatchObject({ state: "exited with code 1", running: false, replayable: true });
    const quota: JobState = { phase: "ended", result: actorResult({ cause: "log_quota" }), stopBy: null };
    expect(receiptLine(settings(), reading(quota), false).state).toBe("failed (log_quota)");
  });
});
