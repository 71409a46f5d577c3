import { describe, expect, it } from "vitest";
import {
  boundHit,
  clipUtf8,
  initialContract,
  settle,
  transition,
  wantsSuccess,
  type ContractEvent,
  type ContractState,
  type ProcessEnd,
} from "../../actors/monitor/contract.ts";
import type { MatchKind } from "../../actors/match/raw-match.ts";
import type { Completion, LineSource } from "../../mailbox/monitor.ts";

const exited = (exitCode: number | null, signal: string | null = null): ProcessEnd => ({ cause: "exit", exitCode, signal });
const stoppedByContract: ProcessEnd = { cause: "contract", exitCode: null, signal: "SIGTERM" };

function hit(
  kind: MatchKind,
  text: string,
  groups: Record<string, string | undefined> | null = null,
  source: LineSource = "stdout",
  partial = false,
): ContractEvent {
  return { type: "match", source, match: { kind, text, groups }, partial };
}

function run(completion: Completion, events: ContractEvent[]): ContractState {
  return events.reduce(transition, initialContract(completion));
}

describe("match mode", () => {
  it("decides on the first success match and stops the run", () => {
    const state = run("match", [hit("success", "READY")]);
    expect(state.phase).toBe("decided");
    const verdict = settle(state, stoppedByContract);
    expect(verdict).toMatchObject({ status: "success", stoppedBy: "match", matched: "READY", matchedSource: "stdout" });
  });

  it("decides on the first failure match", () => {
    const state = run("match", [hit("failure", "FATAL: boom", { error: "boom" }, "stderr")]);
    expect(settle(state, stoppedByContract)).toMatchObject({
      status: "failure",
      matchedSource: "stderr",
      captures: { error: "boom" },
      reason: null,
    });
  });

  it("a later failure match cannot revise an earlier success", () => {
    const state = run("match", [hit("success", "OK"), hit("failure", "FATAL")]);
    expect(settle(state, stoppedByContract).status).toBe("success");
  });

  it("a later non-zero exit cannot revise the decision", () => {
    const state = run("match", [hit("success", "OK")]);
    expect(settle(state, exited(3))).toMatchObject({ status: "success", exitCode: 3, stoppedBy: null });
  });

  it("an idle partial line may decide", () => {
    const state = run("match", [hit("success", "READY port=3000", null, "stdout", true)]);
    expect(settle(state, stoppedByContract)).toMatchObject({ status: "success", matched: "READY port=3000" });
  });

  it("keeps the regex status when the JSON capture does not parse", () => {
    const state = run("match", [hit("success", "DONE {bad", { json: "{bad" })]);
    const verdict = settle(state, stoppedByContract);
    expect(verdict.status).toBe("success");
    expect(verdict.hasResult).toBe(false);
    expect(verdict.resultParseError).toEqual(expect.any(String));
  });

  it("exit 0 without a match is result_missing", () => {
    expect(settle(run("match", []), exited(0))).toMatchObject({ status: "result_missing", reason: null, exitCode: 0 });
  });

  it("a non-zero exit without a match is failure", () => {
    expect(settle(run("match", []), exited(2))).toMatchObject({ status: "failure", exitCode: 2, reason: null });
  });

  it("a signal without a match is failure", () => {
    expect(settle(run("match", []), exited(null, "SIGSEGV"))).toMatchObject({ status: "failure", signal: "SIGSEGV" });
  });
});

describe("exit mode", () => {
  it("never lets an idle partial line count", () => {
    const state = run("exit", [hit("success", "DONE", null, "stdout", true), hit("failure", "FATAL", null, "stdout", true)]);
    expect(state).toEqual(initialContract("exit"));
    expect(settle(state, exited(0)).status).toBe("result_missing");
  });

  it("a success candidate needs exit 0", () => {
    const state = run("exit", [hit("success", "DONE")]);
    expect(state.phase).toBe("watching");
    expect(settle(state, exited(0))).toMatchObject({ status: "success", matched: "DONE", stoppedBy: null });
    expect(settle(state, exited(1))).toMatchObject({ status: "failure", matched: null, exitCode: 1 });
  });

  it("a signal overrides the candidate", () => {
    const state = run("exit", [hit("success", "DONE")]);
    expect(settle(state, exited(null, "SIGKILL"))).toMatchObject({ status: "failure", signal: "SIGKILL" });
  });

  it("the first candidate is immutable, including its JSON parse error", () => {
    const state = run("exit", [
      hit("success", "DONE {bad", { json: "{bad" }),
      hit("success", 'DONE {"ok":true}', { json: '{"ok":true}' }),
    ]);
    const verdict = settle(state, exited(0));
    expect(verdict).toMatchObject({ status: "failure", reason: "invalid_json_result", matched: "DONE {bad" });
    expect(verdict.resultParseError).toEqual(expect.any(String));
    expect(verdict.hasResult).toBe(false);
  });

  it("a later valid candidate does not replace a valid first one", () => {
    const state = run("exit", [hit("success", "A", { json: "1" }), hit("success", "B", { json: "2" })]);
    expect(settle(state, exited(0))).toMatchObject({ status: "success", matched: "A", result: 1 });
  });

  it("a failure after the candidate (same batch or a later one) decides at once", () => {
    const state = run("exit", [hit("success", "DONE"), hit("failure", "FATAL")]);
    expect(state.phase).toBe("decided");
    expect(settle(state, stoppedByContract)).toMatchObject({ status: "failure", matched: "FATAL", stoppedBy: "match" });
    expect(settle(state, exited(0)).status).toBe("failure");
  });

  it("a failure before any candidate decides, and later successes change nothing", () => {
    const state = run("exit", [hit("failure", "FATAL"), hit("success", "DONE")]);
    expect(settle(state, exited(0))).toMatchObject({ status: "failure", matched: "FATAL" });
  });

  it("a valid JSON candidate with exit 0 is success with the parsed result", () => {
    const state = run("exit", [hit("success", 'R {"n":2}', { json: '{"n":2}' })]);
    expect(settle(state, exited(0))).toMatchObject({ status: "success", hasResult: true, result: { n: 2 } });
  });

  it("exit 0 without a candidate is result_missing", () => {
    expect(settle(run("exit", []), exited(0)).status).toBe("result_missing");
  });

  it("stops asking for success matches once a candidate is held", () => {
    const before = initialContract("exit");
    expect(wantsSuccess(before)).toBe(true);
    expect(wantsSuccess(transition(before, hit("success", "DONE")))).toBe(false);
    expect(wantsSuccess(initialContract("match"))).toBe(true);
    expect(wantsSuccess(run("match", [hit("success", "X")]))).toBe(false);
  });
});

