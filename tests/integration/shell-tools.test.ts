/**
 * The shell tools on the real job runtime: real processes, real PTYs, real process groups. The service is driven
 * directly (no Pi) so each rule is checked on its own.
 */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { ShellService, type CallContext } from "../../host/shell/service.ts";
import { createShellState } from "../../host/shell/state.ts";
import { pidAlive, runtimeFor, waitFor } from "./helpers.ts";

let runtime: SupervisedRuntime;
let service: ShellService;
let env: Record<string, string | undefined>;
let calls = 0;

function call(signal?: AbortSignal, toolCallId?: string): CallContext {
  calls += 1;
  return { toolCallId: toolCallId ?? `call-${calls}`, signal, cwd: tmpdir() };
}

beforeEach(() => {
  transcripts.clear();
  runtime = runtimeFor();
  env = {};
  service = new ShellService(createShellState(), { runtime: () => runtime, env: () => env, killGraceMs: 500 });
});

afterEach(async () => {
  await service.stopAll();
  await runtime.shutdown();
});

async function started(cmd: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await service.exec({ cmd, yield_time_ms: 250, ...extra }, call());
  // On a loaded machine a short yield can end before the process exists; either way the job has not ended.
  expect(["starting", "running"]).toContain(r.status);
  transcripts.set(r.session_id!, r.output);
  return r.session_id!;
}

/** Everything each session has shown so far, across every call that consumed output. */
const transcripts = new Map<number, string>();

function record(id: number, output: string): void {
  transcripts.set(id, (transcripts.get(id) ?? "") + output);
}

async function send(id: number, args: Record<string, unknown>) {
  const r = await service.writeStdin({ session_id: id, ...args }, call());
  record(id, r.output);
  return r;
}

/** Polls with immediate reads until everything the session has shown matches. */
async function readUntil(id: number, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  await waitFor(
    async () => {
      await send(id, { yield_time_ms: 0 });
      return pattern.test(transcripts.get(id) ?? "");
    },
    timeoutMs,
    `output matching ${pattern}`,
  );
  return transcripts.get(id) ?? "";
}

