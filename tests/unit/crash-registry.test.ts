/**
 * The crash registry's pure half: the file format round trip, errors that name the field, the owner decision (a
 * reused pid is a dead owner), the stat parsing and the one-line notice.
 */
import { describe, expect, it } from "vitest";
import {
  cleanupNotice,
  formatRegistry,
  groupsStillLed,
  ownerAlive,
  parseRegistry,
  type Registry,
} from "../../host/safety/crash-registry.ts";
import { fieldsOfStat, startTicksOf } from "../../shared/process-table/proc-stat.ts";

const registry: Registry = {
  owner: { pid: 4242, startTicks: 123456, table: "proc" },
  runtimeId: "a1b2c3d4e5f6",
  jobs: [
    { tag: "a1b2c3d4e5f6/job_1", pid: 5000, pgid: 5000, leaderStartTicks: 130000, startedAt: 1_700_000_000_000, label: "npm run dev" },
    { tag: "a1b2c3d4e5f6/monitor_2", pid: 5010, pgid: 5010, leaderStartTicks: null, startedAt: 1_700_000_000_100, label: "tail -f log" },
  ],
};

describe("crash registry format", () => {
  it("reads back what it wrote", () => {
    expect(parseRegistry(formatRegistry(registry))).toEqual({ registry });
  });

  it("names what is wrong with a bad file", () => {
    expect(parseRegistry("{")).toEqual({ error: "not JSON" });
    expect(parseRegistry(JSON.stringify({ ...registry, version: 2 }))).toEqual({ error: "version: expected 1" });
    expect(parseRegistry(JSON.stringify({ version: 1, ...registry, owner: { pid: 0, startTicks: 1 } }))).toEqual({
      error: "owner: expected { pid, startTicks }",
    });
    expect(parseRegistry(JSON.stringify({ version: 1, ...registry, runtimeId: "../x" }))).toEqual({ error: "runtimeId: expected hex" });
    const foreign = { ...registry, jobs: [{ ...registry.jobs[0], tag: "ffffff/job_1" }] };
    expect(parseRegistry(JSON.stringify({ version: 1, ...foreign }))).toEqual({
      error: "jobs[0]: expected { tag of this runtime, pid, pgid, leaderStartTicks, startedAt, label }",
    });
  });
});

describe("owner and group decisions", () => {
  it("a registry's owner is alive only with the same pid and start time", () => {
    expect(ownerAlive(registry.owner, 123456, "proc")).toBe(true);
    expect(ownerAlive(registry.owner, null, "proc")).toBe(false);
    // Figures of the other table cannot be compared: the registry is left to a session on its own table.
    expect(ownerAlive(registry.owner, null, "ps")).toBe(true);
    // The pid now belongs to a process that started later: the owner is gone.
    expect(ownerAlive(registry.owner, 999999, "proc")).toBe(false);
    // The table could not tell (a `ps` that failed or timed out on a saturated machine): a live Pi's jobs are never
    // taken for a dead one's.
    expect(ownerAlive(registry.owner, undefined, "proc")).toBe(true);
  });

  it("signals only groups still led by the job's own first process", () => {
    const ticks = new Map([[5000, 130000]]);
    expect(groupsStillLed(registry.jobs, (pid) => ticks.get(pid) ?? null)).toEqual([5000]);
    // The leader's pid was reused: not ours any more.
    expect(groupsStillLed(registry.jobs, () => 1)).toEqual([]);
  });
});

describe("stat and notice", () => {
  it("reads field 22 after a command name with spaces and parentheses", () => {
    const rest = Array.from({ length: 30 }, (_, i) => String(i + 3));
    rest[19] = "778899";
    expect(startTicksOf(fieldsOfStat(`77 (a (b) c) ${rest.join(" ")}`)!)).toBe(778899);
    expect(fieldsOfStat("garbage")).toBeNull();
    expect(startTicksOf(["S", "1"])).toBeNull();
  });

  it("tells in one line what was stopped", () => {
    expect(cleanupNotice(3, ["npm run dev", "tail -f log"])).toBe(
      "pi-jobs: stopped 3 processes left by a Pi session that ended without shutdown: npm run dev, tail -f log",
    );
    expect(cleanupNotice(1, ["a", "b", "c", "d"])).toBe("pi-jobs: stopped 1 process left by a Pi session that ended without shutdown: a, b, c, …");
    expect(cleanupNotice(2, [])).not.toContain("\n");
  });
});
