/**
 * Persisted jobs across real Pi processes (`pi --mode rpc`, each its own process): a Pi killed with SIGKILL leaves its
 * persisted job running and its ordinary job to the next Pi's crash cleanup; the next Pi in the directory adopts the
 * persisted one and stops it with kill_session, leaving no process. A closed terminal (tmux kill-session) ends the
 * ordinary job through the exit net and leaves the persisted one for the next Pi too.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { pidAlive } from "../integration/helpers.ts";
import { startRpc, type PiRecord, type RpcSession } from "./harness/cli.ts";
import { stopLeftover } from "./harness/persisted-entry.ts";
import { startTui } from "./harness/tmux.ts";
import { pollUntil } from "./harness/wait.ts";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The pid a job's shell wrote to `file` in `cwd`, once written: the call that started it may have returned before its
 * shell ran (its `yield_time_ms` over on a loaded machine while the process was still being started).
 */
function pidIn(cwd: string, file: string): Promise<number> {
  const path = join(cwd, file);
  return pollUntil(() => existsSync(path) && Number(readFileSync(path, "utf8").trim()) > 1 && Number(readFileSync(path, "utf8").trim()), {
    timeoutMs: 60_000,
    what: file,
  });
}

/** The details of the `n`th result of a tool, as Pi streamed them. */
function resultOf(pi: RpcSession, tool: string, n = 0): any {
  const ends = pi.records.filter((r: PiRecord) => r.type === "tool_execution_end" && r.toolName === tool);
  return (ends[n] as { result: { details: unknown } } | undefined)?.result.details;
}


describe("persisted jobs across Pi processes", () => {
  test("after SIGKILL the next Pi adopts the persisted job and stops it; the ordinary one is cleaned up", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "project-"));
    const first = await startRpc({
      cwd,
      steps: [
        {
          toolCalls: [
            { name: "exec_command", arguments: { cmd: "echo $$ > ordinary.pid; exec sleep 120", yield_time_ms: 250 } },
            { name: "exec_command", arguments: { cmd: "echo up; exec sleep 120", persist: true, ready: { pattern: "^up$" } } },
          ],
        },
        { toolCalls: [{ name: "list_sessions", arguments: {} }] },
        { text: "started" },
      ],
    });
    cleanups.push(() => first.close());
    await first.prompt("start");
    await first.waitForSettled(1, 60_000);
    const listed = resultOf(first, "list_sessions").sessions as { cmd: string; persisted?: { entry: string; started_by_pid: number } }[];
    const persisted = listed.find((s) => s.persisted !== undefined)!.persisted!;
    cleanups.push(() => stopLeftover(persisted.entry));
    const ordinary = await pidIn(cwd, "ordinary.pid");
    expect(pidAlive(ordinary)).toBe(true);

    process.kill(persisted.started_by_pid, "SIGKILL");
    await pollUntil(() => !pidAlive(persisted.started_by_pid), { what: "the first Pi to die" });

    const second = await startRpc({
      cwd,
      steps: [{ toolCalls: [{ name: "list_sessions", arguments: {} }] }, { toolCalls: [{ name: "kill_session", arguments: { session_id: 1 } }] }, { text: "done" }],
    });
    cleanups.push(() => second.close());
    await second.prompt("adopt");
    await second.waitForSettled(1, 60_000);
    expect(resultOf(second, "list_sessions").sessions[0]).toMatchObject({
      session_id: 1,
      cmd: "echo up; exec sleep 120",
      running: true,
      persisted: { entry: persisted.entry, adopted: true, started_by_pid: persisted.started_by_pid },
    });
    expect(resultOf(second, "kill_session")).toMatchObject({ killed: true });
    expect(existsSync(persisted.entry)).toBe(false);
    // The dead Pi's ordinary job is the crash cleanup's, as before.
    await pollUntil(() => !pidAlive(ordinary), { what: "the crash cleanup to stop the ordinary job", timeoutMs: 30_000 });
  });

  test("a closed terminal (tmux) ends the ordinary job and leaves the persisted one, which the next Pi adopts", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "project-"));
    const tui = await startTui({
      cwd,
      steps: [
        {
          toolCalls: [
            { name: "exec_command", arguments: { cmd: "echo $$ > ordinary.pid; exec sleep 120", yield_time_ms: 250 } },
            { name: "exec_command", arguments: { cmd: "echo $$ > persisted.pid; exec sleep 120", persist: true, yield_time_ms: 250 } },
          ],
        },
        { text: "started" },
      ],
    });
    cleanups.push(() => tui.kill());
    await tui.waitForPane(/faux/, 60_000);
    await tui.type("start");
    await tui.sendKeys("Enter");
    const ordinary = await pidIn(cwd, "ordinary.pid");
    const persisted = await pidIn(cwd, "persisted.pid");
    cleanups.push(() => {
      try {
        process.kill(-persisted, "SIGKILL");
      } catch {
        // Gone.
      }
    });
    await new Promise<void>((resolve, reject) =>
      execFile("tmux", ["-L", tui.socket, "kill-session", "-t", tui.target], (error) => (error ? reject(error) : resolve())),
    );
    await pollUntil(() => !pidAlive(ordinary), { timeoutMs: 30_000, what: "the ordinary job to end with Pi" });
    expect(pidAlive(persisted)).toBe(true);

    const next = await startRpc({
      cwd,
      steps: [{ toolCalls: [{ name: "list_sessions", arguments: {} }] }, { toolCalls: [{ name: "kill_session", arguments: { session_id: 1 } }] }, { text: "done" }],
    });
    cleanups.push(() => next.close());
    await next.prompt("adopt");
    await next.waitForSettled(1, 60_000);
    expect(resultOf(next, "list_sessions").sessions[0]).toMatchObject({ running: true, persisted: { adopted: true } });
    expect(resultOf(next, "kill_session")).toMatchObject({ killed: true });
    expect(pidAlive(persisted)).toBe(false);
  });
});