describe("exec_command", () => {
  it("returns the exit result of a command that ends within the wait", async () => {
    const r = await service.exec({ cmd: "echo out; echo err >&2; exit 3" }, call());
    expect(r).toMatchObject({ operation: "exec_command", status: "exited", running: false, exit_code: 3, signal: null, wait_status: "completed", wait_mode: "relative" });
    expect(r.session_id).toBeUndefined();
    expect(r.output).toContain("out\n");
    expect(r.output).toContain("err\n");
    expect(r.supervision).toMatchObject({ state: "exited", stop_reason: null, cleanup: "confirmed", log_truncated: false });
    expect(readFileSync(r.log_path!, "utf8")).toContain("err");
    // A direct collection ends the registration.
    expect(service.list({}).sessions).toHaveLength(0);
  });

  it("returns a live session_id when the command outlasts the wait; the wait is not a timeout", async () => {
    // The job outlives the wait however slow the machine is; its echo may land after the wait on a loaded machine,
    // so what the wait did not return must come with the next poll, once and in order.
    const r = await service.exec({ cmd: "echo begin; sleep 30", yield_time_ms: 3000 }, call());
    expect(r).toMatchObject({ running: true, status: "running", wait_status: "deadline", session_id: 1 });
    let seen = r.output;
    await waitFor(async () => {
      if (seen === "") seen += (await service.writeStdin({ session_id: 1, yield_time_ms: 1000 }, call())).output;
      return seen !== "";
    }, 30_000, "the echo");
    expect(seen).toBe("begin\n");
    expect(r.supervision.state).toBe("running");
    expect(Date.parse(r.supervision.deadline_utc!)).toBeGreaterThan(Date.now() + 1_700_000);
  });

  it("runs in workdir (relative to Pi's cwd) and rejects a missing one by name", async () => {
    const r = await service.exec({ cmd: "pwd", workdir: "." }, { toolCallId: "w", cwd: "/" });
    expect(r.output.trim()).toBe("/");
    await expect(service.exec({ cmd: "pwd", workdir: "/no/such/dir" }, call())).rejects.toThrow(/workdir/);
  });

  it("uses the given shell", async () => {
    const r = await service.exec({ cmd: "echo $0", shell: "/bin/sh" }, call());
    expect(r.output.trim()).toBe("/bin/sh");
  });

  it("reports a spawn failure as a failed result", async () => {
    const r = await service.exec({ cmd: "true", shell: "/no/such/shell" }, call());
    expect(r).toMatchObject({ status: "failed", running: false });
    expect(r.failure?.reason).toBe("spawn_failed");
  });

  it("enforces timeout_seconds as a hard lifetime while nobody waits", async () => {
    const id = await started("sleep 30", { timeout_seconds: 1 });
    await waitFor(() => service.list({}).sessions.find((s) => s.session_id === id)?.status === "timed_out", 15_000, "timeout");
    const r = await service.writeStdin({ session_id: id, yield_time_ms: 0 }, call());
    expect(r).toMatchObject({ status: "timed_out", running: false, wait_status: "completed" });
    expect(r.supervision).toMatchObject({ state: "timed_out", stop_reason: "timed_out" });
    expect(r.failure?.reason).toBe("timed_out");
  });

  it("bounds model-facing output to head and tail and keeps everything in the log", async () => {
    const raw = await service.exec({ cmd: "seq 1 200000", raw: true }, call());
    expect(raw.output_bytes).toBe(1_288_895);
    expect(raw.output_omitted_bytes).toBeGreaterThan(1_200_000);
    expect(raw.output.startsWith("1\n2\n3\n")).toBe(true);
    expect(raw.output.trimEnd().endsWith("199999\n200000")).toBe(true);
    expect(raw.output).toMatch(/\[… \d+ bytes omitted/);
    expect(readFileSync(raw.log_path!, "utf8").length).toBe(1_288_895);
    // Folded (the default), the same output is a few exact folds: every number is still said.
    const folded = await service.exec({ cmd: "seq 1 200000" }, call());
    expect(folded.output_omitted_bytes).toBe(raw.output_omitted_bytes);
    expect(folded.output).toMatch(/^1\n⟪×\d+⟫ \{2\.\.\d+\}\n⟪omitted \d+ lines/);
    expect(folded.output).toMatch(/^⟪×\d+⟫ \{\d+\.\.\d+\}\n⟪end of omitted⟫$/m);
    expect(folded.output.trimEnd().endsWith("199999\n200000")).toBe(true);
  });

  it("refuses a new job when the registry is full of running jobs", async () => {
    const small = new ShellService(createShellState({ capacity: 2 }), { runtime: () => runtime, killGraceMs: 300 });
    try {
      await small.exec({ cmd: "sleep 30", yield_time_ms: 250 }, call());
      await small.exec({ cmd: "sleep 30", yield_time_ms: 250 }, call());
      await expect(small.exec({ cmd: "echo third", yield_time_ms: 250 }, call())).rejects.toThrow(/2 shell jobs are already running/);
      expect(small.list({}).active_count).toBe(2);
    } finally {
      await small.stopAll();
    }
  });

  it("stops a job whose log reaches its quota and reports the partial log", async () => {
    const small = new ShellService(createShellState(), { runtime: () => runtime, logMaxBytes: 64 * 1024, killGraceMs: 300 });
    const r = await small.exec({ cmd: "yes 0123456789", yield_time_ms: 20_000 }, call());
    expect(r).toMatchObject({ status: "failed", running: false });
    expect(r.supervision).toMatchObject({ state: "log_quota", stop_reason: "log_quota", log_truncated: true });
    expect(r.supervision.log_bytes).toBe(64 * 1024);
    expect(r.failure?.message).toContain("partial");
  });
});

describe("write_stdin", () => {
  it("an immediate empty read returns unread output, then nothing", async () => {
    const id = await started("echo one; sleep 30");
    await readUntil(id, /one/);
    const again = await service.writeStdin({ session_id: id, yield_time_ms: 0 }, call());
    expect(again).toMatchObject({ output: "", wait_mode: "immediate", wait_status: "snapshot", running: true, session_id: id });
  });

  it("an omitted or positive empty wait lasts at least 5 s unless the job exits", async () => {
    const id = await started("sleep 30");
    const t0 = performance.now();
    const r = await service.writeStdin({ session_id: id, yield_time_ms: 1 }, call());
    expect(performance.now() - t0).toBeGreaterThanOrEqual(4900);
    expect(r).toMatchObject({ wait_mode: "relative", wait_status: "deadline", running: true });
    const quick = await started("sleep 0.5; echo bye");
    const done = await service.writeStdin({ session_id: quick }, call());
    // `completed`, not `deadline`: the wait ended with the job, not with its 5 s.
    expect(done).toMatchObject({ wait_status: "completed", running: false, exit_code: 0 });
  });

  it("PI_SHELL_JOBS_MAX_EMPTY_POLL_MS caps relative empty polls; an invalid value fails the poll", async () => {
    const id = await started("sleep 60");
    env.PI_SHELL_JOBS_MAX_EMPTY_POLL_MS = "5000";
    const t0 = performance.now();
    const r = await service.writeStdin({ session_id: id, yield_time_ms: 40_000 }, call());
    expect(performance.now() - t0).toBeLessThan(20_000);
    expect(r.wait_status).toBe("deadline");
    env.PI_SHELL_JOBS_MAX_EMPTY_POLL_MS = "banana";
    await expect(service.writeStdin({ session_id: id, yield_time_ms: 6000 }, call())).rejects.toThrow(/PI_SHELL_JOBS_MAX_EMPTY_POLL_MS/);
    // Immediate reads are not polls the cap applies to.
    expect((await service.writeStdin({ session_id: id, yield_time_ms: 0 }, call())).wait_status).toBe("snapshot");
  });

  it("yield_until in the past returns at once; far in the future returns on exit", async () => {
    const id = await started("sleep 2; echo finished");
    const past = await service.writeStdin({ session_id: id, yield_until: "2000-01-01T00:00:00Z" }, call());
    expect(past).toMatchObject({ wait_mode: "absolute", wait_status: "deadline", running: true });
    const future = await service.writeStdin({ session_id: id, yield_until: "2999-01-01T00:00:00Z" }, call());
    expect(future).toMatchObject({ wait_mode: "absolute", wait_status: "completed", running: false, exit_code: 0 });
    expect(future.output).toContain("finished");
  });

  it("end_stdin makes cat exit after the supplied bytes", async () => {
    const id = await started("cat");
    const r = await service.writeStdin({ session_id: id, chars: "hello\\n", end_stdin: true, yield_time_ms: 5000 }, call());
    expect(r).toMatchObject({ running: false, exit_code: 0, wait_status: "completed" });
    expect(r.output).toBe("hello\n");
    expect(r.notes).toContain("stdin closed");
  });

  it("chars_b64 sends raw bytes", async () => {
    const id = await started("od -An -tx1");
    const r = await service.writeStdin({ session_id: id, chars_b64: Buffer.from([0, 255, 10]).toString("base64"), end_stdin: true, yield_time_ms: 5000 }, call());
    expect(r.output.replace(/\s+/g, " ").trim()).toBe("00 ff 0a");
  });

  it("rejects end_stdin on a PTY and resize on pipes, naming the fields", async () => {
    const pty = await started("sleep 30", { tty: true });
    await expect(service.writeStdin({ session_id: pty, end_stdin: true }, call())).rejects.toThrow(/end_stdin is for pipes/);
    const pipes = await started("sleep 30");
    await expect(service.writeStdin({ session_id: pipes, cols: 80, rows: 24 }, call())).rejects.toThrow(/cols\/rows resize a PTY/);
  });

  it("names an unknown session and points an evicted one at its log", async () => {
    await expect(service.writeStdin({ session_id: 42, yield_time_ms: 0 }, call())).rejects.toThrow(/unknown session_id 42/);
    const r = await service.exec({ cmd: "echo x" }, call());
    await expect(service.writeStdin({ session_id: 1, yield_time_ms: 0 }, call())).rejects.toThrow(new RegExp(`no longer registered.*${r.log_path}`));
  });

  it("a call cancelled before the read is rejected without consuming output, even after exit", async () => {
    // The output comes after the start call's 250 ms wait, so the start call cannot have consumed it.
    const id = await started("sleep 1; echo kept");
    await waitFor(() => service.list({}).sessions[0]?.status === "exited", 30_000, "exit");
    const aborted = AbortSignal.abort();
    await expect(service.writeStdin({ session_id: id, yield_time_ms: 0 }, call(aborted))).rejects.toThrow(/cancelled before the read/);
    const r = await service.writeStdin({ session_id: id, yield_time_ms: 0 }, call());
    expect(r.output).toBe("kept\n");
    expect(r.wait_status).toBe("completed");
  });

  it("cancelling a wait returns early and leaves the job alive", async () => {
    const id = await started("echo alive; sleep 30");
    const controller = new AbortController();
    const pending = service.writeStdin({ session_id: id, yield_time_ms: 20_000 }, call(controller.signal));
    setTimeout(() => controller.abort(), 300);
    const t0 = performance.now();
    const r = await pending;
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r).toMatchObject({ wait_status: "cancelled", running: true, output: "" });
    const after = await readUntil(id, /alive/);
    expect(after).toContain("alive");
  });

  it("human steering ends a wait early unless PI_SHELL_JOBS_STEER_INTERRUPT=0", async () => {
    const id = await started("sleep 30");
    const t0 = performance.now();
    const steered = service.writeStdin({ session_id: id, yield_time_ms: 20_000 }, call());
    setTimeout(() => service.steer(), 300);
    expect((await steered).wait_status).toBe("steered");
    expect(performance.now() - t0).toBeLessThan(10_000);
    env.PI_SHELL_JOBS_STEER_INTERRUPT = "0";
    const t1 = performance.now();
    const unsteered = service.writeStdin({ session_id: id, yield_time_ms: 5000 }, call());
    setTimeout(() => service.steer(), 300);
    expect((await unsteered).wait_status).toBe("deadline");
    expect(performance.now() - t1).toBeGreaterThanOrEqual(4900);
  });
});

