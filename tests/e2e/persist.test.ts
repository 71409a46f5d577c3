/**
 * exec_command with persist: true in real Pi (SDK, faux model): the job runs under its keeper (spawner/keeper.pl),
 * outside Pi's tree, and the session serves it like any job through its follower: output, input through the FIFO,
 * the wake with the real exit code, kill_session through the keeper. Quitting Pi ends every ordinary job and spares
 * the persisted one, whose registry entry stays for the next Pi.
 */
import { fauxAssistantMessage, type FauxResponseFactory } from "@earendil-works/pi-ai";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, test } from "vitest";
import { pidAlive } from "../integration/helpers.ts";
import { keeperOf, stopLeftover } from "./harness/persisted-entry.ts";
import { startSdkSession, wakeMessages, type SdkSession } from "./harness/sdk.ts";
import { pollUntil } from "./harness/wait.ts";
import { answer, call, ends, type ToolEnd } from "./harness/turns.ts";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});


async function start(responses: FauxResponseFactory[]): Promise<SdkSession> {
  const sdk = await startSdkSession({ responses });
  cleanups.push(() => sdk.dispose());
  return sdk;
}

const textOf = (end: ToolEnd): string => end.result.content.map((c) => c.text ?? "").join("");



describe("persist: true", () => {
  test("runs under its keeper: output, input through the FIFO, and one wake with the real exit code; its entry goes once the wake is shown", async () => {
    const sdk = await start([
      call("exec_command", { cmd: 'echo ready; read line; echo "got $line"; sleep 1; exit 3', persist: true, on_exit: "wake", ready: { pattern: "^ready$" } }),
      answer("started"),
      call("list_sessions", {}),
      answer("listed"),
      call("write_stdin", { session_id: 1, chars: "hello\\n", yield_time_ms: 250 }),
      answer("sent"),
      () => fauxAssistantMessage("woken"),
    ]);
    await sdk.prompt("start");
    expect(ends(sdk)[0]!.isError).toBe(false);
    expect(ends(sdk)[0]!.result.details).toMatchObject({ running: true, output: "ready\n" });
    await sdk.prompt("list");
    const entry = ends(sdk)[1]!.result.details.sessions[0].persisted.entry as string;
    expect(ends(sdk)[1]!.result.details.sessions[0].persisted.started_by_pid).toBe(process.pid);
    cleanups.push(() => stopLeftover(entry));
    const { keeper, job } = keeperOf(entry);
    // Not this Pi's descendant: orphaned once the launcher and the middle process have ended, in a session of its own.
    const stat = (pid: number | "self"): string[] => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    const [, parent, , session] = stat(keeper);
    expect(parent).not.toBe(String(process.pid));
    expect(session).not.toBe(stat("self")[3]);
    expect(pidAlive(job)).toBe(true);
    await sdk.prompt("send");
    await sdk.waitForSettled(4, 30_000);
    const wakes = wakeMessages(sdk);
    expect(wakes).toHaveLength(1);
    expect(wakes[0]!.details.sessions[0]).toMatchObject({ session_id: 1, status: "exited", exit_code: 3 });
    expect(ends(sdk)[2]!.result.details.output).toBe("got hello\n");
    expect(pidAlive(keeper)).toBe(false);
    // Shown to the model: the entry goes at once, so no later Pi reports the job again, even after a crash.
    expect(existsSync(entry)).toBe(false);
    await sleep(3_500);
    expect(wakeMessages(sdk)).toHaveLength(1);
  });

  test("refuses what a keeper cannot honour, naming the fields: a terminal, a bad value, closing its stdin", async () => {
    const sdk = await start([
      call("exec_command", { cmd: "true", persist: true, tty: true }),
      call("exec_command", { cmd: "true", persist: "yes" }),
      call("exec_command", { cmd: "cat", persist: true, yield_time_ms: 250 }),
      call("list_sessions", {}),
      call("write_stdin", { session_id: 1, chars: "hello\\n", end_stdin: true, yield_time_ms: 250 }),
      call("kill_session", { session_id: 1 }),
      answer("refused"),
    ]);
    await sdk.prompt("try");
    const errors = ends(sdk).map((end) => [end.isError, textOf(end)] as const);
    cleanups.push(() => stopLeftover(ends(sdk)[3]!.result.details.sessions[0].persisted.entry as string));
    expect(errors.map(([isError]) => isError)).toEqual([true, true, false, false, true, false]);
    expect(errors[0]![1]).toMatch(/persist: true cannot be used with tty: true/);
    expect(errors[1]![1]).toMatch(/persist/);
    // The keeper holds a persisted job's stdin open for the next Pi: closing it is refused, and nothing was sent.
    expect(errors[4]![1]).toMatch(/end_stdin cannot close the stdin of session 1, a persisted job/);
    expect(ends(sdk)[5]!.result.details).toMatchObject({ killed: true });
    expect(ends(sdk)[5]!.result.details.output ?? "").not.toContain("hello");
  });

  test("its limits follow the job's own tree: a persisted job past its limit is stopped, keeper and all", async () => {
    // The tree grows past 3 processes: the actor watches the job's tag, not its follower's, and stops the job's group.
    const sdk = await start([
      call("exec_command", { cmd: "sleep 60 & sleep 60 & sleep 60 & sleep 60 & wait", persist: true, limits: { processes: 3 }, yield_time_ms: 250 }),
      call("list_sessions", {}),
      answer("started"),
    ]);
    await sdk.prompt("start");
    const entry = ends(sdk)[1]!.result.details.sessions[0].persisted.entry as string;
    cleanups.push(() => stopLeftover(entry));
    const { keeper, job } = keeperOf(entry);
    await pollUntil(() => !pidAlive(job) && !pidAlive(keeper), { what: "the persisted job stopped at its limit", timeoutMs: 20_000 });
    expect(readFileSync(join(entry, "end"), "utf8")).toMatch(/signal SIGTERM|exit 143/);
  });

  test("quitting Pi ends the ordinary job and spares the persisted one, whose entry stays", async () => {
    const sdk = await startSdkSession({
      responses: [
        call("exec_command", { cmd: "sleep 60", persist: true, yield_time_ms: 250 }),
        call("exec_command", { cmd: "echo $$ > ordinary.pid; exec sleep 60", yield_time_ms: 250 }),
        call("list_sessions", {}),
        answer("started"),
      ],
    });
    cleanups.push(() => sdk.dispose());
    await sdk.prompt("start");
    const listed = ends(sdk)[2]!.result.details.sessions as { session_id: number; persisted?: { entry: string } }[];
    const entry = listed[0]!.persisted!.entry;
    cleanups.push(() => stopLeftover(entry));
    // The shell creates the file before `echo` writes to it: an empty one is waited out.
    const pidFile = join(sdk.cwd, "ordinary.pid");
    const ordinary = await pollUntil(() => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8").trim()) > 1 && Number(readFileSync(pidFile, "utf8").trim()), {
      what: "the ordinary job's pid",
    });
    const { keeper, job } = keeperOf(entry);
    expect(pidAlive(ordinary)).toBe(true);
    await sdk.dispose();
    expect(pidAlive(ordinary)).toBe(false);
    expect(pidAlive(keeper)).toBe(true);
    expect(pidAlive(job)).toBe(true);
    expect(existsSync(join(entry, "entry.json"))).toBe(true);
    expect(existsSync(join(entry, "end"))).toBe(false);
  });

  test("an end list_sessions shows has reached the model: its entry goes then, not at quit", async () => {
    const sdk = await start([
      call("exec_command", { cmd: "sleep 1; exit 4", persist: true, yield_time_ms: 100 }),
      call("list_sessions", {}),
      answer("started"),
    ]);
    await sdk.prompt("start");
    const entry = ends(sdk)[1]!.result.details.sessions[0].persisted.entry as string;
    cleanups.push(() => stopLeftover(entry));
    // Listed running: nothing reported yet, the entry stays.
    expect(ends(sdk)[1]!.result.details.sessions[0]).toMatchObject({ exit_code: null });
    await pollUntil(() => existsSync(join(entry, "end")), { what: "the job to end" });
    // The follower ends once it has copied the log past the end and seen it: listed until it reads ended.
    let listedEnded = false;
    for (let attempt = 0; attempt < 40 && !listedEnded; attempt += 1) {
      sdk.script(call("list_sessions", {}), answer("listed"));
      await sdk.prompt("list");
      const last = ends(sdk).at(-1)!.result.details.sessions[0];
      listedEnded = last.exit_code === 4;
      if (!listedEnded) await sleep(250);
    }
    expect(listedEnded).toBe(true);
    expect(existsSync(entry)).toBe(false);
  });

  test("kill_session stops the job's group and its keeper, confirmed, and removes the entry", async () => {
    const sdk = await start([
      call("exec_command", { cmd: "sleep 60 & sleep 60", persist: true, on_exit: "wake", yield_time_ms: 250 }),
      call("list_sessions", {}),
      call("kill_session", { session_id: 1 }),
      answer("killed"),
    ]);
    await sdk.prompt("start and kill");
    const entry = ends(sdk)[1]!.result.details.sessions[0].persisted.entry as string;
    cleanups.push(() => stopLeftover(entry));
    expect(ends(sdk)[2]!.result.details).toMatchObject({ killed: true });
    expect(existsSync(entry)).toBe(false);
    await sleep(3_500);
    expect(wakeMessages(sdk)).toHaveLength(0);
  });

  test("its keeper ends it at its hard lifetime, and the report says so", async () => {
    const sdk = await start([
      call("exec_command", { cmd: "trap '' TERM; sleep 60", persist: true, timeout_seconds: 1, yield_time_ms: 30_000 }),
      answer("done"),
    ]);
    await sdk.prompt("start");
    const details = ends(sdk)[0]!.result.details;
    expect(details).toMatchObject({ running: false, signal: "SIGKILL" });
    expect(details.output).toContain("hard lifetime");
  });
});