describe("terminal paths that are not matches", () => {
  for (const completion of ["match", "exit"] as const) {
    it(`${completion}: timeout is timeout, even over a candidate`, () => {
      const state = run(completion, completion === "exit" ? [hit("success", "DONE")] : []);
      expect(settle(state, { cause: "timeout", exitCode: null, signal: "SIGTERM" })).toMatchObject({
        status: "timeout",
        reason: "timeout",
        matched: null,
      });
    });

    it(`${completion}: a manual stop is stopped`, () => {
      expect(settle(run(completion, []), { cause: "stopped", exitCode: null, signal: "SIGTERM" })).toMatchObject({
        status: "stopped",
        reason: null,
      });
    });

    it(`${completion}: an over-long line fails with matcher_line_limit`, () => {
      const state = run(completion, [{ type: "line_limit", source: "stdout" }, hit("success", "DONE")]);
      expect(settle(state, stoppedByContract)).toMatchObject({ status: "failure", reason: "matcher_line_limit", stoppedBy: null });
    });

    it(`${completion}: the queue limit fails with matcher_queue_limit`, () => {
      const state = run(completion, [{ type: "queue_limit" }]);
      expect(settle(state, exited(0))).toMatchObject({ status: "failure", reason: "matcher_queue_limit" });
    });

    it(`${completion}: a matcher error fails with matcher_error`, () => {
      const state = run(completion, [{ type: "matcher_error", message: "deadline" }]);
      expect(settle(state, exited(0))).toMatchObject({ status: "failure", reason: "matcher_error" });
    });

    it(`${completion}: spawn and log failures keep their cause as the reason`, () => {
      for (const cause of ["spawn_failed", "log_quota", "log_failed"] as const) {
        expect(settle(run(completion, []), { cause, exitCode: null, signal: null })).toMatchObject({ status: "failure", reason: cause });
      }
    });
  }

  it("a decision reported as the cause of the end stands whatever the exit code", () => {
    const state = run("match", [hit("success", "READY")]);
    expect(settle(state, { cause: "contract", exitCode: 143, signal: null })).toMatchObject({ status: "success", stoppedBy: "match" });
  });

  it("a decision that only came from output drained after a timeout or stop cannot revise it", () => {
    const state = run("exit", [hit("failure", "FATAL")]);
    expect(settle(state, { cause: "timeout", exitCode: null, signal: "SIGTERM" })).toMatchObject({ status: "timeout", matched: null });
    expect(settle(state, { cause: "stopped", exitCode: null, signal: "SIGTERM" }).status).toBe("stopped");
    expect(settle(state, { cause: "log_failed", exitCode: null, signal: "SIGTERM" }).reason).toBe("log_failed");
  });
});