describe("rendered output", () => {
  it("a PTY job's output reaches the model as the terminal shows it; the log keeps the raw bytes", async () => {
    const cmd = "printf '\\033[32mgreen\\033[0m\\n'; for i in 1 2 3 4 5; do printf '\\r%s%%' $((i*20)); done; printf '\\n'";
    const r = await service.exec({ cmd, tty: true, yield_time_ms: 30_000 }, call());
    expect(r).toMatchObject({ running: false, exit_code: 0, output_rendered: "terminal" });
    expect(r.output).toBe("green\n100%");
    const raw = readFileSync(r.log_path!, "utf8");
    expect(raw).toContain("\u001b[32mgreen\u001b[0m");
    expect(raw).toContain("\r20%\r40%");
  });

  it("pipe output loses colour codes and OSC strings and applies carriage returns; the log keeps the raw bytes", async () => {
    const cmd = "printf '\\033[1;31mred\\033[0m \\033]0;title\\007x\\n10%%\\r100%%\\n'";
    const r = await service.exec({ cmd, yield_time_ms: 30_000 }, call());
    expect(r).toMatchObject({ running: false, exit_code: 0, output_rendered: "text" });
    expect(r.output).toBe("red x\n100%\n");
    expect(readFileSync(r.log_path!, "utf8")).toBe("\u001b[1;31mred\u001b[0m \u001b]0;title\u0007x\n10%\r100%\n");
  });
});

