/**
 * A persisted dev server in real Pi (SDK, faux model), the target: started with persist: true and
 * ready.port, it outlives the Pi that started it; the next Pi in the directory lists it running with its port, and
 * kill_session leaves no process, not even one that left the job's group (found by the job's own tag, which the
 * keeper sets). Each Pi is its own extension instance with its own ownership lock.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { freePort } from "../fixtures/free-port.ts";
import { pidAlive } from "../integration/helpers.ts";
import { keeperOf, ownerLockReleased, stopLeftover } from "./harness/persisted-entry.ts";
import { startSdkSession, type SdkSession } from "./harness/sdk.ts";
import { pollUntil } from "./harness/wait.ts";
import { answer, call, ends } from "./harness/turns.ts";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});



/** The server, and beside it a process that leaves the job's group (as a daemonising child does) and writes its pid. */
function devServer(port: number): string {
  const server = `require("http").createServer((q, r) => r.end("ok")).listen(${port}, "127.0.0.1")`;
  return `setsid sh -c 'echo $$ > escapee.pid; exec sleep 300' & exec '${process.execPath}' -e '${server}'`;
}

/** The processes that carry `tag` in their environment now. */
function tagged(tag: string): number[] {
  const found: number[] = [];
  for (const pid of readdirPids()) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`PI_JOBS_JOB=${tag}`)) found.push(pid);
    } catch {
      // Gone, or not ours.
    }
  }
  return found;
}
const readdirPids = (): number[] => readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number);

describe.runIf(process.platform === "linux")("a persisted dev server with ready.port", () => {
  test("outlives Pi, is listed with its port by the next Pi, and kill_session leaves no process", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "project-"));
    const port = await freePort();
    const first = await startSdkSession({
      cwd,
      responses: [call("exec_command", { cmd: devServer(port), persist: true, ready: { port, timeout_ms: 30_000 } }), call("list_sessions", {}), answer("started")],
    });
    await first.prompt("start");
    const started = ends(first)[0]!.result.details;
    expect(started).toMatchObject({ running: true, wait_status: "ready", ready: { status: "ready", port } });
    const listedFirst = ends(first)[1]!.result.details.sessions[0];
    expect(listedFirst).toMatchObject({ running: true, listening: [port] });
    const entry = listedFirst.persisted.entry as string;
    cleanups.push(() => stopLeftover(entry));
    const { tag } = JSON.parse(readFileSync(join(entry, "entry.json"), "utf8")) as { tag: string };
    expect(tag).toMatch(/^p[0-9a-f]{12}\/job-/);
    const escapee = await pollUntil(() => existsSync(join(cwd, "escapee.pid")) && Number(readFileSync(join(cwd, "escapee.pid"), "utf8").trim()) > 1 && Number(readFileSync(join(cwd, "escapee.pid"), "utf8").trim()), {
      what: "the escapee's pid",
    });
    cleanups.push(() => void (pidAlive(escapee) && process.kill(escapee, "SIGKILL")));
    await first.dispose();
    // Pi has quit once its ownership lock is released (its process ends then too); the next Pi starts after that.
    await ownerLockReleased(cwd);
    const { keeper, job } = keeperOf(entry);
    // Quit spared the server, its keeper and the process that left its group, all carrying the job's own tag but the keeper.
    expect([pidAlive(keeper), pidAlive(job), pidAlive(escapee)]).toEqual([true, true, true]);
    expect(tagged(tag)).toEqual(expect.arrayContaining([job, escapee]));
    expect(tagged(tag)).not.toContain(keeper);

    const next = await startSdkSession({ cwd, responses: [call("list_sessions", {}), answer("listed"), call("kill_session", { session_id: 1 }), answer("done")] });
    cleanups.push(() => next.dispose());
    // Pi's session_start has run once startSdkSession returns (the extensions are bound): the list's wait counts from here.
    const sinceStart = performance.now();
    await next.prompt("list");
    const listed = ends(next)[0]!;
    const listedAfterMs = Math.round(performance.now() - sinceStart);
    expect(listed.result.details.sessions[0]).toMatchObject({ running: true, listening: [port], persisted: { entry, adopted: true } });
    console.log(`persisted dev server listed running with its port ${listedAfterMs} ms after the adopting Pi's session_start (turn included)`);
    // The target is 2 s; the bound here leaves room for a loaded machine, the figure above is what it took.
    expect(listedAfterMs).toBeLessThan(10_000);
    await next.prompt("kill");
    expect(ends(next)[1]!.result.details).toMatchObject({ killed: true });
    expect([pidAlive(keeper), pidAlive(job), pidAlive(escapee)]).toEqual([false, false, false]);
    expect(tagged(tag)).toEqual([]);
    expect(existsSync(entry)).toBe(false);
  });
});
