/**
 * Process groups with real processes. Every group here is started with `detached: true`, so the shell's pid is the
 * group id, exactly as job actors start them. Liveness is checked in the process table (/proc), not assumed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { groupAlive, groupMembers, signalGroup, stopGroup, waitGroupGone } from "../../shared/process-group.ts";

const started: number[] = [];

afterEach(() => {
  for (const pgid of started.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Already gone: the test did its job.
    }
  }
});

function startGroup(script: string, stdout: "ignore" | "pipe" = "ignore"): { child: ChildProcess; pgid: number } {
  const child = spawn("sh", ["-c", script], { detached: true, stdio: ["ignore", stdout, "ignore"] });
  if (child.pid === undefined) throw new Error("spawn failed");
  started.push(child.pid);
  return { child, pgid: child.pid };
}

/** The process state letter from /proc (R, S, Z, …), or null when the pid is gone. */
function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? null;
  } catch {
    return null;
  }
}

/** Gone from the process table, or a zombie: nothing that can run. */
const cannotRun = (pid: number): boolean => {
  const state = procState(pid);
  return state === null || state === "Z";
};

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));

async function firstLine(child: ChildProcess): Promise<string> {
  let text = "";
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    text += chunk.toString();
    if (text.includes("\n")) return text.slice(0, text.indexOf("\n"));
  }
  throw new Error(`no line on stdout: ${JSON.stringify(text)}`);
}

describe("stopGroup", () => {
  it("escalates to SIGKILL for a child that ignores SIGTERM and its grandchild, and confirms both gone", async () => {
    const { pgid } = startGroup('trap "" TERM; sleep 1000 & wait');
    await waitFor(async () => (await groupMembers(pgid)).length === 2, "the shell and its sleep");
    const members = await groupMembers(pgid);
    expect(members).toContain(pgid);

    const outcome = await stopGroup(pgid, { graceMs: 300 });

    expect(outcome).toEqual({ confirmed: true, escalated: true });
    for (const pid of members) expect(cannotRun(pid)).toBe(true);
    expect(await groupMembers(pgid)).toEqual([]);
    expect(await groupAlive(pgid)).toBe(false);
  });

  it("does not escalate when the group leaves on SIGTERM", async () => {
    const { pgid } = startGroup("sleep 1000 & wait");
    await waitFor(async () => (await groupMembers(pgid)).length === 2, "the shell and its sleep");
    const members = await groupMembers(pgid);

    const outcome = await stopGroup(pgid, { graceMs: 20_000 });

    expect(outcome).toEqual({ confirmed: true, escalated: false });
    for (const pid of members) expect(cannotRun(pid)).toBe(true);
  });

  it("still sends SIGKILL after the grace when the shell exited but a grandchild ignores SIGTERM", async () => {
    const { child, pgid } = startGroup('trap "" TERM; sleep 1000 & exit 0');
    await exited(child);
    await waitFor(async () => (await groupMembers(pgid)).length === 1, "the orphaned sleep");
    const [grandchild] = await groupMembers(pgid);
    expect(grandchild).not.toBe(pgid);
    expect(await groupAlive(pgid)).toBe(true);

    const outcome = await stopGroup(pgid, { graceMs: 200 });

    expect(outcome).toEqual({ confirmed: true, escalated: true });
    expect(cannotRun(grandchild as number)).toBe(true);
    expect(await groupAlive(pgid)).toBe(false);
  });

  it("kills at once with signal SIGKILL, without calling it an escalation", async () => {
    const { pgid } = startGroup('trap "" TERM; sleep 1000 & wait');
    await waitFor(async () => (await groupMembers(pgid)).length === 2, "the shell and its sleep");
    const outcome = await stopGroup(pgid, { signal: "SIGKILL", graceMs: 60_000 });
    expect(outcome).toEqual({ confirmed: true, escalated: false });
    expect(await groupMembers(pgid)).toEqual([]);
  });

  it("confirms a group that is already gone, quickly and without signalling", async () => {
    const { child, pgid } = startGroup("exit 0");
    await exited(child);
    await waitFor(async () => !(await groupAlive(pgid)), "the group to be gone");

    expect(signalGroup(pgid, "SIGTERM")).toBe(false);
    const before = performance.now();
    const outcome = await stopGroup(pgid, { graceMs: 30_000, confirmMs: 30_000 });
    expect(outcome).toEqual({ confirmed: true, escalated: false });
    expect(await waitGroupGone(pgid, 30_000)).toBe(true);
    // Far below either wait: nothing was waited for.
    expect(performance.now() - before).toBeLessThan(5_000);
  });
});

describe("zombies", () => {
  it("counts a group whose only member is a zombie as gone", async () => {
    // The background job becomes its own session and group (setsid), exits, and stays a zombie: its parent is the
    // outer shell, which by then has exec'd into a sleep that never reaps it.
    const { child } = startGroup('setsid sh -c "sleep 0.3" & echo $!; exec sleep 1000', "pipe");
    const zombie = Number(await firstLine(child));
    started.push(zombie);
    await waitFor(() => procState(zombie) === "Z", "the zombie");

    // kill() still sees the group: only the process table shows there is nothing left that can run.
    expect(() => process.kill(-zombie, 0)).not.toThrow();
    expect(await groupAlive(zombie)).toBe(false);
    expect(await groupMembers(zombie)).toEqual([]);
    expect(await waitGroupGone(zombie, 30_000)).toBe(true);
    const outcome = await stopGroup(zombie, { graceMs: 30_000, confirmMs: 30_000 });
    expect(outcome).toEqual({ confirmed: true, escalated: false });
  });

  it("still finds a live member once the leader is gone", async () => {
    // The leader exits at once (Node reaps it), so only the scan of the process table finds its live child.
    const { child, pgid } = startGroup('trap "" TERM; sleep 1000 & exit 0');
    await exited(child);
    await waitFor(async () => (await groupMembers(pgid)).length === 1, "the orphaned sleep");
    expect(await groupAlive(pgid)).toBe(true);
    expect(await waitGroupGone(pgid, 150)).toBe(false);
    expect(signalGroup(pgid, "SIGKILL")).toBe(true);
    expect(await waitGroupGone(pgid, 30_000)).toBe(true);
  });
});

describe("signalGroup, groupAlive, waitGroupGone", () => {
  it("signals every member of a live group", async () => {
    const { child, pgid } = startGroup("sleep 1000 & wait");
    await waitFor(async () => (await groupMembers(pgid)).length === 2, "the shell and its sleep");
    const members = await groupMembers(pgid);
    expect(signalGroup(pgid, "SIGHUP")).toBe(true);
    await exited(child);
    await waitFor(() => members.every(cannotRun), "every member to end");
  });

  it("times out on a group that stays alive", async () => {
    const { pgid } = startGroup("exec sleep 1000");
    await waitFor(async () => (await groupMembers(pgid)).length === 1, "the sleep");
    expect(await groupAlive(pgid)).toBe(true);
    expect(await waitGroupGone(pgid, 120)).toBe(false);
  });

  it("refuses group ids that would reach other processes", () => {
    const ownGroup = Number(readFileSync("/proc/self/stat", "latin1").split(") ")[1]?.split(" ")[2]);
    for (const pgid of [0, 1, -1, 2.5, Number.NaN, ownGroup]) {
      expect(() => signalGroup(pgid, "SIGTERM")).toThrow(RangeError);
      expect(() => groupAlive(pgid)).toThrow(RangeError);
      expect(() => groupMembers(pgid)).toThrow(RangeError);
    }
  });
});
