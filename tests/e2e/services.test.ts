/**
 * Services and stuck jobs in real Pi (SDK, faux model, Pi's own extension loader): one readiness call on a real
 * HTTP server, and one stuck-job wake that starts a turn in an idle session.
 */
import { fauxAssistantMessage, fauxToolCall, type FauxResponseFactory, type Message } from "@earendil-works/pi-ai";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { messageText } from "../fixtures/faux-provider.ts";
import { freePort } from "../fixtures/free-port.ts";
import { overlayHost, type OpenedComponent } from "../fixtures/overlay-host.ts";
import { REPO_ROOT } from "./harness/paths.ts";
import { startSdkSession, wakeMessages, type SdkSession, type SdkSessionOptions } from "./harness/sdk.ts";

const SHELL_ENTRY = join(REPO_ROOT, "tests", "fixtures", "shell-jobs-extension.ts");
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

function call(name: string, args: Record<string, unknown>): FauxResponseFactory {
  return () => fauxAssistantMessage([fauxToolCall(name, args as Parameters<typeof fauxToolCall>[1])], { stopReason: "toolUse" });
}

async function start(responses: FauxResponseFactory[], ui?: Pick<SdkSessionOptions, "ui" | "mode">): Promise<SdkSession> {
  const sdk = await startSdkSession({ extensions: [SHELL_ENTRY], responses, ...ui });
  cleanups.push(() => sdk.dispose());
  return sdk;
}

type ToolEnd = { toolName: string; isError: boolean; result: { content: { type: string; text?: string }[]; details: any } };

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("services in real Pi", () => {
  test("a dev-server readiness call returns once the server answers, and the server keeps running", async () => {
    const port = await freePort();
    // A session in Pi's interactive mode: the human opens the jobs picker while the server runs.
    let picker: OpenedComponent | undefined;
    const sdk = await start(
      [
        call("exec_command", { cmd: `exec python3 -m http.server ${port} --bind 127.0.0.1`, ready: { port, http: "/", timeout_ms: 30_000 } }),
        () => fauxAssistantMessage("server up"),
      ],
      { mode: "tui", ui: overlayHost((opened) => void (picker = opened)) },
    );
    await sdk.prompt("start the dev server");
    const end = (sdk.eventsOf("tool_execution_end") as unknown as ToolEnd[])[0]!;
    expect(end.isError).toBe(false);
    expect(end.result.details).toMatchObject({ running: true, wait_status: "ready", ready: { status: "ready", port } });
    expect(end.result.content.map((c) => c.text ?? "").join("")).toMatch(new RegExp(`ready: status=ready elapsed_ms=\\d+ port=${port}`));
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    // Cancelled, not left unread: an unread body can make undici throw when the server closes the socket.
    await answer.body?.cancel();
    expect(answer.status).toBe(200);
    // The human's listing shows the port the server really took: the picker reads it from the job and redraws.
    const command = sdk.session.prompt("/shell-jobs-sessions");
    await until(() => picker !== undefined, "the picker");
    await until(() => picker!.render(120).some((line) => line.includes(`Listening: ${port}`)), "the picker with the server's port");
    picker!.handleInput?.("q");
    await command;
  });

  test("a job waiting for a password wakes the idle session once", async () => {
    const sdk = await start([
      call("exec_command", { cmd: "printf 'Password: '; read secret; sleep 600", on_stall: "wake", yield_time_ms: 250 }),
      () => fauxAssistantMessage("started"),
      (context) => fauxAssistantMessage(`woken by: ${messageText((context.messages as Message[]).at(-1)).split("\n")[0]}`),
    ]);
    await sdk.prompt("start it");
    await until(() => wakeMessages(sdk).length > 0, "the stuck wake");
    await sdk.waitForSettled(2, 30_000);
    const wakes = wakeMessages(sdk);
    expect(wakes).toHaveLength(1);
    expect(wakes[0]!.content).toContain("appears to be waiting for input: `Password: `");
    expect(wakes[0]!.details.stuck).toEqual([expect.objectContaining({ kind: "waiting_for_input", prompt: "Password: " })]);
    expect(sdk.session.getLastAssistantText()).toContain("woken by: [shell-jobs] A running job may be stuck");
  });
});
