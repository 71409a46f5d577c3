/**
 * Monitors with stall_seconds on the real runtime: a silent idle run and a run stuck at a prompt end as failures
 * with the reason and a next step; a silent run that works is left alone.
 */
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateMonitorStart } from "../../host/monitor/schemas.ts";
import { createJobRuntime, type SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { groupGone } from "./helpers.ts";
import { monitorsOn, type Monitors } from "./monitors.ts";

let runtime: SupervisedRuntime;
let run: Monitors["run"];

beforeAll(() => {
  runtime = createJobRuntime({ warm: 1, checkMessages: true });
  ({ run } = monitorsOn(runtime, tmpdir()));
});

afterAll(async () => {
  await runtime.shutdown();
});

describe("monitor stall_seconds", () => {
  it("a silent idle run ends as failure reason=stalled, its tail kept, with next=", async () => {
    const { report, record } = await run({ command: "echo compiling; sleep 600", result_pattern: "DONE", stall_seconds: 2, timeout_ms: 60_000 });
    const lines = report.split("\n");
    expect(lines).toEqual(expect.arrayContaining(["status=failure", "reason=stalled"]));
    expect(report).toContain("compiling");
    expect(lines.some((line) => line.startsWith("next=") && line.includes("stall_seconds"))).toBe(true);
    const pgid = record.job.pgid();
    expect(pgid === null || (await groupGone(pgid))).toBe(true);
  });

  it("a run stuck at a prompt ends as failure reason=waiting_for_input", async () => {
    const { report } = await run({ command: "printf 'Overwrite? [y/N] '; sleep 600", result_pattern: "DONE", stall_seconds: 30, timeout_ms: 60_000 });
    const lines = report.split("\n");
    expect(lines).toEqual(expect.arrayContaining(["status=failure", "reason=waiting_for_input"]));
    expect(lines.some((line) => line.startsWith("next=") && line.includes("prompt"))).toBe(true);
  });

  it("a silent run that works is not stalled", async () => {
    const { report } = await run({
      command: "node -e 'const end = Date.now() + 5000; while (Date.now() < end) {} console.log(\"DONE\")'",
      result_pattern: "DONE",
      stall_seconds: 2,
      timeout_ms: 60_000,
    });
    expect(report.split("\n")).toContain("status=success");
  });

  it("rejects a bad stall_seconds with the field named", () => {
    expect(validateMonitorStart({ command: "true", result_pattern: "x", stall_seconds: 0 })).toMatchObject({ ok: false, error: expect.stringMatching(/^stall_seconds/) });
  });
});
