/**
 * Monitors in the real `pi` CLI, answered by the scripted faux model (tests/fixtures/faux-provider.ts; "{{last}}"
 * in a reply echoes the last transcript message, so the printed answer shows what the model received):
 *   - print mode (`-p`) and JSON mode: monitor_start waits and its report is the tool result; nothing follows;
 *   - RPC mode: a monitor-only batch is acknowledged and ends run 1; the report wakes run 2 exactly once;
 *   - the interactive TUI under tmux: the same asynchronous path, seen on the screen.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "@earendil-works/pi-ai";
import type { FauxStep } from "../fixtures/faux-provider.ts";
import { runJson, runPrint, startRpc, type PiRecord } from "./harness/cli.ts";
import { makeTempDir, removeDir } from "./harness/paths.ts";
import { startTui } from "./harness/tmux.ts";

const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function workDir(): string {
  const dir = makeTempDir("monitor-cli");
  cleanups.push(() => removeDir(dir));
  return dir;
}

const monitorStep = (args: JsonObject): FauxStep => ({ toolCalls: [{ name: "monitor_start", arguments: args }] });

function messageOf(record: PiRecord): { role?: string; customType?: string; content?: unknown } | undefined {
  return record.type === "message_end" ? (record.message as { role?: string; customType?: string; content?: unknown }) : undefined;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

describe("headless modes return the report directly", () => {
  it("print mode (-p): the model receives the terminal report as the tool result", async () => {
    const run = await runPrint("check the build", {
      steps: [
        monitorStep({
          command: "i=0; while [ $i -lt 300 ]; do echo compiling $i; i=$((i+1)); done; echo 'BUILD_OK {\"warnings\":0}'",
          description: "build",
          result_pattern: "^BUILD_OK (?<json>.*)$",
          completion: "exit",
        }),
        { text: "model saw: {{last}}" },
      ],
    });
    expect(run.code).toBe(0);
    const printed = run.stdout.trim().split("\n");
    expect(printed[0]).toBe("model saw: Monitor: build");
    expect(printed).toEqual(expect.arrayContaining(["status=success", "completion=exit", 'result={"warnings":0}']));
    expect(run.stdout).not.toContain("compiling");
    expect(run.stderr).not.toMatch(/Extension error|ctx is stale/i);
  });

  it("JSON mode: structuredContent on the tool result, and no custom message afterwards", async () => {
    const run = await runJson("probe", {
      steps: [
        monitorStep({ command: "echo 'Task finished without contract'", description: "silent finish probe", result_pattern: "EXPECTED_SENTINEL_XYZ" }),
        { text: "noted" },
      ],
    });
    expect(run.code).toBe(0);
    const end = run.events.find((event) => event.type === "tool_execution_end" && event.toolName === "monitor_start");
    expect(end?.result).toMatchObject({
      structuredContent: {
        description: "silent finish probe",
        status: "result_missing",
        result: { status: "result_missing", exitCode: 0, output: [{ source: "stdout", text: "Task finished without contract" }] },
      },
    });
    expect((end?.result as { terminate?: boolean }).terminate).toBeUndefined();
    expect(run.events.filter((event) => messageOf(event)?.role === "custom")).toEqual([]);
    expect(run.events.filter((event) => event.type === "agent_settled")).toHaveLength(1);
  });
});

describe("asynchronous delivery in UI modes", () => {
  it("RPC: the acknowledgement ends run 1; the report starts run 2, once", async () => {
    const cwd = workDir();
    const rpc = await startRpc({
      cwd,
      steps: [
        monitorStep({ command: "while [ ! -f go ]; do sleep 0.02; done; echo DONE", description: "background verification", result_pattern: "^DONE$" }),
        { text: "woke with: {{last}}" },
      ],
    });
    cleanups.push(() => rpc.close());
    await rpc.prompt("verify in the background");
    await rpc.waitForSettled(1);
    const ack = rpc.records.find((record) => record.type === "tool_execution_end" && record.toolName === "monitor_start");
    expect(ack?.result).toMatchObject({
      terminate: true,
      content: [{ type: "text", text: "Monitor started: background verification\nmonitor_id=monitor_1\nterminal_result=pending" }],
    });

    writeFileSync(join(cwd, "go"), "");
    await rpc.waitForSettled(2);
    const last = await rpc.request({ type: "get_last_assistant_text" });
    expect((last.data as { text: string }).text).toMatch(/^woke with: Monitor: background verification\nmonitor_id=monitor_1\nstatus=success/);
    // Give a duplicate every chance to show before counting.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const wakes = rpc.records.filter((record) => messageOf(record)?.customType === "pi-jobs.monitor");
    expect(wakes).toHaveLength(1);
    expect(rpc.settledCount()).toBe(2);
    expect(await rpc.close()).toEqual({ code: 0, signal: null });
    expect(rpc.badLines).toEqual([]);
  });

  it("TUI: the monitor is acknowledged, then its report wakes the agent on screen", async () => {
    const cwd = workDir();
    const tui = await startTui({
      cwd,
      cols: 120,
      rows: 40,
      steps: [
        monitorStep({ command: "while [ ! -f go ]; do sleep 0.02; done; echo DONE", description: "tui verification", result_pattern: "^DONE$" }),
        { text: "WOKEN-BY-REPORT" },
      ],
    });
    cleanups.push(() => tui.kill());
    await tui.waitForPane(/faux-1/, 30_000);
    await tui.type("start the monitor");
    await tui.waitForPane(/start the monitor/);
    await tui.sendKeys("Enter");
    await tui.waitForPane(/terminal_result=pending|Monitor started: tui verification|started · tui verification/, 30_000);
    // Run 1 is over: the model has not answered yet.
    expect(await tui.capture()).not.toContain("WOKEN-BY-REPORT");
    writeFileSync(join(cwd, "go"), "");
    await tui.waitForPane(/WOKEN-BY-REPORT/, 20_000);
  });
});
