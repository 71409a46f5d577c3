import { describe, expect, it } from "vitest";
import { ResultLedger } from "../../host/delivery/ledger.ts";
import { shellJobName as job, type CompletionInfo, type DueAlert, type DueResult, type StuckAlert } from "../../host/delivery/results.ts";
import { wakeMessage } from "../../host/delivery/wake-text.ts";
import { receiptText } from "../../host/shell/receipt-text.ts";
import { NO_EVIDENCE } from "../../mailbox/evidence.ts";

const timing = { quietMs: 1000, maxDelayMs: 3000 };

const shell = (completion: CompletionInfo): DueResult => ({ kind: "shell", completion });

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

describe("ResultLedger, shell ends", () => {
  it("batches completions that finish close together into one wake", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    ledger.completed(shell(info(2)), true, 500);
    ledger.completed(shell(info(3)), true, 1000);
    expect(ledger.dueAt()).toBe(2000);
    expect(ledger.take(1999).completions).toEqual([]);
    const batch = ledger.take(2000).completions;
    expect(batch.map((c) => c.sessionId)).toEqual([1, 2, 3]);
    ledger.submitted([1, 2, 3].map(job), ledger.nextWake());
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.take(10_000).completions).toEqual([]);
  });
  it("a submitted wake is delivered only when its own message reaches the conversation, and names what it carried", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    ledger.completed(shell(info(2)), true, 0);
    const first = ledger.nextWake();
    ledger.submitted([1, 2].map(job), first);
    ledger.completed(shell(info(3)), true, 5000);
    const second = ledger.nextWake();
    ledger.submitted([job(3)], second);
    expect(second).not.toBe(first);
    expect([1, 2, 3].map((id) => ledger.stateOf(job(id)))).toEqual(["submitted", "submitted", "submitted"]);
    // The second wake's message ended first (or the first never did): only its own completions are delivered.
    expect(ledger.delivered(second, [job(3)])).toEqual([job(3)]);
    expect([1, 2, 3].map((id) => ledger.stateOf(job(id)))).toEqual(["submitted", "submitted", "delivered"]);
    expect(ledger.delivered(second, [job(3)])).toEqual([]);
    // A message that showed 1 and only counted 2 ("… and 1 more"): 2's exit code has not reached the model.
    expect(ledger.delivered(first, [job(1)])).toEqual([job(1)]);
    expect(ledger.stateOf(job(2))).toBe("submitted");
    // Delivered is still notified: arming or stopping it later changes nothing.
    expect(ledger.setArmed(job(1), false, 6000)).toBe("already_notified");
    ledger.suppress(job(1));
    expect(ledger.stateOf(job(1))).toBe("delivered");
    expect(ledger.take(100_000).completions).toEqual([]);
  });
  it("holds a completion a wait_jobs call claimed: consumed when it reports it, due from the release otherwise", () => {
    const ledger = new ResultLedger(timing);
    ledger.claim(job(1));
    ledger.claim(job(2));
    ledger.claim(job(2));
    ledger.completed(shell(info(1)), true, 0);
    ledger.completed(shell(info(2)), true, 0);
    expect(ledger.take(10_000).completions).toEqual([]);
    // Job 1 was reported by the call; job 2 was not, and a second call still waits on it.
    expect(ledger.consume(job(1))).toBe(true);
    ledger.release(job(1), 5000);
    ledger.release(job(2), 5000);
    expect(ledger.take(10_000).completions).toEqual([]);
    ledger.release(job(2), 6000);
    expect(ledger.dueAt()).toBe(7000);
    expect(ledger.take(7000).completions.map((c) => c.sessionId)).toEqual([2]);
  });
  it("never waits longer than the maximum delay after the first completion", () => {
    const ledger = new ResultLedger(timing);
    for (let t = 0; t <= 2800; t += 400) ledger.completed(shell(info(t + 1)), true, t);
    expect(ledger.dueAt()).toBe(3000);
  });
  it("owes nothing for an unarmed completion unless it is armed before collection", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), false, 0);
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.stateOf(job(1))).toBe("parked");
    expect(ledger.setArmed(job(1), true, 5000)).toBe("armed");
    expect(ledger.dueAt()).toBe(6000);
  });
  it("a direct collection consumes the pending wake", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    expect(ledger.consume(job(1))).toBe(true);
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.consume(job(1))).toBe(false);
  });
  it("an explicit stop suppresses it", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    ledger.suppress(job(1));
    expect(ledger.take(10_000).completions).toEqual([]);
  });
  it("disarming removes a pending wake; a wake already handed to Pi cannot be recalled", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    expect(ledger.setArmed(job(1), false, 10)).toBe("disarmed");
    expect(ledger.dueAt()).toBeNull();
    ledger.completed(shell(info(2)), true, 0);
    ledger.submitted(ledger.take(5000).completions.map((c) => job(c.sessionId)), ledger.nextWake());
    expect(ledger.setArmed(job(2), false, 6000)).toBe("already_notified");
  });
  it("holds a completion observed in a script until the outermost call finalizes", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    ledger.completed(shell(info(2)), true, 0);
    ledger.hold(job(1), "call-a");
    ledger.hold(job(2), "call-b");
    expect(ledger.take(10_000).completions).toEqual([]);
    ledger.finalize("call-a", true, 10_000);
    expect(ledger.stateOf(job(1))).toBe("consumed");
    ledger.finalize("call-b", false, 10_000);
    expect(ledger.take(11_000).completions.map((c) => c.sessionId)).toEqual([2]);
  });
  it("releases held completions of calls that never finalized", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    ledger.hold(job(1), "lost");
    ledger.releaseAllHeld(100);
    expect(ledger.take(1100).completions.map((c) => c.sessionId)).toEqual([1]);
  });
  it("retries a refused submission only after a boundary", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    expect(ledger.take(1000).completions).toHaveLength(1);
    ledger.submissionFailed();
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.take(50_000).completions).toEqual([]);
    ledger.boundary();
    expect(ledger.take(50_000).completions.map((c) => c.sessionId)).toEqual([1]);
  });
  it("delivers each completion at most once across every path", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    ledger.completed(shell(info(1)), true, 0);
    const first = ledger.take(1000).completions;
    ledger.submitted(first.map((c) => job(c.sessionId)), ledger.nextWake());
    ledger.boundary();
    expect(first).toHaveLength(1);
    expect(ledger.consume(job(1))).toBe(false);
    expect(ledger.take(100_000).completions).toEqual([]);
  });
});

