/**
 * The monitor tools' own guards, driven directly (a minimal stand-in for Pi's extension API, the real instance life
 * and runtime underneath): what Pi's loop normally prevents before a call executes must still hold if a call
 * reaches `execute` anyway, and cancelling a call that waits stops its monitor.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionToolContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installInstanceLife, type InstanceLife } from "../../host/session/instance-life.ts";
import { installMonitors } from "../../host/monitor/install.ts";
import { groupGone } from "./helpers.ts";
import { installDelivery } from "../../host/delivery/install.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;

interface FakePi {
  api: ExtensionAPI;
  tools: Map<string, ToolDefinition>;
  emit(event: string, payload: unknown): Promise<void>;
  sent: unknown[];
}

function fakePi(): FakePi {
  const handlers = new Map<string, Handler[]>();
  const tools = new Map<string, ToolDefinition>();
  const sent: unknown[] = [];
  const api = {
    on: (event: string, handler: Handler) => void handlers.set(event, [...(handlers.get(event) ?? []), handler]),
    registerTool: (tool: ToolDefinition) => void tools.set(tool.name, tool),
    registerCommand: () => undefined,
    sendMessage: (message: unknown) => void sent.push(message),
    getActiveTools: () => ["monitor_start", "monitor_stop"],
  } as unknown as ExtensionAPI;
  return {
    api,
    tools,
    sent,
    async emit(event, payload) {
      for (const handler of handlers.get(event) ?? []) await handler(payload, {});
    },
  };
}

let pi: FakePi;
let life: InstanceLife;
let cwd: string;

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), "pi-jobs-monitor-tools-"));
  pi = fakePi();
  life = installInstanceLife(pi.api, { warm: 1, checkMessages: true });
  installMonitors(pi.api, life, installDelivery(pi.api, life, { stillStuck: () => false, delivered: () => {} }));
  await pi.emit("session_start", { type: "session_start", reason: "startup" });
});

afterAll(async () => {
  await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
  rmSync(cwd, { recursive: true, force: true });
});

function context(mode: ExtensionToolContext["mode"]): ExtensionToolContext {
  return { mode, cwd } as unknown as ExtensionToolContext;
}

function monitorStart(): ToolDefinition {
  const tool = pi.tools.get("monitor_start");
  if (tool === undefined) throw new Error("monitor_start is not registered");
  return tool;
}

describe("monitor_start guards", () => {
  it("a call whose signal is already aborted starts no process", async () => {
    const aborted = AbortSignal.abort();
    await expect(
      monitorStart().execute("call-1", { command: `touch ${join(cwd, "ran")}`, result_pattern: "^X$" } as never, aborted, undefined, context("print")),
    ).rejects.toThrow("monitor_start: cancelled before the monitor started");
    expect(life.runtime().list()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(join(cwd, "ran"))).toBe(false);
  });

  it("prepareArguments throws an error naming the field, for Pi to hand to the model", () => {
    const prepare = monitorStart().prepareArguments;
    expect(prepare).toBeDefined();
    expect(() => prepare?.({ command: "x", result_pattern: "^X$", timeout_ms: -5 })).toThrow(
      "monitor_start: timeout_ms: expected an integer from 1 to 2147483647",
    );
    expect(prepare?.({ command: "x", result_pattern: "^X$", description: null })).toEqual({ command: "x", result_pattern: "^X$" });
  });

  it("cancelling a call that waits stops its monitor and answers with the stopped result", async () => {
    const controller = new AbortController();
    const pending = monitorStart().execute(
      "call-2",
      { command: "echo working; exec sleep 60", description: "cancel me", result_pattern: "^X$" } as never,
      controller.signal,
      undefined,
      context("print"),
    );
    const job = await (async () => {
      for (let i = 0; i < 500; i += 1) {
        const found = life.runtime().list()[0];
        if (found?.phase() === "running") return found;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error("the monitor never started");
    })();
    controller.abort();
    const result = await pending;
    expect(result.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/^Monitor: cancel me\n[\s\S]*\nstatus=stopped\n/) });
    expect(result.structuredContent).toMatchObject({ status: "stopped" });
    expect(await groupGone(job.pgid() as number)).toBe(true);
    // A cancelled direct call never becomes a wake message.
    expect(pi.sent).toEqual([]);
  });
});
