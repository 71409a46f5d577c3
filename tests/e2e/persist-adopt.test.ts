/**
 * Re-attaching persisted jobs in real Pi (SDK, faux model): the next Pi started in the same directory adopts every
 * persisted job recorded there, reports the one that ended while no Pi ran once (exit code, last lines), serves a
 * running one like any job, and a second Pi in that directory only lists the owner's jobs. Each Pi is its own
 * extension instance with its own ownership lock (held by a process of its own).
 */
import type { FauxResponseFactory } from "@earendil-works/pi-ai";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, test } from "vitest";
import { pidAlive } from "../integration/helpers.ts";
import { keeperOf, ownerLockReleased, stopLeftover } from "./harness/persisted-entry.ts";
import { startSdkSession, wakeMessages, type SdkSession } from "./harness/sdk.ts";
import { pollUntil } from "./harness/wait.ts";
import { answer, call, ends } from "./harness/turns.ts";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});


async function pi(cwd: string, responses: FauxResponseFactory[]): Promise<SdkSession> {
  const sdk = await startSdkSession({ cwd, responses });
  cleanups.push(() => sdk.dispose());
  return sdk;
}




const project = (): string => mkdtempSync(join(tmpdir(), "project-"));

/** Starts a persisted job in a first Pi, lists it, quits that Pi; returns the job's registry entry. */
async function startThenQuit(cwd: string, args: Record<string, unknown>): Promise<string> {
  const first = await startSdkSession({ cwd, responses: [call("exec_command", { persist: true, ...args }), call("list_sessions", {}), answer("started")] });
  await first.prompt("start");
  const entry = ends(first)[1]!.result.details.sessions[0].persisted.entry as string;
  cleanups.push(() => stopLeftover(entry));
  await first.dispose();
  // The next Pi starts once this one let go of the directory's ownership, as a Pi started after a quit does.
  await ownerLockReleased(cwd);
  return entry;
}

