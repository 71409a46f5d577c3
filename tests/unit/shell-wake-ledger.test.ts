import { describe, expect, it } from "vitest";
import { WakeLedger, type CompletionInfo } from "../../host/shell/wake-ledger.ts";
import { wakeMessage, receiptText } from "../../host/shell/notices.ts";
import { NO_EVIDENCE } from "../../mailbox/evidence.ts";

const timing = { quietMs: 1000, maxDelayMs: 3000 };

function info(sessionId: number, extra: Partial<CompletionInfo> = {}): CompletionInfo {
  return {
    sessionId,
    cmd: `job ${sessionId}`,
    piSession: 0,
    status: "exited",
    exitCode: 0,
    signal: null,
    failureReason: null,
    logPath: `/logs/${sessionId}`,
    logTruncated: false,
    elapsedMs: 10,
    endedAtEpochMs: 0,
    evidence: NO_EVIDENCE,
    lastLines: "",
    ...extra,
  };
}

describe("WakeLedger", () => {
  it("batches completions that finish close together into one wake", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), true, 0);
    ledger.completed(info(2), true, 500);
    ledger.completed(info(3), true, 1000);
    expect(ledger.dueAt()).toBe(2000);
    expect(ledger.takeBatch(1999)).toEqual([]);
    const batch = ledger.takeBatch(2000);
    expect(batch.map((c) => c.sessionId)).toEqual([1, 2, 3]);
    ledger.submitted([1, 2, 3], ledger.nextWake());
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.takeBatch(10_000)).toEqual([]);
  });
  it("a submitted wake is delivered only when its own message reaches the conversation, and names what it carried", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), true, 0);
    ledger.completed(info(2), true, 0);
    const first = ledger.nextWake();
    ledger.submitted([1, 2], first);
    ledger.completed(info(3), true, 5000);
    const second = ledger.nextWake();
    ledger.submitted([3], second);
    expect(second).not.toBe(first);
    expect([1, 2, 3].map((id) => ledger.stateOf(id))).toEqual(["submitted", "submitted", "submitted"]);
    // The second wake's message ended first (or the first never did): only its own completions are delivered.
    expect(ledger.delivered(second, [3])).toEqual([3]);
    expect([1, 2, 3].map((id) => ledger.stateOf(id))).toEqual(["submitted", "submitted", "delivered"]);
    expect(ledger.delivered(second, [3])).toEqual([]);
    // A message that showed 1 and only counted 2 ("… and 1 more"): 2's exit code has not reached the model.
    expect(ledger.delivered(first, [1])).toEqual([1]);
    expect(ledger.stateOf(2)).toBe("submitted");
    // Delivered is still notified: arming or stopping it later changes nothing.
    expect(ledger.setArmed(1, false, 6000)).toBe("already_notified");
    ledger.suppress(1);
    expect(ledger.stateOf(1)).toBe("delivered");
    expect(ledger.takeBatch(100_000)).toEqual([]);
  });
  it("holds a completion a wait_jobs call claimed: consumed when it reports it, due from the release otherwise", () => {
    const ledger = new WakeLedger(timing);
    ledger.claim(1);
    ledger.claim(2);
    ledger.claim(2);
    ledger.completed(info(1), true, 0);
    ledger.completed(info(2), true, 0);
    expect(ledger.takeBatch(10_000)).toEqual([]);
    // Job 1 was reported by the call; job 2 was not, and a second call still waits on it.
    expect(ledger.consume(1)).toBe(true);
    ledger.release(1, 5000);
    ledger.release(2, 5000);
    expect(ledger.takeBatch(10_000)).toEqual([]);
    ledger.release(2, 6000);
    expect(ledger.dueAt()).toBe(7000);
    expect(ledger.takeBatch(7000).map((c) => c.sessionId)).toEqual([2]);
  });
  it("never waits longer than the maximum delay after the first completion", () => {
    const ledger = new WakeLedger(timing);
    for (let t = 0; t <= 2800; t += 400) ledger.completed(info(t + 1), true, t);
    expect(ledger.dueAt()).toBe(3000);
  });
  it("owes nothing for an unarmed completion unless it is armed before collection", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), false, 0);
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.stateOf(1)).toBe("parked");
    expect(ledger.setArmed(1, true, 5000)).toBe("armed");
    expect(ledger.dueAt()).toBe(6000);
  });
  it("a direct collection consumes the pending wake", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), true, 0);
    expect(ledger.consume(1)).toBe(true);
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.consume(1)).toBe(false);
  });
  it("an explicit stop suppresses it", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), true, 0);
    ledger.suppress(1);
    expect(ledger.takeBatch(10_000)).toEqual([]);
  });
  it("disarming removes a pending wake; a wake already handed to Pi cannot be recalled", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), true, 0);
    expect(ledger.setArmed(1, false, 10)).toBe("disarmed");
    expect(ledger.dueAt()).toBeNull();
    ledger.completed(info(2), true, 0);
    ledger.submitted(ledger.takeBatch(5000).map((c) => c.sessionId), ledger.nextWake());
    expect(ledger.setArmed(2, false, 6000)).toBe("already_notified");
  });
  it("holds a completion observed in a script until the outermost call finalizes", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), true, 0);
    ledger.completed(info(2), true, 0);
    ledger.hold(1, "call-a");
    ledger.hold(2, "call-b");
    expect(ledger.takeBatch(10_000)).toEqual([]);
    ledger.finalize("call-a", true, 10_000);
    expect(ledger.stateOf(1)).toBe("consumed");
    ledger.finalize("call-b", false, 10_000);
    expect(ledger.takeBatch(11_000).map((c) => c.sessionId)).toEqual([2]);
  });
  it("releases held completions of calls that never finalized", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), true, 0);
    ledger.hold(1, "lost");
    ledger.releaseAllHeld(100);
    expect(ledger.takeBatch(1100).map((c) => c.sessionId)).toEqual([1]);
  });
  it("retries a refused submission only after a boundary", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), true, 0);
    expect(ledger.takeBatch(1000)).toHaveLength(1);
    ledger.submissionFailed();
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.takeBatch(50_000)).toEqual([]);
    ledger.boundary();
    expect(ledger.takeBatch(50_000).map((c) => c.sessionId)).toEqual([1]);
  });
  it("delivers each completion at most once across every path", () => {
    const ledger = new WakeLedger(timing);
    ledger.completed(info(1), true, 0);
    ledger.completed(info(1), true, 0);
    const first = ledger.takeBatch(1000);
    ledger.submitted(first.map((c) => c.sessionId), ledger.nextWake());
    ledger.boundary();
    expect(first).toHaveLength(1);
    expect(ledger.consume(1)).toBe(false);
    expect(ledger.takeBatch(100_000)).toEqual([]);
  });
});

