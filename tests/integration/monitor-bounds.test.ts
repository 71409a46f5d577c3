/**
 * Every bound of a monitor, hit through the whole actor (service → runtime → worker → real process), and each hit
 * disclosed in the structured result and in the model-facing report: never silent. Sizes are UTF-8 bytes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJobRuntime, type SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { validateMonitorStart } from "../../host/monitor/schemas.ts";
import type { MonitorService } from "../../host/monitor/service.ts";
import { monitorsOn, type Monitors } from "./monitors.ts";

let runtime: SupervisedRuntime;
let service: MonitorService;
let run: Monitors["run"];
let cwd: string;

beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), "pi-jobs-monitor-bounds-"));
  runtime = createJobRuntime({ warm: 2, checkMessages: true });
  ({ service, run } = monitorsOn(runtime, cwd));
});

afterAll(async () => {
  await runtime.shutdown();
  rmSync(cwd, { recursive: true, force: true });
});

const bytes = (text: string): number => Buffer.byteLength(text, "utf8");
/** A Python one-liner as a shell word (python3 keeps multi-byte output exact, unlike printf across shells). */
const py = (source: string): string => `python3 -c '${source}'`;

describe("line bounds", () => {
  it("a displayed line is clipped at 10 KiB, and the report says so", async () => {
    const { facts, report } = await run({ command: py('print("é" * 8000); raise SystemExit(1)'), result_pattern: "^DONE$" });
    const [line] = facts.outcome.output;
    expect(line?.clipped).toBe(true);
    expect(bytes(line?.text ?? "")).toBeLessThanOrEqual(10 * 1024);
    expect(bytes(line?.text ?? "")).toBeGreaterThan(10 * 1024 - 4);
    // Clipped on a character boundary: no replacement character was made up.
    expect(line?.text).toMatch(/^é+$/);
    expect(report).toContain('"[stdout clipped] é');
  });

  it("a physical line over 64 KiB without a newline fails with matcher_line_limit, without waiting for exit", async () => {
    const { facts, report } = await run({
      command: "head -c 102400 /dev/zero | tr '\\0' a; exec sleep 30",
      result_pattern: "^DONE$",
      timeout_ms: 20_000,
    });
    expect(facts.outcome).toMatchObject({ status: "failure", reason: "matcher_line_limit", matched: null });
    expect(facts.elapsedMs).toBeLessThan(15_000);
    expect(report).toContain("reason=matcher_line_limit");
    expect(report).toMatch(/^next=a line exceeded the 64 KiB match limit/m);
  });

  it("a sentinel at the end of an over-long line is never matched as a fragment", async () => {
    const { facts } = await run({ command: py('print("x" * 70000 + "DONE")'), result_pattern: "DONE$", completion: "exit" });
    expect(facts.outcome).toMatchObject({ status: "failure", reason: "matcher_line_limit", matched: null });
  });

  it("a line of exactly 64 KiB is still matched", async () => {
    const { facts } = await run({ command: py('print("x" * (65536 - 4) + "DONE")'), result_pattern: "DONE$", completion: "exit" });
    expect(facts.outcome).toMatchObject({ status: "success", matched: "DONE" });
  });
});

describe("retained output (for the console)", () => {
  it("keeps at most 2,000 lines and counts what it dropped", async () => {
    const { record } = await run({ command: "seq 1 5000", result_pattern: "^NEVER$" });
    const kept = record.job.retained();
    expect(kept.lines.length).toBeLessThanOrEqual(2000);
    expect(kept.lines.at(-1)?.text).toBe("5000");
    // Exact: every line is either kept or counted as dropped, including one cut by the eviction of its first batch.
    expect(kept.lines.length + kept.droppedLines).toBe(5000);
  });

  it("keeps at most 256 KiB and counts the bytes it dropped", async () => {
    const { record } = await run({ command: py('[print(str(i).rjust(1023, "x")) for i in range(600)]'), result_pattern: "^NEVER$" });
    const kept = record.job.retained();
    const keptBytes = kept.lines.reduce((sum, line) => sum + bytes(line.text) + 1, 0);
    expect(keptBytes).toBeLessThanOrEqual(256 * 1024);
    expect(kept.droppedBytes).toBeGreaterThan(0);
    // Exact: every byte is either kept or counted as dropped, newlines included.
    expect(keptBytes + kept.droppedBytes).toBe(600 * 1024);
  });
});