describe("persisted jobs are re-attached by the next Pi in the directory", () => {
  test("a job that ended while no Pi ran is reported once, with its exit code and last lines; its entry goes", async () => {
    const cwd = project();
    const entry = await startThenQuit(cwd, { cmd: "echo started; sleep 3; echo finishing; exit 3", on_exit: "wake", yield_time_ms: 250 });
    await pollUntil(() => existsSync(join(entry, "end")), { what: "the job to end while no Pi runs" });
    const next = await pi(cwd, [answer("woken"), call("list_sessions", {}), answer("listed")]);
    await next.waitForSettled(1, 30_000);
    const wakes = wakeMessages(next);
    expect(wakes).toHaveLength(1);
    expect(wakes[0]!.details.sessions[0]).toMatchObject({ status: "exited", exit_code: 3, earlier_session: true });
    expect(wakes[0]!.content).toContain("(started in an earlier session): exited with code 3");
    expect(wakes[0]!.content).toContain("finishing");
    await sleep(3_500);
    expect(wakeMessages(next)).toHaveLength(1);
    await next.dispose();
    expect(existsSync(entry)).toBe(false);
    // A third Pi finds nothing left to adopt or report.
    const third = await pi(cwd, [call("list_sessions", {}), answer("listed")]);
    await third.prompt("list");
    expect(ends(third)[0]!.result.details).toMatchObject({ active_count: 0, completed_count: 0 });
  });

  test("an end whose wake was handed to Pi but not yet shown when Pi quit is reported by the next Pi, once", async () => {
    const cwd = project();
    const first = await startSdkSession({
      cwd,
      responses: [
        call("exec_command", { persist: true, cmd: "sleep 1; echo finishing; exit 7", on_exit: "wake", yield_time_ms: 250 }),
        call("list_sessions", {}),
        // A long call in the same run: the job's wake is queued behind it, not yet in the conversation.
        call("exec_command", { cmd: "sleep 25", yield_time_ms: 25_000 }),
        answer("done"),
      ],
    });
    const run = first.prompt("start").catch(() => undefined);
    await pollUntil(() => ends(first).length >= 2, { what: "the persisted job to be started and listed" });
    const entry = ends(first)[1]!.result.details.sessions[0].persisted.entry as string;
    cleanups.push(() => stopLeftover(entry));
    await pollUntil(() => first.session.agent.hasQueuedMessages(), { what: "the job's wake to be queued behind the running call", timeoutMs: 20_000 });
    expect(wakeMessages(first)).toHaveLength(0);
    await first.dispose();
    await run;
    await ownerLockReleased(cwd);
    // Handed over, never shown: the end is still the next Pi's to report.
    expect(existsSync(join(entry, "end"))).toBe(true);
    const next = await pi(cwd, [answer("woken"), answer("spare")]);
    await next.waitForSettled(1, 30_000);
    const wakes = wakeMessages(next);
    expect(wakes).toHaveLength(1);
    expect(wakes[0]!.details.sessions[0]).toMatchObject({ status: "exited", exit_code: 7, earlier_session: true });
    // Shown: the entry goes at once, so not even a Pi killed now could report it again.
    expect(existsSync(entry)).toBe(false);
    await sleep(2_000);
    expect(wakeMessages(next)).toHaveLength(1);
  });

  test("a running job is listed running, its output printed while no Pi ran is read, input reaches it, and kill_session leaves nothing", async () => {
    const cwd = project();
    const entry = await startThenQuit(cwd, { cmd: 'i=0; while [ $i -lt 600 ]; do echo "tick $i"; i=$((i+1)); sleep 0.1; done & read line; echo "got $line"; wait', ready: { pattern: "^tick 3$" } });
    const { keeper, job } = keeperOf(entry);
    // How far the first Pi's follower copied (it records that as it copies).
    const offset = Number(readFileSync(join(entry, "read"), "utf8"));
    expect(offset).toBeGreaterThan(0);
    await sleep(500);
    // Printed while no Pi ran, past where the first Pi's follower stopped.
    const unread = readFileSync(join(entry, "log"), "utf8").slice(offset);
    expect(unread).toMatch(/^tick \d+\ntick \d+\n/);
    const startedAt = Date.now();
    const next = await pi(cwd, [
      call("list_sessions", {}),
      call("write_stdin", { session_id: 1, chars: "hello\\n", yield_time_ms: 1000, raw: true }),
      call("kill_session", { session_id: 1 }),
      answer("done"),
    ]);
    await next.prompt("adopt");
    const listed = ends(next)[0]!.result.details.sessions[0];
    expect(listed).toMatchObject({ running: true, earlier_session: true, persisted: { entry, adopted: true, started_by_pid: process.pid } });
    // The session_start to list_sessions took the turn's time too; the adoption itself is well inside it.
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    const read = ends(next)[1]!.result.details.output as string;
    // Read on from where the first Pi's follower stopped: the ticks printed while no Pi ran come first.
    expect(read.startsWith(unread)).toBe(true);
    expect(read).toContain("got hello");
    expect(ends(next)[2]!.result.details).toMatchObject({ killed: true });
    expect(pidAlive(keeper)).toBe(false);
    expect(pidAlive(job)).toBe(false);
    expect(existsSync(entry)).toBe(false);
  });

  test("a second Pi in the same directory lists the owner's jobs and cannot start persisted ones; another directory sees nothing", async () => {
    const cwd = project();
    const owner = await pi(cwd, [call("exec_command", { cmd: "sleep 60", persist: true, yield_time_ms: 250 }), call("list_sessions", {}), answer("started")]);
    await owner.prompt("start");
    const entry = ends(owner)[1]!.result.details.sessions[0].persisted.entry as string;
    cleanups.push(() => stopLeftover(entry));
    const second = await pi(cwd, [call("list_sessions", {}), call("exec_command", { cmd: "true", persist: true }), answer("seen")]);
    await second.prompt("look");
    expect(ends(second)[0]!.result.details).toMatchObject({
      active_count: 0,
      owned_by_another_pi: { owner_pid: process.pid, jobs: [{ cmd: "sleep 60", persisted: { entry } }] },
    });
    expect(ends(second)[1]!.isError).toBe(true);
    expect(ends(second)[1]!.result.content[0]!.text).toMatch(/another Pi \(pid \d+\) owns the persisted jobs of this directory/);
    const elsewhere = await pi(project(), [call("list_sessions", {}), answer("seen")]);
    await elsewhere.prompt("look");
    expect(ends(elsewhere)[0]!.result.details.owned_by_another_pi).toBeUndefined();
    expect(ends(elsewhere)[0]!.result.details.sessions).toEqual([]);
    expect(pidAlive(keeperOf(entry).job)).toBe(true);
  });

  test("a set_on_exit change is kept in the entry: the adopting Pi wakes with the job's exit code", async () => {
    const cwd = project();
    const first = await startSdkSession({
      cwd,
      responses: [
        // It ends only once the test says so, after this Pi has quit, however slow the machine is.
        call("exec_command", { cmd: "while [ ! -e go ]; do sleep 0.05; done; exit 4", persist: true, yield_time_ms: 100 }),
        call("set_on_exit", { session_id: 1, on_exit: "wake" }),
        call("list_sessions", {}),
        answer("armed"),
      ],
    });
    await first.prompt("start");
    expect(ends(first)[1]!.result.details).toMatchObject({ previous_on_exit: "none", effect: "armed" });
    const entry = ends(first)[2]!.result.details.sessions[0].persisted.entry as string;
    cleanups.push(() => stopLeftover(entry));
    expect(JSON.parse(readFileSync(join(entry, "entry.json"), "utf8"))).toMatchObject({ onExit: "wake" });
    await first.dispose();
    await ownerLockReleased(cwd);
    const next = await pi(cwd, [answer("woken")]);
    writeFileSync(join(cwd, "go"), "");
    await pollUntil(() => wakeMessages(next).length > 0, { what: "the adopted job's wake", timeoutMs: 30_000 });
    expect(wakeMessages(next)[0]!.details.sessions[0]).toMatchObject({ status: "exited", exit_code: 4, earlier_session: true });
  });
});
