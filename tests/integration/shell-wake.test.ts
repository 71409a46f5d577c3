/**
 * Wake on exit and codemode observation with real processes: the scheduler's batches, consumption by a direct
 * read, suppression by an explicit stop, holding by a script until its outermost call finalizes, and replay.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import type { CallContext, ShellService } from "../../host/shell/service.ts";
import { createShellState } from "../../host/shell/state.ts";
import type { DeliveryScheduler } from "../../host/delivery/scheduler.ts";
import { ResultLedger } from "../../host/delivery/ledger.ts";
import type { CompletionInfo } from "../../host/delivery/results.ts";
import { runtimeFor, waitFor } from "./helpers.ts";
import { wakingShell, type WakingShell } from "./waking-shell.ts";

let runtime: SupervisedRuntime;
let shell: WakingShell;
let service: ShellService;
let wakes: DeliveryScheduler;
let sent: CompletionInfo[][];
let refuse = false;

const direct = (id = "direct"): CallContext => ({ toolCallId: id, cwd: tmpdir() });
const nested = (outer: string, n = 1): CallContext => ({ toolCallId: `${outer}/${n}`, cwd: tmpdir() });

beforeEach(() => {
  runtime = runtimeFor();
  sent = [];
  refuse = false;
  shell = wakingShell(runtime, { quietMs: 400, maxDelayMs: 1500 }, (batch) => {
    if (refuse) throw new Error("ctx is stale");
    sent.push([...batch]);
  });
  ({ service, wakes } = shell);
});

afterEach(async () => {
  await shell.close();
  await runtime.shutdown();
});

async function start(cmd: string, onExit: "wake" | "none" = "wake", call = direct()): Promise<number> {
  const r = await service.exec({ cmd, on_exit: onExit, yield_time_ms: 250 }, call);
  // On a loaded machine a short yield can end before the process exists; either way the job has not ended.
  expect(["starting", "running"]).toContain(r.status);
  return r.session_id!;
}

describe("wake on exit", () => {
  it("batches three completions within a second into one wake, each with its last lines", async () => {
    // The default batching window (1 s quiet, 3 s at most).
    service.state = createShellState();
    service.state.onCompletion = () => wakes.schedule();
    // The three end on one trigger, so they finish within the quiet window however slowly each one started.
    const trigger = join(mkdtempSync(join(tmpdir(), "pi-jobs-wake-")), "go");
    const waitThen = (tag: string) => `while [ ! -e '${trigger}' ]; do sleep 0.05; done; printf 'S%sT_${tag}\\n' ECRE`;
    const ids = await Promise.all([start(waitThen("A")), start(waitThen("B")), start(waitThen("C"))]);
    writeFileSync(trigger, "");
    const finished = await Promise.all(ids.map((id) => service.state.registry.get(id)!.handle.done));
    const spread = Math.max(...finished.map((r) => r.endedAt)) - Math.min(...finished.map((r) => r.endedAt));
    // The test's premise: completions within the quiet window (1 s) make one wake.
    expect(spread, "the three jobs ended together").toBeLessThan(1000);
    await waitFor(() => sent.length > 0, 15_000, "a wake");
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.map((c) => c.sessionId)).toEqual(ids);
    // A wake says how each job ended and shows its last lines (and evidence, had it printed any); nothing more.
    expect(sent[0]!.map((c) => c.lastLines)).toEqual(["SECRET_A", "SECRET_B", "SECRET_C"]);
    expect(sent[0]!.map((c) => c.evidence.count)).toEqual([0, 0, 0]);
    // The output is still collectable after the wake.
    const r = await service.writeStdin({ session_id: ids[0]!, yield_time_ms: 0 }, direct());
    expect(r.output).toBe("SECRET_A\n");
  });

  it("a direct read that reports the completion consumes the wake; list_sessions does not", async () => {
    const listed = await start("sleep 0.5");
    const read = await start("sleep 0.5");
    // The read waits for the end and reports it at once, long before a wake for it could be due (400 ms of quiet),
    // whichever of the two jobs got its thread and ended first.
    const r = await service.writeStdin({ session_id: read, yield_time_ms: 30_000 }, direct());
    expect(r.wait_status).toBe("completed");
    await service.state.registry.get(listed)!.handle.done;
    // list_sessions shows the listed job's completion (the read one left the registry with its report) and consumes
    // nothing.
    expect(service.list({})).toMatchObject({ active_count: 0, completed_count: 1, sessions: [{ session_id: listed }] });
    service.list({});
    await waitFor(() => sent.flat().some((c) => c.sessionId === listed), 30_000, "the wake for the listed job");
    expect(sent.flat().map((c) => c.sessionId)).toEqual([listed]);
  });

  it("an explicit stop suppresses the wake; an unarmed job sends none", async () => {
    const killed = await start("sleep 30");
    await start("sleep 0.3", "none");
    const k = await service.kill({ session_id: killed }, direct());
    expect(k.killed).toBe(true);
    const marker = await start("sleep 0.3");
    await waitFor(() => sent.length > 0, 30_000, "the marker's wake");
    expect(sent.flat().map((c) => c.sessionId)).toEqual([marker]);
  });

  it("set_on_exit arms a job late and the wake still comes", async () => {
    const id = await start("sleep 0.5", "none");
    expect(service.setOnExit({ session_id: id, on_exit: "wake" }, direct()).effect).toBe("armed");
    await waitFor(() => sent.length > 0, 30_000, "a wake");
    expect(sent[0]!.map((c) => c.sessionId)).toEqual([id]);
    expect(service.setOnExit({ session_id: id, on_exit: "none" }, direct()).effect).toBe("already_notified");
  });

  it("a refused submission is retried at the next boundary, never resent after success", async () => {
    refuse = true;
    const id = await start("sleep 0.3");
    await waitFor(() => wakes.failures.length > 0, 30_000, "a refused submission");
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(wakes.failures).toHaveLength(1);
    refuse = false;
    wakes.boundary();
    expect(sent.flat().map((c) => c.sessionId)).toEqual([id]);
    wakes.boundary();
    expect(sent).toHaveLength(1);
  });
});

describe("codemode observation", () => {
  it("holds the completion until the outermost call finalizes; success consumes the wake, output stays replayable once", async () => {
    const r = await service.exec({ cmd: "echo from-script; exit 4", on_exit: "wake" }, nested("outer-1"));
    expect(r).toMatchObject({ running: false, exit_code: 4, output: "from-script\n", output_replayed: false });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(sent).toHaveLength(0);
    const receipt = service.finalizeScript("outer-1", true)!;
    expect(receipt).toMatch(/^\[shell-jobs results\]\n- session_id 1: exited with code 4 · final output replayable once/);
    expect(receipt).toContain(r.log_path!);
    expect(receipt).not.toContain("from-script");
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(sent).toHaveLength(0);
    // A nested read preserves the record; the direct read consumes it.
    expect((await service.writeStdin({ session_id: 1, yield_time_ms: 0 }, nested("outer-2"))).output_replayed).toBe(true);
    service.finalizeScript("outer-2", true);
    const replay = await service.writeStdin({ session_id: 1, yield_time_ms: 0 }, direct());
    expect(replay).toMatchObject({ output_replayed: true, output: "from-script\n", exit_code: 4 });
    await expect(service.writeStdin({ session_id: 1, yield_time_ms: 0 }, direct())).rejects.toThrow(/no longer registered/);
  });

  it("a failed script still gets its receipt and the completion stays eligible for a wake", async () => {
    await service.exec({ cmd: "echo x", on_exit: "wake" }, nested("outer-3"));
    const running = await start("sleep 30", "none", nested("outer-3", 2));
    const receipt = service.finalizeScript("outer-3", false)!;
    expect(receipt).toContain("session_id 1: exited with code 0");
    expect(receipt).toContain(`session_id ${running}: running`);
    await waitFor(() => sent.length > 0, 30_000, "a wake after the failed script");
    expect(sent[0]!.map((c) => c.sessionId)).toEqual([1]);
  });
});