describe("PTY sessions", () => {
  it("drives a Python REPL: isatty, Ctrl-C interrupts sleep, resize then stty size", async () => {
    const id = await started("python3 -q", { tty: true });
    await readUntil(id, />>> $/m);
    await send(id, { chars: "import sys, time, os\\r" });
    await send(id, { chars: "print('TTY', sys.stdin.isatty())\\r" });
    expect(await readUntil(id, /TTY True/)).toContain("TTY True");
    await send(id, { chars: "time.sleep(100)\\r" });
    const t0 = performance.now();
    await send(id, { chars: "\\u0003", yield_time_ms: 1000 });
    expect(await readUntil(id, /KeyboardInterrupt[\s\S]*>>> $/)).toContain("KeyboardInterrupt");
    expect(performance.now() - t0).toBeLessThan(60_000);
    const resized = await send(id, { cols: 100, rows: 40 });
    expect(resized.notes).toContain("resized to 100x40");
    await send(id, { chars: "os.system('stty size')\\r" });
    expect(await readUntil(id, /40 100/)).toMatch(/40 100/);
    const exit = await service.writeStdin({ session_id: id, chars: "exit()\\r", yield_time_ms: 5000 }, call());
    expect(exit.running).toBe(false);
  });
});

describe("list_sessions, set_on_exit, kill_session", () => {
  it("lists running and completed jobs without consuming output", async () => {
    // Both print only after their start call's 250 ms wait, so that output is still pending when listed.
    const running = await started("sleep 0.5; echo r; sleep 30");
    const done = await started("sleep 0.5; echo d");
    await waitFor(() => service.list({}).completed_count === 1, 30_000, "one completion");
    await waitFor(() => service.list({}).sessions.every((s) => s.output_bytes_total === 2), 30_000, "output counted");
    const list = service.list({});
    expect(list).toMatchObject({ operation: "list_sessions", active_count: 1, completed_count: 1, just_exited_count: 1 });
    const [first, second] = list.sessions;
    expect(first).toMatchObject({ session_id: running, running: true, output_bytes_total: 2, output_pending_bytes: 2 });
    expect(second).toMatchObject({ session_id: done, running: false, status: "exited", exit_code: 0 });
    expect(first!.supervision.state).toBe("running");
    expect(first!.elapsed_ms).toBeGreaterThan(0);
    const read = await service.writeStdin({ session_id: done, yield_time_ms: 0 }, call());
    expect(read.output).toBe("d\n");
  });

  it("kills the process group, escalating after the grace when SIGTERM is ignored", async () => {
    const id = await started("trap '' TERM; echo $$; sleep 30 & wait");
    const pid = Number((await readUntil(id, /^\d+$/m)).trim());
    const r = await service.kill({ session_id: id }, call());
    expect(r).toMatchObject({ operation: "kill_session", killed: true, escalated: true, signal: "SIGTERM", running: false, cleanup: "confirmed" });
    expect(pidAlive(pid)).toBe(false);
    expect(service.list({}).sessions).toHaveLength(0);
  });

  it("a kill that cannot be confirmed in time keeps ownership with cleanup unconfirmed", async () => {
    const slow = new ShellService(createShellState(), { runtime: () => runtime, killGraceMs: 2000, killConfirmMs: 300 });
    try {
      const r0 = await slow.exec({ cmd: "trap '' TERM; sleep 30", yield_time_ms: 2000 }, call());
      const r = await slow.kill({ session_id: r0.session_id! }, call());
      expect(r).toMatchObject({ killed: false, cleanup: "unconfirmed", running: true });
      expect(slow.list({}).sessions.map((s) => s.session_id)).toEqual([r0.session_id]);
      expect(slow.list({}).sessions[0]!.supervision.cleanup).toBe("pending");
    } finally {
      await slow.stopAll();
    }
  });

  it("set_on_exit arms and disarms without killing", async () => {
    const id = await started("sleep 30");
    const armed = service.setOnExit({ session_id: id, on_exit: "wake" }, call());
    expect(armed).toMatchObject({ effect: "armed", on_exit: "wake", previous_on_exit: "none", running: true });
    const disarmed = service.setOnExit({ session_id: id, on_exit: "none" }, call());
    expect(disarmed.effect).toBe("disarmed");
    expect(service.list({}).sessions[0]).toMatchObject({ running: true, on_exit: "none" });
  });
});