describe("wake and receipt texts", () => {
  it("a failed job's wake shows its evidence, then its last lines, escaped and bounded", () => {
    const evidence = {
      count: 2,
      omitted: 0,
      blocks: [{ line: 6, headline: "f101.c:2:14: error: 'undefined_symbol' undeclared", lines: ["5: f101.c: In function 'f101':", "6: f101.c:2:14: error: 'undefined_symbol' undeclared\u001b[31m"] }],
    };
    const { content } = wakeMessage([info(3, { exitCode: 2, evidence, lastLines: "make: Target 'all' not remade because of errors." })]);
    const lines = content.split("\n");
    const at = lines.findIndex((line) => line.startsWith("- session_id 3: exited with code 2"));
    expect(lines.slice(at + 1, at + 6)).toEqual([
      "  evidence:",
      "    5: f101.c: In function 'f101':",
      "    6: f101.c:2:14: error: 'undefined_symbol' undeclared\\x1b[31m",
      "  last lines:",
      "    make: Target 'all' not remade because of errors.",
    ]);
    expect(content).not.toContain("\u001b");
  });

  it("carry metadata only, bounded in count", () => {
    const many = Array.from({ length: 20 }, (_, i) => info(i + 1, { cmd: `echo SECRET_OUTPUT_${i}\u001b[2J` }));
    const { content, details } = wakeMessage(many);
    expect(content).toContain("20 background jobs");
    expect(content).toContain("session_id 1: exited with code 0");
    expect(content).toContain("/logs/1");
    expect(content).toContain("4 more");
    expect(content).not.toContain("\u001b");
    expect(details.sessions).toHaveLength(16);
    expect(details.omitted).toBe(4);
  });
  it("says which jobs were started in an earlier session of this Pi, and only those", () => {
    const { content, details } = wakeMessage([info(1, { piSession: 0 }), info(2, { piSession: 1 })], [], 1);
    expect(content).toContain("- session_id 1 (started in an earlier session): exited with code 0");
    expect(content).toContain("- session_id 2: exited with code 0");
    expect(details.sessions.map((s) => s.earlier_session)).toEqual([true, undefined]);
  });

  it("the receipt names recovery ids, exit status and log paths", () => {
    const text = receiptText([
      { sessionId: 2, state: "exited with code 3", running: false, logPath: "/l/2", replayable: true, gone: false },
      { sessionId: 1, state: "running", running: true, logPath: "/l/1", replayable: false, gone: false },
    ]);
    expect(text.split("\n")[0]).toBe("[shell-jobs results]");
    expect(text).toMatch(/session_id 1: running.*\/l\/1/);
    expect(text).toMatch(/session_id 2: exited with code 3 · final output replayable.*\/l\/2/);
  });
});

