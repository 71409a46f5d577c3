/**
 * Shell jobs in real Pi (SDK, faux model, Pi's own extension loader): the model's tool calls drive real processes
 * and PTYs; results, wakes, receipts and the reload handover are observed as Pi delivers them. A human's
 * /shell-jobs-sessions is the product's command, in its text form and as the TUI's picker.
 */
import { fauxAssistantMessage, fauxToolCall, type FauxResponseFactory, type Message } from "@earendil-works/pi-ai";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { messageText } from "../fixtures/faux-provider.ts";
import { overlayHost, type OpenedComponent } from "../fixtures/overlay-host.ts";
import { REPO_ROOT } from "./harness/paths.ts";
import { startSdkSession, wakeMessages, type SdkSession, type SdkSessionOptions } from "./harness/sdk.ts";
import { pidAlive } from "../integration/helpers.ts";

const SHELL_ENTRY = join(REPO_ROOT, "tests", "fixtures", "shell-jobs-extension.ts");
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

type Args = Record<string, unknown>;
interface Seen {
  /** Text of the last transcript message (a tool result, a wake). */
  last: string;
  /** The most recent session_id any tool result mentioned. */
  sessionId: number;
}

function seen(messages: readonly Message[]): Seen {
  let sessionId = 0;
  for (let i = messages.length - 1; i >= 0 && sessionId === 0; i -= 1) {
    const match = /session_id (\d+)/.exec(messageText(messages[i]));
    if (match) sessionId = Number(match[1]);
  }
  return { last: messageText(messages.at(-1)), sessionId };
}

/** One model turn that calls tools; arguments may depend on what the transcript shows. */
function calls(...list: [string, Args | ((s: Seen) => Args)][]): FauxResponseFactory {
  return (context) => {
    const s = seen(context.messages);
    return fauxAssistantMessage(
      list.map(([name, args]) => fauxToolCall(name, (typeof args === "function" ? args(s) : args) as Parameters<typeof fauxToolCall>[1])),
      { stopReason: "toolUse" },
    );
  };
}

