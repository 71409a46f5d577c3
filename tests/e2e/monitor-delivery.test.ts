/**
 * How a monitor's terminal result reaches the model, in real Pi (in process, pi-jobs loaded by Pi's own loader):
 *   - TUI and RPC, a batch of only monitor_start calls: an acknowledgement with terminate:true ends run 1, and the
 *     terminal report arrives later as one steering custom message that starts run 2 — exactly once, no progress.
 *   - a mixed batch, or a session without a UI host: the report is the tool result itself, no second message.
 *   - monitor_stop, session shutdown and /reload.
 * Commands that must outlive run 1 wait for a gate file the test creates, so no test depends on timing.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { startSdkSession, type SdkSession, type SdkSessionOptions } from "./harness/sdk.ts";
import { customMessages, textOf, toolEnds } from "./harness/transcript.ts";
import { answer, callTools, monitorCall } from "./harness/turns.ts";
import { pollUntil } from "./harness/wait.ts";

const MESSAGE_TYPE = "pi-jobs.monitor";
const open: SdkSession[] = [];

afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((sdk) => sdk.dispose()));
});

async function session(options: SdkSessionOptions): Promise<SdkSession> {
  const sdk = await startSdkSession(options);
  open.push(sdk);
  return sdk;
}

/** A command that waits for `gate` (relative to the session cwd) before it prints `line`. */
function gated(gate: string, line = "DONE"): string {
  return `while [ ! -f ${gate} ]; do sleep 0.02; done; echo ${line}`;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

/** Waits a little longer than any stray duplicate would need to show up, then returns the monitor messages. */
async function settledMessages(sdk: SdkSession): Promise<ReturnType<typeof customMessages>> {
  await sleep(300);
  return customMessages(sdk.events, MESSAGE_TYPE);
}

for (const mode of ["rpc", "tui"] as const) {
  describe(`${mode}: a batch of only monitor_start calls`, () => {
    it("acknowledges and ends run 1; the report wakes run 2 exactly once, as a steering custom message", async () => {
      const sdk = await session({ mode });
      sdk.script(
        callTools(monitorCall({ command: gated("go"), description: "background verification", result_pattern: "^DONE$" })),
        answer("read the report"),
      );
      await sdk.prompt("verify in the background");

      // Run 1 ended on the acknowledgement: one model call, settled, nothing delivered yet.
      expect(sdk.settledCount()).toBe(1);
      expect(sdk.faux.state.callCount).toBe(1);
      const [ack] = toolEnds(sdk.events);
      expect(textOf(ack?.result as { content: unknown })).toBe(
        "Monitor started: background verification\nmonitor_id=monitor_1\nterminal_result=pending",
      );
      expect(ack?.result).toMatchObject({
        terminate: true,
        structuredContent: { monitorId: "monitor_1", description: "background verification", status: "running" },
      });
      expect(customMessages(sdk.events, MESSAGE_TYPE)).toEqual([]);

      writeFileSync(join(sdk.cwd, "go"), "");
      await sdk.waitForSettled(2);
      const messages = await settledMessages(sdk);
      expect(messages).toHaveLength(1);
      const [wake] = messages;
      expect(textOf(wake as { content: unknown })).toMatch(
        /^Monitor: background verification\nmonitor_id=monitor_1\nstatus=success\nelapsed=\S+\nmatched=DONE\ncompletion=match\nstopped_by=match$/,
      );
      expect(wake?.details).toMatchObject({
        description: "background verification",
        monitorId: "monitor_1",
        result: { monitorId: "monitor_1", status: "success", matched: "DONE" },
      });
      expect(Object.keys(wake?.details as object).sort()).toEqual(["description", "monitorId", "result"]);

      // Run 2 was started by the wake, and the model read the report in it (as a user-role message).
      expect(sdk.settledCount()).toBe(2);
      expect(sdk.faux.state.callCount).toBe(2);
      const seen = sdk.requests[1]?.messages.at(-1) as { role: string; content: unknown };
      expect(seen.role).toBe("user");
      expect(textOf(seen)).toContain("Monitor: background verification");
      // No progress of any kind: no tool updates, no other custom messages.
      expect(sdk.events.filter((event) => event.type === "tool_execution_update")).toEqual([]);
      expect(customMessages(sdk.events)).toHaveLength(1);
    });
  });
}

describe("rpc: delivery details", () => {
  it("several monitors in one batch: one acknowledgement each, one wake each, never twice", async () => {
    const sdk = await session({ mode: "rpc" });
    sdk.script(
      callTools(
        monitorCall({ command: gated("go", "A_DONE"), description: "job a", result_pattern: "^A_DONE$" }),
        monitorCall({ command: gated("go", "B_DONE"), description: "job b", result_pattern: "^B_DONE$" }),
        monitorCall({ command: `${gated("go")}; exit 3`, description: "job c", result_pattern: "^NEVER$", completion: "exit" }),
      ),
      answer("one"),
      answer("two"),
      answer("three"),
    );
    await sdk.prompt("start three jobs");
    expect(sdk.settledCount()).toBe(1);
    expect(toolEnds(sdk.events).map((end) => (end.result as { terminate?: boolean }).terminate)).toEqual([true, true, true]);

    writeFileSync(join(sdk.cwd, "go"), "");
    await pollUntil(() => customMessages(sdk.events, MESSAGE_TYPE).length >= 3, { what: "three wakes" });
    await pollUntil(() => sdk.session.isStreaming === false && sdk.faux.state.callCount >= 2, { what: "the wake runs" });
    await sdk.session.agent.waitForIdle();
    const messages = await settledMessages(sdk);
    const byId = messages.map((message) => (message.details as { monitorId: string }).monitorId).sort();
    expect(byId).toEqual(["monitor_1", "monitor_2", "monitor_3"]);
    const failure = messages.find((message) => (message.details as { monitorId: string }).monitorId === "monitor_3");
    expect(textOf(failure as { content: unknown })).toMatch(/status=failure[\s\S]*exit_code=3/);
    // Every report reached the model.
    const seen = sdk.requests.slice(1).flatMap((request) => request.messages.map((message) => textOf(message as { content?: unknown })));
    for (const description of ["job a", "job b", "job c"]) {
      expect(seen.filter((text) => text.startsWith(`Monitor: ${description}\n`)).length).toBeGreaterThanOrEqual(1);
    }
  });

  it("a monitor that ends while run 1 is still finishing is delivered exactly once all the same", async () => {
    const sdk = await session({ mode: "rpc" });
    sdk.script(callTools(monitorCall({ command: "echo DONE", description: "instant", result_pattern: "^DONE$" })), answer("got it"));
    await sdk.prompt("start");
    await pollUntil(() => customMessages(sdk.events, MESSAGE_TYPE).length > 0, { what: "the wake" });
    await pollUntil(() => sdk.faux.state.callCount >= 2, { what: "the model to read the wake" });
    await sdk.session.agent.waitForIdle();
    expect(await settledMessages(sdk)).toHaveLength(1);
    expect(sdk.faux.state.callCount).toBe(2);
    const read = sdk.requests[1]?.messages.map((message) => textOf(message as { content?: unknown }));
    expect(read?.filter((text) => text.startsWith("Monitor: instant\n"))).toHaveLength(1);
  });

  it("a report that arrives while the agent works is steered in before its next model call, not held to the end", async () => {
    const sdk = await session({ mode: "rpc" });
    writeFileSync(join(sdk.cwd, "notes.txt"), "notes\n");
    sdk.script(
      callTools(monitorCall({ command: `${gated("go")}; touch finished`, description: "steered", result_pattern: "^DONE$", completion: "exit" })),
    );
    await sdk.prompt("start it");
    expect(sdk.settledCount()).toBe(1);

    // Run 2: while the model is answering, the monitor finishes and its report is queued; the model then calls a tool.
    sdk.script(
      async (...request) => {
        writeFileSync(join(sdk.cwd, "go"), "");
        await pollUntil(() => sdk.session.agent.hasQueuedMessages(), { what: "the report to be queued" });
        return callTools({ name: "read", arguments: { path: "notes.txt" } })(...request);
      },
      answer("saw it mid-run"),
    );
    await sdk.prompt("keep working");
    // The request right after the tool batch already carries the report: steer, not a follow-up after the run.
    const after = sdk.requests[2]?.messages ?? [];
    const last = after.at(-1) as { role: string; content?: unknown };
    expect(last.role).toBe("user");
    expect(textOf(last)).toMatch(/^Monitor: steered\nmonitor_id=monitor_1\nstatus=success/);
    expect((after.at(-2) as { role: string }).role).toBe("toolResult");
    expect(sdk.faux.state.callCount).toBe(3);
    expect(await settledMessages(sdk)).toHaveLength(1);
    expect(sdk.settledCount()).toBe(2);
  });

  it("a mixed batch waits inside monitor_start and returns the report directly, with no second message", async () => {
    const sdk = await session({ mode: "rpc" });
    writeFileSync(join(sdk.cwd, "notes.txt"), "side work\n");
    sdk.script(
      callTools(
        monitorCall({ command: "sleep 0.3; echo DONE", description: "mixed", result_pattern: "^DONE$", completion: "exit" }),
        { name: "read", arguments: { path: "notes.txt" } },
      ),
      answer("both done"),
    );
    await sdk.prompt("mixed batch");
    const [end] = toolEnds(sdk.events);
    expect(toolEnds(sdk.events, "read")[0]?.isError).toBe(false);
    expect(end?.result).not.toHaveProperty("terminate");
    expect(textOf(end?.result as { content: unknown })).toMatch(/^Monitor: mixed\nmonitor_id=monitor_1\nstatus=success/);
    expect((end?.result as { structuredContent: unknown }).structuredContent).toMatchObject({
      monitorId: "monitor_1",
      status: "success",
      result: { status: "success", exitCode: 0 },
    });
    expect(sdk.settledCount()).toBe(1);
    expect(await settledMessages(sdk)).toEqual([]);
    expect(sdk.settledCount()).toBe(1);
  });

  it("a batch holding an invalid monitor_start counts as mixed: the valid one returns its report directly", async () => {
    const sdk = await session({ mode: "rpc" });
    sdk.script(
      callTools(
        monitorCall({ command: "echo DONE", description: "valid", result_pattern: "^DONE$" }),
        monitorCall({ command: "echo DONE", result_pattern: "(" }),
      ),
      answer("fixed it"),
    );
    await sdk.prompt("two monitors, one broken");
    const ends = toolEnds(sdk.events);
    const valid = ends.find((end) => !end.isError);
    const invalid = ends.find((end) => end.isError);
    expect(textOf(valid?.result as { content: unknown })).toMatch(/^Monitor: valid\nmonitor_id=monitor_1\nstatus=success/);
    expect(textOf(invalid?.result as { content: unknown })).toMatch(/^monitor_start: result_pattern: Invalid regular expression/);
    expect(await settledMessages(sdk)).toEqual([]);
    expect(sdk.settledCount()).toBe(1);
  });

  it("monitor_stop stops one monitor by id: {stopped: 1}, and it never wakes the agent", async () => {
    const sdk = await session({ mode: "rpc" });
    sdk.script(callTools(monitorCall({ command: "echo $$ > one.pid; exec sleep 60", description: "server", result_pattern: "^READY$" })));
    await sdk.prompt("start the server");
    const pidFile = join(sdk.cwd, "one.pid");
    await pollUntil(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", { what: "the pid file" });
    const pid = Number(readFileSync(pidFile, "utf8"));

    sdk.script(callTools({ name: "monitor_stop", arguments: { monitor_id: "monitor_1" } }), answer("stopped it"));
    await sdk.prompt("stop it");
    const [stop] = toolEnds(sdk.events, "monitor_stop");
    expect(stop?.isError).toBe(false);
    expect(stop?.result).toMatchObject({ content: [{ type: "text", text: "stopped=1" }], structuredContent: { stopped: 1 } });
    expect(pidAlive(pid)).toBe(false);
    expect(await settledMessages(sdk)).toEqual([]);

    // The stopped monitor is finished now, and monitor_stop says so by field.
    sdk.script(callTools({ name: "monitor_stop", arguments: { monitor_id: "monitor_1" } }), answer("ok"));
    await sdk.prompt("stop it again");
    const again = toolEnds(sdk.events, "monitor_stop")[1];
    expect(again?.isError).toBe(true);
    expect(textOf(again?.result as { content: unknown })).toBe("monitor_stop: monitor_id: monitor_1 is already finished");
  });

  it("monitor_stop without an id stops every active monitor", async () => {
    const sdk = await session({ mode: "rpc" });
    sdk.script(
      callTools(
        monitorCall({ command: "exec sleep 60", description: "one", result_pattern: "^X$" }),
        monitorCall({ command: "exec sleep 60", description: "two", result_pattern: "^X$" }),
      ),
    );
    await sdk.prompt("start two");
    sdk.script(callTools({ name: "monitor_stop", arguments: {} }), answer("all stopped"));
    await sdk.prompt("stop all");
    expect(toolEnds(sdk.events, "monitor_stop")[0]?.result).toMatchObject({ structuredContent: { stopped: 2 } });
    sdk.script(callTools({ name: "monitor_stop", arguments: { monitor_id: "monitor_9" } }), answer("ok"));
    await sdk.prompt("stop a stranger");
    const stranger = toolEnds(sdk.events, "monitor_stop")[1];
    expect(textOf(stranger?.result as { content: unknown })).toBe("monitor_stop: monitor_id: monitor_9 is not a monitor of this session");
    expect(await settledMessages(sdk)).toEqual([]);
  });

  it("session shutdown stops every active monitor and delivers nothing", async () => {
    const sdk = await session({ mode: "rpc" });
    sdk.script(callTools(monitorCall({ command: "echo $$ > shut.pid; exec sleep 60", result_pattern: "^READY$" })));
    await sdk.prompt("start");
    const pidFile = join(sdk.cwd, "shut.pid");
    await pollUntil(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", { what: "the pid file" });
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(pidAlive(pid)).toBe(true);
    open.splice(open.indexOf(sdk), 1);
    await sdk.dispose();
    expect(pidAlive(pid)).toBe(false);
    expect(customMessages(sdk.events, MESSAGE_TYPE)).toEqual([]);
  });
});

describe("/reload", () => {
  it("a monitor started before /reload is delivered after it, once; new monitors run on the adopted runtime", async () => {
    const notes: string[] = [];
    const sdk = await session({ mode: "rpc", ui: { notify: (message) => notes.push(message) } });
    sdk.script(
      callTools(monitorCall({ command: gated("go"), description: "survives reload", result_pattern: "^DONE$" })),
      answer("woken after reload"),
    );
    await sdk.prompt("start");
    expect(sdk.settledCount()).toBe(1);

    await sdk.session.reload();
    const reloads = sdk.events.length;
    writeFileSync(join(sdk.cwd, "go"), "");
    await sdk.waitForSettled(2);
    const messages = await settledMessages(sdk);
    expect(messages).toHaveLength(1);
    expect(sdk.since(reloads).some((event) => event.type === "message_end" && (event as { message: { role: string } }).message.role === "custom")).toBe(true);
    expect(textOf(messages[0] as { content: unknown })).toMatch(/^Monitor: survives reload\nmonitor_id=monitor_1\nstatus=success/);

    // After the reload, a new monitor continues the numbering and runs on the runtime the new instance adopted.
    sdk.script(callTools(monitorCall({ command: "echo $$ > after.pid; exec sleep 60", description: "after reload", result_pattern: "^X$" })));
    await sdk.prompt("start another");
    const pidFile = join(sdk.cwd, "after.pid");
    await pollUntil(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", { what: "the pid file" });
    expect(textOf(toolEnds(sdk.events).at(-1)?.result as { content: unknown })).toContain("monitor_id=monitor_2");
    await sdk.prompt("/jobs");
    expect(notes.at(-1)).toMatch(/monitor · after reload/);
    // The history came through the reload too: the new instance knows monitor_1 finished.
    sdk.script(callTools({ name: "monitor_stop", arguments: { monitor_id: "monitor_1" } }), answer("ok"));
    await sdk.prompt("stop the first");
    expect(textOf(toolEnds(sdk.events, "monitor_stop")[0]?.result as { content: unknown })).toBe(
      "monitor_stop: monitor_id: monitor_1 is already finished",
    );

    const pid = Number(readFileSync(pidFile, "utf8"));
    open.splice(open.indexOf(sdk), 1);
    await sdk.dispose();
    expect(pidAlive(pid)).toBe(false);
  });
});

describe("print mode (no UI host)", () => {
  it("a monitor-only batch waits and returns the report directly, without terminate and without a custom message", async () => {
    const sdk = await session({ mode: "print" });
    sdk.script(callTools(monitorCall({ command: "sleep 0.2; echo DONE", description: "headless", result_pattern: "^DONE$" })), answer("{{done}}"));
    await sdk.prompt("go");
    const [end] = toolEnds(sdk.events);
    expect(end?.result).not.toHaveProperty("terminate");
    expect(textOf(end?.result as { content: unknown })).toMatch(/^Monitor: headless\nmonitor_id=monitor_1\nstatus=success/);
    expect(sdk.faux.state.callCount).toBe(2);
    expect(await settledMessages(sdk)).toEqual([]);
    expect(sdk.settledCount()).toBe(1);
  });
});
