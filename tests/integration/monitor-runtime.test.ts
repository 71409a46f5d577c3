/**
 * The monitor contract through the whole actor: the monitor service on a real job runtime (warm pool, worker-thread
 * actors, real process groups), one rule per test. Engine-level tests (monitor-engine.test.ts) prove the same rules
 * on the engine alone; these prove that the actor, the supervisor and the service keep them: what ends the group,
 * when, which exit code and signal are reported, and what the model-facing report says.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createJobRuntime, type SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { validateMonitorStart } from "../../host/monitor/schemas.ts";
import type { FinalReport, MonitorRecord, MonitorService } from "../../host/monitor/service.ts";
import { groupGone, pidAlive, waitFor } from "./helpers.ts";
import { monitorsOn, type Monitors } from "./monitors.ts";
import type { MonitorMessage } from "../../host/delivery/results.ts";

let runtime: SupervisedRuntime;
let service: MonitorService;
let start: Monitors["start"];
let run: Monitors["run"];
let deliveries: MonitorMessage[];
let cwd: string;

beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), "pi-jobs-monitor-runtime-"));
  runtime = createJobRuntime({ warm: 2, checkMessages: true });
  ({ service, start, run, deliveries } = monitorsOn(runtime, cwd));
});

afterAll(async () => {
  await runtime.shutdown();
  rmSync(cwd, { recursive: true, force: true });
});

function file(name: string): string {
  return join(cwd, name);
}

describe("contract rules through the actor", () => {
  it("scans stderr as well as stdout, for success", async () => {
    const { facts, report } = await run({ command: "echo noise; echo READY >&2; exec sleep 30", result_pattern: "^READY$" });
    expect(facts.outcome).toMatchObject({ status: "success", matchedSource: "stderr", stoppedBy: "match" });
    expect(report).toContain("status=success");
  });

  it("scans stderr as well as stdout, for failure", async () => {
    const { facts } = await run({
      command: "echo progress; echo 'E: disk full' >&2; exec sleep 30",
      result_pattern: "^DONE$",
      failure_pattern: "^E: (?<error>.*)$",
    });
    expect(facts.outcome).toMatchObject({ status: "failure", matchedSource: "stderr", captures: { error: "disk full" } });
  });

  it("a failure match beats a success match on the same line", async () => {
    const { facts } = await run({ command: "echo 'DONE but FATAL'; exec sleep 30", result_pattern: "DONE", failure_pattern: "FATAL" });
    expect(facts.outcome).toMatchObject({ status: "failure", matched: "FATAL", stoppedBy: "match" });
  });

  it("match mode: the first match stops the whole group, descendants included", async () => {
    const { facts, record, report } = await run({
      command: `sleep 30 & echo $! > ${file("child.pid")}; echo READY; sleep 30`,
      result_pattern: "^READY$",
    });
    expect(facts.outcome).toMatchObject({ status: "success", stoppedBy: "match", completion: "match" });
    expect(facts.elapsedMs).toBeLessThan(20_000);
    expect(report.split("\n")).toEqual(expect.arrayContaining(["completion=match", "stopped_by=match"]));
    // The kill the monitor caused is not reported as the command's own exit.
    expect(report).not.toMatch(/exit_code=|signal=/);
    expect(record.job.result()).toMatchObject({ cause: "contract", cleanup: "confirmed" });
    expect(await groupGone(record.job.pgid() as number)).toBe(true);
    expect(pidAlive(Number(readFileSync(file("child.pid"), "utf8")))).toBe(false);
  });

  it("match mode: a later failure cannot revise the first match", async () => {
    const { facts } = await run({ command: "echo READY; echo FATAL; exit 3", result_pattern: "^READY$", failure_pattern: "FATAL" });
    expect(facts.outcome.status).toBe("success");
  });

  it("match mode: an unterminated line idle for 150 ms is matched without waiting for exit or timeout", async () => {
    const { facts } = await run({
      command: "printf 'READY port=3000'; exec sleep 30",
      result_pattern: "^READY port=(?<port>\\d+)$",
      timeout_ms: 20_000,
    });
    expect(facts.outcome).toMatchObject({ status: "success", stoppedBy: "match", captures: { port: "3000" } });
    expect(facts.elapsedMs).toBeLessThan(15_000);
  });

  it("match mode: the idle probe does not commit a partial line (a writer pausing mid-line still matches)", async () => {
    const { facts } = await run({ command: "printf 'REA'; sleep 0.5; printf 'DY\\n'; exec sleep 30", result_pattern: "^READY$" });
    expect(facts.outcome).toMatchObject({ status: "success", matched: "READY" });
    expect(facts.elapsedMs).toBeGreaterThanOrEqual(450);
  });

  it("exit mode never evaluates an idle partial line; the complete line decides", async () => {
    const command = "printf 'DONE'; sleep 0.5; printf 'X\\n'";
    const exit = await run({ command, result_pattern: "^DONE$", completion: "exit" });
    expect(exit.facts.outcome).toMatchObject({ status: "result_missing", exitCode: 0, matched: null });
    // The same output in match mode resolves on the idle partial.
    const match = await run({ command: `${command}; sleep 30`, result_pattern: "^DONE$" });
    expect(match.facts.outcome).toMatchObject({ status: "success", matched: "DONE", stoppedBy: "match" });
  });

  it("exit mode: a success candidate waits for the process to exit 0", async () => {
    const { facts, report } = await run({ command: "echo DONE; sleep 0.5; echo tidy-up", result_pattern: "^DONE$", completion: "exit" });
    expect(facts.outcome).toMatchObject({ status: "success", stoppedBy: null, exitCode: 0, completion: "exit" });
    expect(facts.elapsedMs).toBeGreaterThanOrEqual(450);
    expect(report).toContain("completion=exit");
    expect(report).not.toContain("stopped_by=");
  });

  it("exit mode: a non-zero exit overrides the candidate", async () => {
    const { facts, report } = await run({ command: "echo DONE; exit 4", result_pattern: "^DONE$", completion: "exit" });
    expect(facts.outcome).toMatchObject({ status: "failure", exitCode: 4, reason: null });
    expect(report).toContain("exit_code=4");
    expect(report).toMatch(/^next=/m);
  });

  it("exit mode: a later failure match decides at once and stops the group", async () => {
    const { facts, record } = await run({
      command: "echo DONE; sleep 0.2; echo FATAL; exec sleep 30",
      result_pattern: "^DONE$",
      failure_pattern: "^FATAL$",
      completion: "exit",
    });
    expect(facts.outcome).toMatchObject({ status: "failure", matched: "FATAL", stoppedBy: "match" });
    expect(facts.elapsedMs).toBeLessThan(20_000);
    expect(await groupGone(record.job.pgid() as number)).toBe(true);
  });

  it("exit mode: the first candidate is immutable, its JSON parse error included", async () => {
    const { facts, report } = await run({
      command: `echo 'DONE {bad'; echo 'DONE {"ok":true}'`,
      result_pattern: "^DONE (?<json>.*)$",
      completion: "exit",
    });
    expect(facts.outcome).toMatchObject({ status: "failure", reason: "invalid_json_result", hasResult: false, matched: "DONE {bad" });
    expect(report).toContain("reason=invalid_json_result");
  });

  it("exit mode: a signal overrides the candidate", async () => {
    const { facts } = await run({ command: "echo DONE; kill -KILL $$", result_pattern: "^DONE$", completion: "exit" });
    expect(facts.outcome).toMatchObject({ status: "failure", signal: "SIGKILL" });
  });

  it("a non-zero exit without a match is failure, with the exit code and the output tail", async () => {
    const { facts, report } = await run({ command: "echo compiling; echo 'ld: missing symbol' >&2; exit 7", result_pattern: "^DONE$" });
    expect(facts.outcome).toMatchObject({ status: "failure", exitCode: 7, reason: null, stoppedBy: null });
    expect(report).toContain("exit_code=7");
    expect(report).toContain('"[stderr] ld: missing symbol"');
  });

  it("exit 0 without a match is result_missing, naming the pattern it expected", async () => {
    const { facts, report } = await run({ command: "echo finished", result_pattern: "EXPECTED_SENTINEL" });
    expect(facts.outcome).toMatchObject({ status: "result_missing", exitCode: 0 });
    expect(report.split("\n")).toEqual(expect.arrayContaining(["expected=EXPECTED_SENTINEL", "exit_code=0"]));
  });

  it("timeout sends SIGTERM to the group, then SIGKILL after one second", async () => {
    const log = file("term.log");
    const { facts, record, report } = await run({
      // The shell survives SIGTERM (its trap notes it); its sleep does not, so the loop goes on until SIGKILL.
      command: `trap 'echo term >> ${log}' TERM; echo started; while :; do sleep 0.05; done`,
      result_pattern: "^NEVER$",
      // Long enough that the shell has set its trap and printed before the deadline on a busy machine.
      timeout_ms: 3_000,
    });
    expect(facts.outcome).toMatchObject({ status: "timeout", reason: "timeout" });
    expect(readFileSync(log, "utf8")).toContain("term");
    expect(record.job.result()).toMatchObject({ cause: "timeout", escalated: true, cleanup: "confirmed" });
    // The grace is a floor: SIGKILL never comes before 3 s + 1 s.
    expect(facts.elapsedMs).toBeGreaterThanOrEqual(3_950);
    expect(await groupGone(record.job.pgid() as number)).toBe(true);
    expect(report.split("\n")).toEqual(expect.arrayContaining(["status=timeout", "reason=timeout", "timeout_ms=3000"]));
    expect(report).toContain('"[stdout] started"');
  });

  // The supervisor's backstop (timeoutMs + grace + slack) passes Node's 2^31-1 ms timer limit; Node would fire such
  // a timer after 1 ms, and the supervisor would kill a healthy job as unresponsive.
  it("the largest timeout_ms (2147483647) runs the command like any other", async () => {
    const { facts } = await run({ command: "sleep 0.2; echo DONE", result_pattern: "^DONE$", completion: "exit", timeout_ms: 2_147_483_647 });
    expect(facts.outcome).toMatchObject({ status: "success", reason: null });
  });

  it("timeout keeps the unterminated diagnostic tail", async () => {
    // The deadline leaves the command ample time to print first, however busy the machine.
    const { facts } = await run({ command: "echo line; printf 'half a line'; exec sleep 30", result_pattern: "^NEVER$", completion: "exit", timeout_ms: 3_000 });
    expect(facts.outcome.status).toBe("timeout");
    expect(facts.outcome.output.map((line) => line.text)).toEqual(["line", "half a line"]);
  });

  it("natural exit drains every line before deciding (inline matching)", async () => {
    const { facts } = await run({ command: "seq 1 200000; echo DONE", result_pattern: "^DONE$", completion: "exit" });
    expect(facts.outcome).toMatchObject({ status: "success", matched: "DONE", exitCode: 0 });
  });

  it("natural exit waits for pending sandbox evaluation before deciding", async () => {
    // A backreference cannot run in linear time, so every line goes through the regex sandbox's queue.
    const { facts } = await run({ command: "seq 1 20000; echo abc=abc", result_pattern: "^(\\w+)=\\1$", completion: "exit" });
    expect(facts.outcome).toMatchObject({ status: "success", matched: "abc=abc", exitCode: 0 });
  });

  describe("JSON captures", () => {
    const json = (payload: string, completion: "match" | "exit") =>
      run({
        command: completion === "exit" ? `printf 'RESULT %s\\n' '${payload}'` : `printf 'RESULT %s\\n' '${payload}'; exec sleep 30`,
        result_pattern: "^RESULT (?<json>.*)$",
        completion,
      });

    for (const [payload, value] of [["false", false], ["null", null], ["0", 0]] as const) {
      it(`${payload} is a valid result`, async () => {
        const { facts, report } = await json(payload, "exit");
        expect(facts.outcome).toMatchObject({ status: "success", hasResult: true, resultParseError: null });
        expect(facts.outcome.result).toBe(value);
        expect(report).toContain(`result=${payload}`);
      });
    }

    it("invalid JSON in match mode keeps the regex status and says it did not parse", async () => {
      const { facts, report } = await json("{oops", "match");
      expect(facts.outcome).toMatchObject({ status: "success", hasResult: false, stoppedBy: "match" });
      expect(facts.outcome.resultParseError).toEqual(expect.any(String));
      expect(report).toMatch(/^result_parse_error=/m);
      expect(report).toMatch(/^next=/m);
    });

    it("invalid JSON in exit mode is failure with reason invalid_json_result", async () => {
      const { facts, report } = await json("{oops", "exit");
      expect(facts.outcome).toMatchObject({ status: "failure", reason: "invalid_json_result", hasResult: false });
      expect(report).toContain("reason=invalid_json_result");
    });

    it("empty JSON is invalid too", async () => {
      const { facts } = await json("", "exit");
      expect(facts.outcome).toMatchObject({ status: "failure", reason: "invalid_json_result" });
    });
  });

  it("elapsed is monotonic and independent of the wall clock; timestamps are epoch milliseconds", async () => {
    const before = Date.now();
    const record = start({ command: "sleep 0.3; echo DONE", result_pattern: "^DONE$", completion: "exit" });
    await waitFor(() => record.job.phase() === "running", 30_000, "spawn");
    // The wall clock jumps an hour ahead while the monitor runs: elapsed must not notice.
    const jump = vi.spyOn(Date, "now").mockImplementation(() => before + 3_600_000);
    let final: FinalReport;
    try {
      final = await service.settle(record);
    } finally {
      jump.mockRestore();
    }
    const { facts } = final;
    expect(facts.outcome.status).toBe("success");
    expect(facts.elapsedMs).toBeGreaterThanOrEqual(250);
    expect(facts.elapsedMs).toBeLessThan(60_000);
    expect(facts.startedAt).not.toBeNull();
    expect(facts.startedAt as number).toBeGreaterThanOrEqual(before - 1_000);
    expect(facts.startedAt as number).toBeLessThan(before + 60_000);
    expect(facts.completedAt).toBe(before + 3_600_000);
  });
});

describe("stop and delivery through the service", () => {
  it("an asynchronous monitor is delivered exactly once, with its full report and structured details", async () => {
    const before = deliveries.length;
    const record = start({ command: "echo DONE", result_pattern: "^DONE$", description: "quick job", compact: true }, "async");
    await service.settle(record);
    await waitFor(() => deliveries.length > before, 30_000, "the delivery");
    // Let anything else that might be queued arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const mine = deliveries.slice(before).filter((delivery) => delivery.details.monitorId === record.monitorId);
    expect(mine).toHaveLength(1);
    // An asynchronous report is never the compact direct form: it names its monitor.
    expect(mine[0]?.content).toMatch(new RegExp(`^Monitor: quick job\\nmonitor_id=${record.monitorId}\\nstatus=success`));
    expect(mine[0]?.details).toMatchObject({ description: "quick job", monitorId: record.monitorId, result: { status: "success" } });
  });

  it("a manual stop delivers nothing, keeps the run in history as stopped with its diagnostics", async () => {
    const before = deliveries.length;
    const record = start({ command: "echo working; printf 'partial'; exec sleep 30", result_pattern: "^DONE$" }, "async");
    // Both writes read (they may arrive in two chunks on a loaded machine) before the stop.
    await waitFor(() => record.job.figures().bytes >= "working\npartial".length, 30_000, "both writes");
    expect(await service.stop(record.monitorId)).toBe(1);
    expect(service.active()).not.toContain(record);
    expect(service.history()).toContain(record);
    expect(record.final?.facts.outcome).toMatchObject({ status: "stopped" });
    expect(record.final?.facts.outcome.output.map((line) => line.text)).toEqual(["working", "partial"]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(deliveries.slice(before)).toEqual([]);
    expect(await groupGone(record.job.pgid() as number)).toBe(true);
  });

  it("stop(null) stops every active monitor and says how many", async () => {
    const records = [1, 2, 3].map(() => start({ command: "exec sleep 30", result_pattern: "^DONE$" }, "async"));
    expect(await service.stop(null)).toBe(3);
    for (const record of records) expect(record.final?.facts.outcome.status).toBe("stopped");
    expect(await service.stop(null)).toBe(0);
  });

  it("keeps the 20 most recently finished monitors in history", async () => {
    const records: MonitorRecord[] = [];
    // One after another, so finishing order is start order (and each reuses a warm thread).
    for (let i = 0; i < 23; i += 1) {
      const record = start({ command: `echo run-${i}`, result_pattern: "^NEVER$" });
      await service.settle(record);
      records.push(record);
    }
    expect(service.history()).toEqual(records.slice(-20));
  });

  it("a command whose working directory is missing fails with a reason instead of hanging", async () => {
    const verdict = validateMonitorStart({ command: "echo hi", result_pattern: "^hi$" });
    if (!verdict.ok) throw new Error(verdict.error);
    const record = service.start(verdict.value, { cwd: join(cwd, "no-such-dir"), delivery: "direct" });
    const { facts, report } = await service.settle(record);
    expect(facts.outcome).toMatchObject({ status: "failure", reason: "spawn_failed" });
    expect(report).toContain("reason=spawn_failed");
    expect(existsSync(join(cwd, "no-such-dir"))).toBe(false);
  });
});