/** The pid a job wrote to `file`; the shell creates the file before `echo` writes to it, so an empty one is waited out. */
async function waitForPid(file: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const pid = existsSync(file) ? Number(readFileSync(file, "utf8").trim()) : 0;
    if (Number.isSafeInteger(pid) && pid > 1) return pid;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the job to write ${file}`);
    await sleep(20);
  }
}

function say(text: string): FauxResponseFactory {
  return () => fauxAssistantMessage(text);
}

async function start(responses: FauxResponseFactory[], options: Pick<SdkSessionOptions, "codemode" | "mode" | "ui"> = {}): Promise<SdkSession> {
  const sdk = await startSdkSession({ extensions: [SHELL_ENTRY], responses, ...options });
  cleanups.push(() => sdk.dispose());
  return sdk;
}

type ToolEnd = { toolName: string; isError: boolean; parentToolCallId?: string; result: { content: { type: string; text?: string }[]; details: any } };

function ends(sdk: SdkSession): ToolEnd[] {
  return sdk.eventsOf("tool_execution_end") as unknown as ToolEnd[];
}

function textOf(end: ToolEnd): string {
  return end.result.content.map((c) => c.text ?? "").join("");
}

/** Everything every process result has shown, in order. */
function allOutput(sdk: SdkSession): string {
  return ends(sdk)
    .map((e) => (typeof e.result.details?.output === "string" ? e.result.details.output : ""))
    .join("");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function pollFor(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe("shell jobs in real Pi", () => {
  test("replaces the built-in bash and adds the wake guidance to the system prompt", async () => {
    let systemPrompt = "";
    const sdk = await start([
      (context) => {
        // The prompt reaches the provider as the transcript's system message.
        systemPrompt = context.messages
          .map((m) => m as unknown as { role: string; content: unknown })
          .filter((m) => m.role === "system")
          .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
          .join("\n");
        return fauxAssistantMessage("ok");
      },
    ]);
    const active = sdk.session.getActiveToolNames();
    expect(active).toEqual(expect.arrayContaining(["exec_command", "write_stdin", "list_sessions", "set_on_exit", "kill_session"]));
    expect(active).not.toContain("bash");
    await sdk.prompt("hi");
    // The wake rule, both ways: ask for it for finite work whose result is needed, not for services.
    expect(systemPrompt).toContain('on_exit: "wake" for finite work whose result you need');
    expect(systemPrompt).toContain('Keep "none" for servers, REPLs, watchers and start-only requests');
  });

  test("a PTY Python REPL driven with write_stdin: isatty, Ctrl-C, resize and stty size", async () => {
    const sdk = await start([
      calls(["exec_command", { cmd: "python3 -q", tty: true, yield_time_ms: 1500 }]),
      calls(["write_stdin", (s) => ({ session_id: s.sessionId, chars: "import sys, time, os\\rprint('TTY', sys.stdin.isatty())\\r", yield_time_ms: 1500 })]),
      calls(["write_stdin", (s) => ({ session_id: s.sessionId, chars: "time.sleep(100)\\r", yield_time_ms: 500 })]),
      calls(["write_stdin", (s) => ({ session_id: s.sessionId, chars: "\u0003", yield_time_ms: 3000 })]),
      calls(["write_stdin", (s) => ({ session_id: s.sessionId, cols: 100, rows: 40 })]),
      calls(["write_stdin", (s) => ({ session_id: s.sessionId, chars: "os.system('stty size')\\r", yield_time_ms: 2000 })]),
      calls(["kill_session", (s) => ({ session_id: s.sessionId })]),
      say("done"),
    ]);
    await sdk.prompt("drive python");
    const results = ends(sdk);
    expect(results.map((e) => e.isError)).toEqual([false, false, false, false, false, false, false]);
    // Running, or still starting on a loaded machine (a job is `running` only once its process exists); not ended.
    expect(results[0]!.result.details).toMatchObject({ tty: true, session_id: 1 });
    expect(["starting", "running"]).toContain(results[0]!.result.details.status);
    const output = allOutput(sdk);
    expect(output).toContain("TTY True");
    expect(output).toContain("KeyboardInterrupt");
    expect(output).toMatch(/40 100/);
    expect(results[6]!.result.details).toMatchObject({ killed: true });
  });

  test("end_stdin makes cat exit", async () => {
    const sdk = await start([
      calls(["exec_command", { cmd: "cat", yield_time_ms: 300 }]),
      calls(["write_stdin", (s) => ({ session_id: s.sessionId, chars: "line\\n", end_stdin: true, yield_time_ms: 5000 })]),
      say("done"),
    ]);
    await sdk.prompt("cat");
    const [, write] = ends(sdk);
    expect(write!.result.details).toMatchObject({ running: false, exit_code: 0, output: "line\n", wait_status: "completed" });
  });

  test("three wake jobs finishing within a second give one batched wake that starts a turn", async () => {
    // The three end on one trigger, pulled once all three run: they finish together however slowly each started.
    const trigger = join(mkdtempSync(join(tmpdir(), "pi-jobs-wakes-")), "go");
    const untilTrigger = (pause: number) => `while [ ! -e '${trigger}' ]; do sleep 0.05; done; sleep ${pause}`;
    const sdk = await start([
      calls(
        ["exec_command", { cmd: untilTrigger(0), on_exit: "wake", yield_time_ms: 250 }],
        ["exec_command", { cmd: untilTrigger(0.1), on_exit: "wake", yield_time_ms: 250 }],
        ["exec_command", { cmd: untilTrigger(0.2), on_exit: "wake", yield_time_ms: 250 }],
      ),
      say("started three"),
      (context) => fauxAssistantMessage(`woken by: ${seen(context.messages).last.split("\n")[0]}`),
    ]);
    await sdk.prompt("start three");
    writeFileSync(trigger, "");
    await sdk.waitForSettled(2, 30_000);
    await sleep(4000);
    const wakes = wakeMessages(sdk);
    expect(wakes).toHaveLength(1);
    expect(wakes[0]!.details.sessions.map((s: { session_id: number }) => s.session_id)).toEqual([1, 2, 3]);
    expect(wakes[0]!.content).toContain("3 background jobs");
    expect(sdk.settledCount()).toBe(2);
    expect(sdk.session.getLastAssistantText()).toContain("woken by: [shell-jobs] 3 background jobs");
  });

  test("a killed job sends no wake", async () => {
    const sdk = await start([
      calls(["exec_command", { cmd: "sleep 30", on_exit: "wake", yield_time_ms: 250 }]),
      calls(["kill_session", (s) => ({ session_id: s.sessionId })]),
      say("killed"),
    ]);
    await sdk.prompt("start and kill");
    expect(ends(sdk)[1]!.result.details).toMatchObject({ killed: true, escalated: false });
    await sleep(4000);
    expect(wakeMessages(sdk)).toHaveLength(0);
    expect(sdk.settledCount()).toBe(1);
  });

  test("a job started before /reload is collected after it", async () => {
    // The job ends only when the test says so, after the reload: however slow the machine, it is running across it.
    const trigger = join(mkdtempSync(join(tmpdir(), "pi-jobs-reload-")), "go");
    const sdk = await start([
      calls(["exec_command", { cmd: `echo before; while [ ! -e '${trigger}' ]; do sleep 0.05; done; echo after`, yield_time_ms: 2000 }]),
      say("started"),
      calls(["write_stdin", { session_id: 1, yield_time_ms: 30_000 }]),
      say("collected"),
    ]);
    await sdk.prompt("start");
    const first = ends(sdk)[0]!.result.details as { output: string; status: string };
    expect(first).toMatchObject({ session_id: 1 });
    expect(["starting", "running"]).toContain(first.status);
    await sdk.session.reload();
    writeFileSync(trigger, "");
    await sdk.prompt("collect");
    const collected = ends(sdk)[1]!;
    expect(collected.isError).toBe(false);
    expect(collected.result.details).toMatchObject({ running: false, exit_code: 0 });
    // Nothing lost or repeated across the reload: what the two calls returned is the whole output, in order
    // (on a loaded machine "before" may arrive only after the first call's wait).
    expect(first.output + (collected.result.details as { output: string }).output).toBe("before\nafter\n");
  });

  test("a wake pending across /reload is delivered by the new instance", async () => {
    const sdk = await start([
      calls(["exec_command", { cmd: "sleep 1.5", on_exit: "wake", yield_time_ms: 250 }]),
      say("started"),
      (context) => fauxAssistantMessage(`woken: ${seen(context.messages).last.split("\n")[1] ?? ""}`),
    ]);
    await sdk.prompt("start");
    await sdk.session.reload();
    await sdk.waitForSettled(2, 30_000);
    const wakes = wakeMessages(sdk);
    expect(wakes).toHaveLength(1);
    expect(wakes[0]!.details.sessions[0]).toMatchObject({ session_id: 1, status: "exited", exit_code: 0 });
    expect(sdk.session.getLastAssistantText()).toContain("woken: - session_id 1: exited with code 0");
  });

  test("quitting the session stops its jobs", async () => {
    // The job names its pid in a file, so the test does not depend on when its output reaches a tool result.
    const pidFile = join(mkdtempSync(join(tmpdir(), "pi-jobs-quit-")), "pid");
    const sdk = await start([calls(["exec_command", { cmd: `echo $$ > '${pidFile}.tmp'; mv '${pidFile}.tmp' '${pidFile}'; exec sleep 60`, yield_time_ms: 250 }]), say("started")]);
    await sdk.prompt("start");
    const pid = await waitForPid(pidFile);
    expect(pid).toBeGreaterThan(1);
    expect(pidAlive(pid)).toBe(true);
    await sdk.dispose();
    // Nothing runs once the shutdown returned; the spawner may not have reaped the killed process yet (a zombie).
    expect(pidAlive(pid)).toBe(false);
  });

  test("/shell-jobs-sessions outside the TUI lists and stops a job", async () => {
    const sdk = await start([
      calls(["exec_command", { cmd: "sleep 60", on_exit: "wake", yield_time_ms: 250 }]),
      say("started"),
      calls(["list_sessions", {}]),
      say("listed"),
    ]);
    await sdk.prompt("start");
    await sdk.prompt("/shell-jobs-sessions");
    await sdk.prompt("/shell-jobs-sessions stop 1");
    await sdk.prompt("list");
    expect(ends(sdk).at(-1)!.result.details).toMatchObject({ active_count: 0, completed_count: 0 });
    await sleep(3500);
    expect(wakeMessages(sdk)).toHaveLength(0);
  });

  test("/shell-jobs-sessions in the TUI: the picker lists a job and stops it", async () => {
    let picker: OpenedComponent | undefined;
    const sdk = await start(
      [calls(["exec_command", { cmd: "sleep 60", on_exit: "wake", yield_time_ms: 250 }]), say("started"), calls(["list_sessions", {}]), say("listed")],
      { mode: "tui", ui: overlayHost((opened) => void (picker = opened)) },
    );
    await sdk.prompt("start");
    const command = sdk.session.prompt("/shell-jobs-sessions");
    await pollFor(() => picker !== undefined, "the picker");
    const screen = (): string => picker!.render(100).join("\n");
    expect(screen()).toMatch(/Shell jobs · 1 running/);
    expect(screen()).toMatch(/▸ running · 1 · sleep 60/);
    picker!.handleInput?.("x");
    expect(screen()).toMatch(/Stop session 1\? y to stop/);
    picker!.handleInput?.("y");
    await pollFor(() => /stopped shell job 1/.test(screen()), "the picker's answer");
    picker!.handleInput?.("q");
    await command;
    await sdk.prompt("list");
    expect(ends(sdk).at(-1)!.result.details).toMatchObject({ active_count: 0, completed_count: 0 });
    await sleep(3500);
    expect(wakeMessages(sdk)).toHaveLength(0);
  });

  test("yield_until in the past returns at once; far in the future returns at exit", async () => {
    const sdk = await start([
      // A yield long enough for the process to exist on a loaded machine, short of its end.
      calls(["exec_command", { cmd: "sleep 3; echo late", yield_time_ms: 1500 }]),
      calls(["write_stdin", (s) => ({ session_id: s.sessionId, yield_until: "2000-01-01T00:00:00Z" })]),
      calls(["write_stdin", (s) => ({ session_id: s.sessionId, yield_until: "2999-01-01T00:00:00Z" })]),
      say("done"),
    ]);
    await sdk.prompt("wait");
    const [, past, future] = ends(sdk);
    expect(past!.result.details).toMatchObject({ wait_mode: "absolute", wait_status: "deadline", running: true });
    expect(future!.result.details).toMatchObject({ wait_mode: "absolute", wait_status: "completed", running: false, output: "late\n" });
  });

  test("unknown fields and invalid combinations are rejected by name", async () => {
    const sdk = await start([
      calls(["exec_command", { cmd: "true", end_stdin: true }]),
      calls(["write_stdin", { session_id: 1, chars: "a", chars_b64: "YQ==" }]),
      calls(["set_on_exit", { session_id: 1, on_exit: "wake", signal: "SIGTERM" }]),
      say("done"),
    ]);
    await sdk.prompt("bad calls");
    const [a, b, c] = ends(sdk);
    expect(a!.isError && textOf(a!)).toMatch(/end_stdin/);
    expect(b!.isError && textOf(b!)).toMatch(/chars and chars_b64|chars_b64/);
    expect(c!.isError && textOf(c!)).toMatch(/signal/);
  });

  test("the log stops the job at its 16 MiB quota and reports a partial log", async () => {
    const sdk = await start([
      calls(["exec_command", { cmd: "yes 0123456789abcdef", yield_time_ms: 30_000 }]),
      say("done"),
    ]);
    await sdk.prompt("flood");
    const details = ends(sdk)[0]!.result.details;
    expect(details).toMatchObject({ running: false, status: "failed" });
    expect(details.supervision).toMatchObject({ state: "log_quota", stop_reason: "log_quota", log_truncated: true, log_bytes: 16 * 1024 * 1024 });
    expect(readFileSync(details.log_path).length).toBe(16 * 1024 * 1024);
    expect(details.output_omitted_bytes).toBeGreaterThan(16_000_000);
    expect(details.output).toMatch(/⟪omitted \d+ lines \(\d+ bytes\)/);
  });

  test("the 65th job is refused with a clear error while 64 run", async () => {
    const many = Array.from({ length: 65 }, () => ["exec_command", { cmd: "sleep 120", yield_time_ms: 250 }] as [string, Args]);
    const sdk = await start([calls(...many), calls(["list_sessions", {}]), say("done")]);
    await sdk.prompt("start 65");
    const results = ends(sdk);
    const refused = results.filter((e) => e.isError);
    expect(refused).toHaveLength(1);
    expect(textOf(refused[0]!)).toMatch(/64 shell jobs are already running/);
    expect(results.at(-1)!.result.details).toMatchObject({ active_count: 64 });
  }, 180_000);

  test("human steering ends a long wait early", async () => {
    const sdk = await start([
      calls(["exec_command", { cmd: "sleep 60", yield_time_ms: 250 }]),
      calls(["write_stdin", (s) => ({ session_id: s.sessionId, yield_time_ms: 30_000 })]),
      say("steered"),
    ]);
    const run = sdk.prompt("wait long");
    await sdk.waitFor((e) => e.type === "tool_execution_start" && (e as { toolName?: string }).toolName === "write_stdin", 20_000);
    await sleep(300);
    await sdk.session.steer("please stop waiting");
    await run;
    expect(ends(sdk)[1]!.result.details).toMatchObject({ wait_status: "steered", running: true });
  });
});

describe("shell jobs in codemode", () => {
  test("a script receives structuredContent and, after a thrown error, the receipt", async () => {
    const script = [
      'const r = await tools.exec_command({cmd: "echo cm-out; exit 2", yield_time_ms: 5000});',
      "text(JSON.stringify({status: r.status, exit_code: r.exit_code, output: r.output, running: r.running}));",
      'throw new Error("boom after collecting");',
    ].join("\n");
    const sdk = await start([calls(["codemode", { code: script }]), say("done")], { codemode: true });
    await sdk.prompt("script");
    const outer = ends(sdk).find((e) => e.toolName === "codemode")!;
    const text = textOf(outer);
    expect(text).toContain('"status":"exited"');
    expect(text).toContain('"exit_code":2');
    expect(text).toContain("boom after collecting");
    expect(text).toMatch(/\[shell-jobs results\]\n- session_id 1: exited with code 2 · final output replayable once/);
    expect(text).toContain("log_path: /");
  });

  test("a successful script's receipt consumes the wake; the final output is replayable once directly", async () => {
    const script = 'const r = await tools.exec_command({cmd: "echo replay-me", on_exit: "wake", yield_time_ms: 5000}); text(r.status);';
    const sdk = await start(
      [
        calls(["codemode", { code: script }]),
        calls(["write_stdin", { session_id: 1, yield_time_ms: 0 }]),
        calls(["write_stdin", { session_id: 1, yield_time_ms: 0 }]),
        say("done"),
      ],
      { codemode: true },
    );
    await sdk.prompt("script then read");
    await sleep(4000);
    expect(wakeMessages(sdk)).toHaveLength(0);
    const direct = ends(sdk).filter((e) => e.toolName === "write_stdin" && e.parentToolCallId === undefined);
    expect(direct[0]!.result.details).toMatchObject({ output_replayed: true, output: "replay-me\n" });
    expect(direct[1]!.isError).toBe(true);
    expect(textOf(direct[1]!)).toMatch(/no longer registered/);
  });
});
