/**
 * What the shell tools derive from a job's state alone: its status, how it ended and its supervision, including who
 * asked for a stop. The values are the ones the tool results carry.
 */
import { describe, expect, it } from "vitest";
import type { JobState } from "../../host/runtime/api.ts";
import { deriveSupervision, endingOf, statusOf } from "../../host/shell/supervision.ts";
import { actorResult } from "../fixtures/shell-readings.ts";

const input = (job: JobState) => ({ job, timeoutMs: 2000, deadlineEpochMs: null, lastActivityEpochMs: 0, nowEpochMs: 500, logBytes: 3, logTruncated: false });

describe("status and ending from the job's state", () => {
  it("a live job's status is its phase, whether or not a stop was asked for", () => {
    expect(statusOf({ phase: "starting", stopBy: null }, 1000)).toBe("starting");
    expect(statusOf({ phase: "starting", stopBy: "tool" }, 1000)).toBe("starting");
    expect(statusOf({ phase: "running", stopBy: "session_shutdown" }, 1000)).toBe("running");
    expect(endingOf({ phase: "running", stopBy: "tool" }, 1000)).toBeNull();
  });

  it("an ended job's status and stop reason come from its result and who asked for the stop", () => {
    const stopped = actorResult({ cause: "stopped", exitCode: null, signal: "SIGTERM" });
    expect(statusOf({ phase: "ended", result: actorResult(), stopBy: null }, 1000)).toBe("exited");
    expect(endingOf({ phase: "ended", result: stopped, stopBy: "tool" }, 1000)).toEqual({ status: "stopped", state: "stopped", stopReason: "stopped", failure: null });
    expect(endingOf({ phase: "ended", result: stopped, stopBy: "session_shutdown" }, 1000)).toMatchObject({ stopReason: "session_shutdown" });
    // Its own deadline stops a job too, but nobody asked: the cause says timeout, in the spec's words.
    expect(endingOf({ phase: "ended", result: actorResult({ cause: "timeout" }), stopBy: null }, 2000)).toMatchObject({
      status: "timed_out",
      failure: { reason: "timed_out", message: "hard lifetime of 2 s elapsed; the process group was stopped" },
    });
  });
});

describe("supervision from the job's state", () => {
  it("says starting, running or stopping while the job is live; a requested stop makes the cleanup pending", () => {
    expect(deriveSupervision(input({ phase: "starting", stopBy: null }))).toMatchObject({ state: "starting", cleanup: "none", stop_reason: null });
    expect(deriveSupervision(input({ phase: "running", stopBy: null }))).toMatchObject({ state: "running", cleanup: "none" });
    expect(deriveSupervision(input({ phase: "starting", stopBy: "tool" }))).toMatchObject({ state: "stopping", cleanup: "pending" });
    expect(deriveSupervision(input({ phase: "running", stopBy: "session_shutdown" }))).toMatchObject({ state: "stopping", cleanup: "pending" });
  });

  it("an ended job's supervision comes from its result; stuck flags belong to running jobs only", () => {
    const job: JobState = { phase: "ended", result: actorResult({ cause: "log_quota", cleanup: "unconfirmed", endedAt: 400 }), stopBy: null };
    expect(deriveSupervision({ ...input(job), stalled: true, waitingForInput: true })).toEqual({
      state: "log_quota",
      stop_reason: "log_quota",
      deadline_utc: null,
      quiet_ms: 400,
      log_bytes: 12,
      log_truncated: false,
      cleanup: "unconfirmed",
      stalled: false,
      waiting_for_input: false,
      runaway: false,
    });
    expect(deriveSupervision({ ...input({ phase: "running", stopBy: null }), stalled: true })).toMatchObject({ stalled: true, quiet_ms: 500 });
  });
});