describe("JSON results", () => {
  const jsonOutcome = (completion: Completion, raw: string) =>
    settle(run(completion, [hit("success", `R ${raw}`, { json: raw })]), completion === "exit" ? exited(0) : stoppedByContract);

  for (const [raw, value] of [["false", false], ["null", null], ["0", 0], ['""', ""]] as const) {
    it(`${raw} is a valid result`, () => {
      const verdict = jsonOutcome("exit", raw);
      expect(verdict).toMatchObject({ status: "success", hasResult: true, resultParseError: null });
      expect("result" in verdict).toBe(true);
      expect(verdict.result).toBe(value);
    });
  }

  for (const [label, raw] of [["empty", ""], ["whitespace", "  "], ["invalid", "{nope}"]] as const) {
    it(`${label} JSON fails in exit mode and keeps success in match mode`, () => {
      const exit = jsonOutcome("exit", raw);
      expect(exit).toMatchObject({ status: "failure", reason: "invalid_json_result", hasResult: false });
      expect(exit.resultParseError).toEqual(expect.any(String));
      expect("result" in exit).toBe(false);
      const match = jsonOutcome("match", raw);
      expect(match).toMatchObject({ status: "success", hasResult: false, reason: null });
      expect(match.resultParseError).toEqual(expect.any(String));
    });
  }

  it("clipped JSON is a parse error even when its prefix would parse", () => {
    const raw = `[${"1,".repeat(20_000)}1]`;
    const verdict = jsonOutcome("exit", raw);
    expect(verdict).toMatchObject({ status: "failure", reason: "invalid_json_result", capturesTruncated: true, hasResult: false });
    expect(verdict.resultParseError).toMatch(/clipped/);
    expect(Buffer.byteLength(verdict.captures.json ?? "")).toBe(32 * 1024);
  });

  it("JSON of exactly 32 KiB parses", () => {
    const raw = JSON.stringify("x".repeat(32 * 1024 - 2));
    expect(Buffer.byteLength(raw)).toBe(32 * 1024);
    const verdict = jsonOutcome("exit", raw);
    expect(verdict).toMatchObject({ status: "success", hasResult: true, capturesTruncated: false });
  });

  it("a json group that did not take part leaves no result and no error", () => {
    const verdict = settle(run("exit", [hit("success", "DONE", { json: undefined })]), exited(0));
    expect(verdict).toMatchObject({ status: "success", hasResult: false, resultParseError: null, captures: {} });
  });

  it("a failure match parses its JSON capture too", () => {
    const verdict = settle(run("exit", [hit("failure", 'F {"code":7}', { json: '{"code":7}' })]), stoppedByContract);
    expect(verdict).toMatchObject({ status: "failure", hasResult: true, result: { code: 7 } });
  });
});

describe("bounds on hits", () => {
  it("clips matched text at 4 KiB and says so", () => {
    const text = "é".repeat(3000);
    const bounded = boundHit("stdout", { kind: "success", text, groups: null });
    expect(bounded.matchedTruncated).toBe(true);
    expect(Buffer.byteLength(bounded.matched)).toBe(4096);
    expect(bounded.matched).toBe("é".repeat(2048));
  });

  it("clips an ordinary capture at 4 KiB and says so", () => {
    const bounded = boundHit("stdout", { kind: "success", text: "x", groups: { a: "a".repeat(5000), b: "short" } });
    expect(bounded.captures).toEqual({ a: "a".repeat(4096), b: "short" });
    expect(bounded.capturesTruncated).toBe(true);
  });

  it("keeps captures within 32 KiB together, JSON first, and omits what no longer fits", () => {
    const json = JSON.stringify("j".repeat(30_000));
    const groups: Record<string, string> = { a: "a".repeat(4000), json, b: "b".repeat(4000) };
    const bounded = boundHit("stdout", { kind: "success", text: "x", groups });
    const jsonBytes = Buffer.byteLength(json);
    expect(bounded.captures.json).toBe(json);
    expect(bounded.json.kind).toBe("parsed");
    expect(bounded.captures.a).toBe("a".repeat(32 * 1024 - jsonBytes));
    expect("b" in bounded.captures).toBe(false);
    expect(bounded.capturesTruncated).toBe(true);
    const total = Object.values(bounded.captures).reduce((sum, value) => sum + Buffer.byteLength(value), 0);
    expect(total).toBe(32 * 1024);
  });

  it("leaves small captures untouched and reports no truncation", () => {
    const bounded = boundHit("stderr", { kind: "failure", text: "E: x", groups: { error: "x", empty: "" } });
    expect(bounded).toMatchObject({ captures: { error: "x", empty: "" }, capturesTruncated: false, matchedTruncated: false });
  });

  it("a group named __proto__ is an ordinary capture", () => {
    const bounded = boundHit("stdout", { kind: "success", text: "x", groups: { ["__proto__"]: "v" } });
    expect(Object.getOwnPropertyDescriptor(bounded.captures, "__proto__")?.value).toBe("v");
  });

  it("clipUtf8 never splits a character", () => {
    expect(clipUtf8("a😀", 4)).toEqual({ text: "a", bytes: 1, clipped: true });
    expect(clipUtf8("a😀", 5)).toEqual({ text: "a😀", bytes: 5, clipped: false });
    expect(clipUtf8("abc", 0)).toEqual({ text: "", bytes: 0, clipped: true });
  });
});

describe("immutability of the state machine", () => {
  it("returns the same state for events after a decision", () => {
    const decided = run("match", [hit("failure", "F")]);
    expect(transition(decided, hit("success", "S"))).toBe(decided);
    expect(transition(decided, { type: "queue_limit" })).toBe(decided);
  });

  it("does not mutate the state it was given", () => {
    const start = initialContract("exit");
    const next = transition(start, hit("success", "DONE"));
    expect(start).toEqual({ phase: "watching", completion: "exit", candidate: null });
    expect(next).not.toBe(start);
  });
});
