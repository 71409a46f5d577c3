/**
 * Smoke: pi-jobs' entry point loads in real Pi 1.6 in every way Pi runs — in process through the SDK, and as the
 * `pi` CLI in print, json, rpc and interactive (TUI) modes — with the faux model answering a plain text reply.
 * Pi refuses to start when an extension fails to load, so a clean exit with the faux reply is the proof.
 */
import { afterEach, describe, expect, test } from "vitest";
import { runJson, runPrint, startRpc, type PiRecord, type RpcSession } from "./harness/cli.ts";
import { basename } from "node:path";
import { PI_JOBS_ENTRY, REPO_ROOT } from "./harness/paths.ts";
import { startSdkSession, type SdkSession } from "./harness/sdk.ts";
import { startTui, type TuiSession } from "./harness/tmux.ts";

const REPLY = [{ text: "faux reply to: {{last}}" }];
type CommandInfo = { name: string; source: string; sourceInfo?: { path?: string } };
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  // Every harness is torn down even when its test failed half-way.
  const pending = cleanups.splice(0);
  await Promise.allSettled(pending.map((cleanup) => cleanup()));
});

function assistantText(record: PiRecord): string | undefined {
  const message = record.message as { role?: string; content?: { type: string; text?: string }[] } | undefined;
  if (record.type !== "message_end" || message?.role !== "assistant") return undefined;
  return (message.content ?? []).map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

function expectNoExtensionError(stderr: string): void {
  expect(stderr).not.toMatch(/Failed to load extension|Extension error/i);
}

describe("pi-jobs loads in real Pi", () => {
  test("SDK: loaded by Pi's own loader, the session runs, shutdown is clean", async () => {
    const sdk: SdkSession = await startSdkSession({ extensions: [PI_JOBS_ENTRY], steps: REPLY });
    cleanups.push(() => sdk.dispose());

    expect(sdk.extensionPaths).toContain(PI_JOBS_ENTRY);
    await sdk.prompt("ping");
    expect(sdk.session.getLastAssistantText()).toBe("faux reply to: ping");
    expect(sdk.settledCount()).toBe(1);
    expect(sdk.faux.state.callCount).toBe(1);
    expect(sdk.eventsOf("agent_settled")).toEqual([{ type: "agent_settled", aborted: false }]);
    await sdk.dispose();
  });

  test("SDK with codemode: the codemode tool is active next to pi-jobs", async () => {
    const sdk = await startSdkSession({ extensions: [PI_JOBS_ENTRY], steps: REPLY, codemode: true });
    cleanups.push(() => sdk.dispose());

    expect(sdk.session.getActiveToolNames()).toContain("codemode");
    await sdk.prompt("ping");
    expect(sdk.session.getLastAssistantText()).toBe("faux reply to: ping");
  });

  test("print mode: prints the reply and exits 0", async () => {
    const run = await runPrint("ping", { steps: REPLY });
    expectNoExtensionError(run.stderr);
    expect({ code: run.code, stdout: run.stdout.trim() }, run.stderr).toEqual({ code: 0, stdout: "faux reply to: ping" });
  });

  test("json mode: the event stream ends settled with the reply", async () => {
    const run = await runJson("ping", { steps: REPLY });
    expectNoExtensionError(run.stderr);
    expect(run.code, run.stderr).toBe(0);
    expect(run.events[0]?.type).toBe("session");
    expect(run.events.map(assistantText).filter((text) => text !== undefined)).toEqual(["faux reply to: ping"]);
    expect(run.events.at(-1)).toEqual({ type: "agent_settled", aborted: false });
  });

  test("rpc mode: a prompt settles with the reply, closing stdin exits 0", async () => {
    const rpc: RpcSession = await startRpc({ steps: REPLY });
    cleanups.push(() => rpc.close());

    const accepted = await rpc.prompt("ping");
    expect(accepted).toMatchObject({ success: true, command: "prompt" });
    await rpc.waitForSettled(1);
    const last = await rpc.request({ type: "get_last_assistant_text" });
    expect(last).toMatchObject({ success: true, data: { text: "faux reply to: ping" } });

    // The commands Pi lists come from pi-jobs' entry point: the extension is really loaded, not merely tolerated.
    const commands = await rpc.request({ type: "get_commands" });
    expect((commands.data as { commands: CommandInfo[] }).commands).toContainEqual(
      expect.objectContaining({ name: "jobs", source: "extension", sourceInfo: expect.objectContaining({ path: PI_JOBS_ENTRY }) }),
    );

    const exit = await rpc.close();
    expect(exit, rpc.stderr()).toEqual({ code: 0, signal: null });
    expect(rpc.badLines).toEqual([]);
    expectNoExtensionError(rpc.stderr());
  });

  test("TUI under tmux: editor appears, a typed prompt gets the reply, ctrl+d quits", async () => {
    const tui: TuiSession = await startTui({ steps: REPLY, cols: 110, rows: 30 });
    cleanups.push(() => tui.kill());

    // Startup is drawn in pieces: wait for the loaded-extensions list (Pi names an `index.ts` extension after its
    // directory, and sorts the names) and the footer under the editor (the model name) on one screen.
    const startup = await tui.waitForPane(/\[Extensions\]\s+([^\n]+)[\s\S]*faux\/faux-1\b/, 30_000);
    const names = /\[Extensions\]\s+([^\n]+)/.exec(startup)![1]!.split(",").map((name) => name.trim());
    expect(names.sort()).toEqual(["faux-provider.ts", basename(REPO_ROOT)].sort());
    expectNoExtensionError(startup);

    await tui.type("say hi");
    await tui.waitForPane(/say hi/);
    await tui.sendKeys("Enter");
    await tui.waitForPane(/faux reply to: say hi/);

    await tui.sendKeys("C-d");
    await tui.waitForExit();
    expect(await tui.exitStatus()).toBe(0);
  });
});