describe("stuck alerts", () => {
  const alert = (sessionId: number, kind: "stalled" | "waiting_for_input" = "waiting_for_input") => ({
    sessionId,
    cmd: `job ${sessionId}`,
    kind,
    prompt: kind === "waiting_for_input" ? "Password: " : null,
    tty: false,
    logPath: `/logs/${sessionId}`,
  });

  it("are batched with completions and sent once", () => {
    const ledger = new WakeLedger(timing);
    ledger.stuck(alert(2), 0);
    ledger.completed(info(1), true, 500);
    expect(ledger.dueAt()).toBe(1500);
    expect(ledger.takeAlerts(1499)).toEqual([]);
    expect(ledger.takeAlerts(1500).map((a) => a.sessionId)).toEqual([2]);
    expect(ledger.takeBatch(1500).map((c) => c.sessionId)).toEqual([1]);
    ledger.submitted([1], ledger.nextWake());
    ledger.alertsSubmitted([2]);
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.takeAlerts(10_000)).toEqual([]);
  });

  it("an episode that ended, a completion or a stop drops the alert", () => {
    const ledger = new WakeLedger(timing);
    ledger.stuck(alert(1), 0);
    ledger.unstuck(1);
    expect(ledger.dueAt()).toBeNull();
    ledger.stuck(alert(2), 0);
    ledger.completed(info(2), false, 10);
    expect(ledger.takeAlerts(10_000)).toEqual([]);
    ledger.stuck(alert(3), 0);
    ledger.suppress(3);
    expect(ledger.takeAlerts(10_000)).toEqual([]);
  });

  it("the wake says what the job waits for and what to do, metadata only", () => {
    const message = wakeMessage([], [alert(4), alert(5, "stalled")]);
    expect(message.content).toContain("[shell-jobs] 2 running jobs may be stuck:");
    expect(message.content).toContain("session_id 4 appears to be waiting for input: `Password: `; answer with write_stdin or kill it (pipes: a program that reads a terminal needs tty: true; otherwise answer on stdin)");
    expect(message.content).toContain("session_id 5 appears stalled");
    expect(message.details).toEqual({
      sessions: [],
      omitted: 0,
      stuck: [
        { session_id: 4, kind: "waiting_for_input", prompt: "Password: ", tty: false, log_path: "/logs/4", cmd: "job 4" },
        { session_id: 5, kind: "stalled", prompt: null, tty: false, log_path: "/logs/5", cmd: "job 5" },
      ],
    });
  });
});