describe("the terminal diagnostic tail", () => {
  it("keeps the last 100 lines and discloses the cut", async () => {
    const { facts, report } = await run({ command: "seq 1 500; exit 1", result_pattern: "^DONE$" });
    expect(facts.outcome.output).toHaveLength(100);
    expect(facts.outcome.output.at(-1)?.text).toBe("500");
    expect(facts.outcome.output[0]?.text).toBe("401");
    expect(facts.outcome.outputTruncated).toBe(true);
    expect(report).toContain("output_truncated=true");
  });

  it("keeps at most 32 KiB", async () => {
    const { facts, report } = await run({ command: py('[print(str(i).rjust(999, "y")) for i in range(80)]; raise SystemExit(2)'), result_pattern: "^DONE$" });
    const total = facts.outcome.output.reduce((sum, line) => sum + bytes(line.text), 0);
    expect(total).toBeLessThanOrEqual(32 * 1024);
    expect(facts.outcome.output.length).toBeLessThan(80);
    expect(facts.outcome.output.at(-1)?.text.endsWith("79")).toBe(true);
    expect(facts.outcome.outputTruncated).toBe(true);
    expect(report).toContain("output_truncated=true");
  });

  it("collapses adjacent identical lines with their count, keeping the order of distinct ones", async () => {
    const { facts, report } = await run({
      command: "echo start; i=0; while [ $i -lt 50 ]; do echo retrying; i=$((i+1)); done; echo 'gave up' >&2; exit 1",
      result_pattern: "^DONE$",
    });
    const stdout = facts.outcome.output.filter((line) => line.source === "stdout");
    expect(stdout).toEqual([
      { source: "stdout", text: "start", count: 1, clipped: false },
      { source: "stdout", text: "retrying", count: 50, clipped: false },
    ]);
    expect(facts.outcome.outputTruncated).toBe(false);
    expect(report).toContain('"[stdout ×50] retrying"');
  });
});

describe("matched text and captures", () => {
  it("clips matched text at 4 KiB and says so", async () => {
    const { facts, report } = await run({ command: py('print("x" * 5000)'), result_pattern: "^x+$", completion: "exit" });
    expect(facts.outcome).toMatchObject({ status: "success", matchedTruncated: true });
    expect(bytes(facts.outcome.matched ?? "")).toBe(4096);
    expect(report).toContain("matched_truncated=true");
  });

  it("clips an ordinary capture at 4 KiB and says so", async () => {
    const { facts, report } = await run({ command: py('print("GOT " + "z" * 5000)'), result_pattern: "^GOT (?<big>z+)$", completion: "exit" });
    expect(bytes(facts.outcome.captures.big ?? "")).toBe(4096);
    expect(facts.outcome.capturesTruncated).toBe(true);
    expect(report).toContain("captures_truncated=true");
  });

  it("gives the JSON capture the shared 32 KiB budget first", async () => {
    // 31,000 bytes of JSON and a 4,000-byte ordinary capture: the JSON stays whole, the other is clipped to fit.
    const { facts, report } = await run({
      command: py('import json; print("R " + json.dumps({"v": "j" * 30990}) + " TAIL " + "t" * 4000)'),
      result_pattern: "^R (?<json>\\{.*\\}) TAIL (?<tail>t+)$",
      completion: "exit",
    });
    expect(facts.outcome.hasResult).toBe(true);
    expect((facts.outcome.result as { v: string }).v).toHaveLength(30990);
    const total = Object.values(facts.outcome.captures).reduce((sum, value) => sum + bytes(value), 0);
    expect(total).toBeLessThanOrEqual(32 * 1024);
    expect(bytes(facts.outcome.captures.tail ?? "")).toBeLessThan(4000);
    expect(facts.outcome.capturesTruncated).toBe(true);
    expect(report).toContain("captures_truncated=true");
  });

  it("JSON over 32 KiB is clipped, reported as a parse error, and fails exit mode", async () => {
    const { facts, report } = await run({
      command: py('import json; print("R " + json.dumps(["k" * 40000]))'),
      result_pattern: "^R (?<json>.*)$",
      completion: "exit",
    });
    expect(facts.outcome).toMatchObject({ status: "failure", reason: "invalid_json_result", capturesTruncated: true, hasResult: false });
    expect(report.split("\n")).toEqual(expect.arrayContaining(["captures_truncated=true", "reason=invalid_json_result"]));
  });
});

describe("the matching queue", () => {
  it("pauses the pipes behind a slow matcher and resumes them; no line is skipped", async () => {
    // A backreference runs in the regex sandbox, so evaluation lags the output and the queue has to pause it.
    const verdict = validateMonitorStart({
      command: "seq 1 300000 | awk '$1 == 299999 { print \"FATAL: at \" $1; next } { print \"noise \" $1 }'",
      result_pattern: "^(\\w+)=\\1$",
      failure_pattern: "(FATAL): at (?<line>\\d+)$",
    });
    if (!verdict.ok) throw new Error(verdict.error);
    const record = service.start(verdict.value, { cwd, delivery: "direct" });
    const notices: string[] = [];
    record.job.onNotice((notice) => void notices.push(`${notice.kind}:${notice.detail ?? ""}`));
    const { facts } = await service.settle(record);
    expect(facts.outcome).toMatchObject({ status: "failure", captures: { line: "299999" } });
    expect(notices).toContain("paused:matcher");
    expect(notices).toContain("resumed:");
  });
});
