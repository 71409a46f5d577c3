import { describe, expect, it } from "vitest";
import { Compile } from "typebox/compile";
import { ProcessResultSchema } from "../../host/shell/result-schemas.ts";
import { processResultText } from "../../host/shell/result-text.ts";
import type { ProcessResult } from "../../host/shell/result.ts";
import { deriveSupervision, describeEnding } from "../../host/shell/supervision.ts";
import { actorResult } from "../fixtures/shell-readings.ts";

describe("supervision", () => {
  it("describes running, stopping and each ending", () => {
    const running = deriveSupervision({ job: { phase: "running", stopBy: null }, timeoutMs: 1000, deadlineEpochMs: 0, lastActivityEpochMs: 500, nowEpochMs: 1500, logBytes: 3, logTruncated: false });
    expect(running).toEqual({ state: "running", stop_reason: null, deadline_utc: "1970-01-01T00:00:00.000Z", quiet_ms: 1000, log_bytes: 3, log_truncated: false, cleanup: "none", stalled: false, waiting_for_input: false, runaway: false });
    const stopping = deriveSupervision({ job: { phase: "running", stopBy: "tool" }, timeoutMs: 1000, deadlineEpochMs: null, lastActivityEpochMs: 0, nowEpochMs: 0, logBytes: 0, logTruncated: false });
    expect(stopping).toMatchObject({ state: "stopping", cleanup: "pending" });
    expect(describeEnding(actorResult({ cause: "timeout" }), null, 2000)).toMatchObject({ status: "timed_out", state: "timed_out", stopReason: "timed_out" });
    expect(describeEnding(actorResult({ cause: "stopped" }), "tool", 1)).toMatchObject({ status: "stopped", stopReason: "stopped" });
    expect(describeEnding(actorResult({ cause: "stopped" }), "session_shutdown", 1)).toMatchObject({ stopReason: "session_shutdown" });
    const quota = describeEnding(actorResult({ cause: "log_quota" }), null, 1);
    expect(quota).toMatchObject({ status: "failed", state: "log_quota", stopReason: "log_quota" });
    expect(quota.failure?.message).toContain("partial");
    expect(describeEnding(actorResult({ cause: "spawn_failed", message: "ENOENT" }), null, 1).failure).toEqual({ reason: "spawn_failed", message: "ENOENT" });
  });
});

describe("process result", () => {
  const result: ProcessResult = {
    operation: "exec_command",
    status: "running",
    running: true,
    session_id: 7,
    output: "hello\u001b[31m red\r\n",
    output_bytes: 15,
    output_omitted_bytes: 0,
    output_folded_lines: 0,
    output_rendered: "text",
    output_replayed: false,
    output_bytes_total: 15,
    log_path: "/tmp/x/job_7",
    wait_mode: "relative",
    wait_status: "deadline",
    supervision: { state: "running", stop_reason: null, deadline_utc: "2030-01-01T00:00:00.000Z", quiet_ms: 5, log_bytes: 15, log_truncated: false, cleanup: "none", stalled: false, waiting_for_input: false, runaway: false },
    cmd: "x",
    tty: false,
    on_exit: "none",
    elapsed_ms: 10,
    notes: [],
  };
  it("matches its output schema", () => {
    expect(Compile(ProcessResultSchema).Check(result)).toBe(true);
    expect(Compile(ProcessResultSchema).Check({ ...result, wait_status: "bogus" })).toBe(false);
  });
  it("renders text with the session id, wait, supervision and escaped output", () => {
    const text = processResultText(result);
    expect(text).toContain("session_id 7");
    expect(text).toContain("wait: mode=relative status=deadline");
    expect(text).toContain("not a process timeout");
    expect(text).toContain("supervision: state=running stop_reason=none deadline_utc=2030-01-01T00:00:00.000Z quiet_ms=5 log_bytes=15 log_truncated=false cleanup=none");
    expect(text).toContain("log_path: /tmp/x/job_7");
    expect(text).toContain("hello\\x1b[31m red\n");
    expect(text).not.toContain("\u001b");
  });
  it("states the exit for a completed result", () => {
    const done = { ...result, status: "exited" as const, running: false, session_id: undefined, exit_code: 2, signal: null, failure: null, wait_status: "completed" as const };
    expect(processResultText(done)).toMatch(/^Process exited with code 2/);
  });
});