describe("ResultLedger, monitors beside shell jobs", () => {
  const report = (n: number, piSession = 0): DueResult => ({
    kind: "monitor",
    report: { kind: "report", content: `report ${n}`, details: { description: `m${n}`, monitorId: `monitor_${n}`, result: {} as never } },
    piSession,
  });
  const watchdog = (n: number): DueAlert => ({
    kind: "monitor",
    watchdog: { kind: "watchdog", content: `uses a lot ${n}`, details: { description: `m${n}`, monitorId: `monitor_${n}`, figures: "rss=1G" } },
  });

  it("a monitor's report is due at once and alone, while a shell end waits for its batch", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(shell(info(1)), true, 0);
    ledger.completed(report(1), true, 100);
    expect(ledger.dueAt()).toBe(100);
    const now = ledger.take(100);
    expect(now.completions).toEqual([]);
    expect(now.monitors.map((m) => m.message.content)).toEqual(["report 1"]);
    ledger.submitted(["monitor_1"], ledger.nextWake());
    expect(ledger.stateOf("monitor_1")).toBe("submitted");
    expect(ledger.dueAt()).toBe(1000);
    expect(ledger.take(1000).completions.map((c) => c.sessionId)).toEqual([1]);
  });

  it("one claim and one collection for both kinds: now, then earlier; a wake already sent is said as such", () => {
    const ledger = new ResultLedger(timing);
    ledger.claim("monitor_1");
    ledger.claim(job(1));
    ledger.completed(report(1), true, 0);
    ledger.completed(shell(info(1)), true, 0);
    // Claimed: held for the waiting call, neither sent.
    expect(ledger.take(100_000).monitors).toEqual([]);
    expect(ledger.take(100_000).completions).toEqual([]);
    expect(ledger.collect("monitor_1", null)).toBe("now");
    expect(ledger.collect(job(1), null)).toBe("now");
    ledger.release("monitor_1", 5000);
    ledger.release(job(1), 5000);
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.collect("monitor_1", null)).toBe("earlier");
    ledger.completed(report(2), true, 0);
    ledger.submitted(ledger.take(0).monitors.map((m) => m.name), ledger.nextWake());
    expect(ledger.collect("monitor_2", null)).toBe("wake");
    expect(ledger.collect("monitor_3", null)).toBe("unknown");
  });

  it("a stopped monitor owes nothing; a claim released without collection sends its report then", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(report(1), true, 0);
    ledger.suppress("monitor_1");
    expect(ledger.take(100_000).monitors).toEqual([]);
    expect(ledger.collect("monitor_1", null)).toBe("none");
    ledger.claim("monitor_2");
    ledger.completed(report(2), true, 0);
    ledger.release("monitor_2", 700);
    expect(ledger.dueAt()).toBe(700);
    expect(ledger.take(700).monitors.map((m) => m.name)).toEqual(["monitor_2"]);
  });

  it("a watchdog wake about a running monitor goes at once; its end or its stop drops it", () => {
    const ledger = new ResultLedger(timing);
    ledger.stuck(watchdog(1), 50);
    expect(ledger.dueAt()).toBe(50);
    expect(ledger.take(50).monitors.map((m) => [m.name, m.message.kind, m.piSession])).toEqual([["monitor_1", "watchdog", null]]);
    ledger.alertsSubmitted(["monitor_1"]);
    expect(ledger.dueAt()).toBeNull();
    ledger.stuck(watchdog(2), 0);
    ledger.completed(report(2), true, 10);
    expect(ledger.take(10).monitors.map((m) => m.message.kind)).toEqual(["report"]);
    ledger.stuck(watchdog(3), 0);
    ledger.suppress("monitor_3");
    expect(ledger.dueAt()).toBe(10);
  });

  it("a refused message holds every kind until a boundary, and a quit clears it all", () => {
    const ledger = new ResultLedger(timing);
    ledger.completed(report(1, 0), true, 0);
    ledger.submissionFailed();
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.take(100).monitors).toEqual([]);
    ledger.piSession += 1;
    ledger.boundary();
    // The report keeps the session it was started in: its wake, sent in a later one, says so.
    expect(ledger.take(100).monitors.map((m) => m.piSession)).toEqual([0]);
    ledger.clear();
    expect(ledger.stateOf("monitor_1")).toBe("unknown");
    expect(ledger.piSession).toBe(0);
    expect(ledger.dueAt()).toBeNull();
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
  const shellAlert = (alert: StuckAlert): DueAlert => ({ kind: "shell", alert });

  it("are batched with completions and sent once", () => {
    const ledger = new ResultLedger(timing);
    ledger.stuck(shellAlert(alert(2)), 0);
    ledger.completed(shell(info(1)), true, 500);
    expect(ledger.dueAt()).toBe(1500);
    expect(ledger.take(1499).alerts).toEqual([]);
    expect(ledger.take(1500).alerts.map((a) => a.sessionId)).toEqual([2]);
    expect(ledger.take(1500).completions.map((c) => c.sessionId)).toEqual([1]);
    ledger.submitted([job(1)], ledger.nextWake());
    ledger.alertsSubmitted([job(2)]);
    expect(ledger.dueAt()).toBeNull();
    expect(ledger.take(10_000).alerts).toEqual([]);
  });

  it("an episode that ended, a completion or a stop drops the alert", () => {
    const ledger = new ResultLedger(timing);
    ledger.stuck(shellAlert(alert(1)), 0);
    ledger.unstuck(job(1));
    expect(ledger.dueAt()).toBeNull();
    ledger.stuck(shellAlert(alert(2)), 0);
    ledger.completed(shell(info(2)), false, 10);
    expect(ledger.take(10_000).alerts).toEqual([]);
    ledger.stuck(shellAlert(alert(3)), 0);
    ledger.suppress(job(3));
    expect(ledger.take(10_000).alerts).toEqual([]);
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
