/**
 * How a job's usage watch finds its tree, with real processes: a member's children at every look, and a process
 * whose parent ended before any look saw it (an escaped daemon, now init's child) by probing the pids allocated
 * since the last probe, which a job without limits does only every few seconds.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { TreeMembers } from "../../shared/process-table/proc-tree.ts";
import { TAG_VARIABLE } from "../../shared/process-table/index.ts";
import { childPids } from "../../shared/process-table/proc-stat.ts";
import { killLeftovers, waitFor } from "./helpers.ts";

const leftovers: number[] = [];
const dirs: string[] = [];
afterEach(() => {
  killLeftovers(leftovers, { groups: true });
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const HOUR_MS = 3_600_000;

/**
 * A tagged shell in a group of its own that waits for `go` to exist, then runs `then`; what `then` writes to `$out` is
 * read back by the test.
 */
function tagged(then: string) {
  const dir = mkdtempSync(join(tmpdir(), "pi-jobs-tree-"));
  dirs.push(dir);
  const go = join(dir, "go");
  const out = join(dir, "out");
  const script = `while [ ! -e '${go}' ]; do sleep 0.05; done; out='${out}'; ${then}`;
  const tag = `${randomBytes(6).toString("hex")}/job_1`;
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore", env: { ...process.env, [TAG_VARIABLE]: tag } });
  leftovers.push(child.pid!);
  const written = () => {
    try {
      const pid = Number(readFileSync(out, "utf8").trim());
      return pid > 0 ? pid : null;
    } catch {
      return null;
    }
  };
  return { tag, leader: child.pid!, go: () => writeFileSync(go, ""), written };
}

describe.runIf(process.platform === "linux" && childPids(process.pid) !== null)("a job's tree members", () => {
  it("a member's child is found by reading the members' children, with no probe of the pids allocated", async () => {
    const job = tagged(`sleep 100 & echo $! > "$out.tmp"; mv "$out.tmp" "$out"; wait`);
    const members = new TreeMembers({ tag: job.tag, leader: job.leader, spawnedAtEpoch: Date.now(), probeEveryMs: HOUR_MS });
    members.look();
    job.go();
    const child = await waitFor(job.written, 30_000, "the child's pid");
    leftovers.push(child);
    await waitFor(() => members.look().includes(child), 30_000, "the child among the members");
    expect(members.look()).toContain(job.leader);
  });

  it("an orphan that carries the tag is found by the next probe of the allocated pids, not by the children", async () => {
    // The subshell starts the escapee and ends: the escapee is init's child (or a subreaper's) before any look.
    const job = tagged(`(setsid sleep 100 & echo $! > "$out.tmp"); mv "$out.tmp" "$out"; sleep 100`);
    const slow = new TreeMembers({ tag: job.tag, leader: job.leader, spawnedAtEpoch: Date.now(), probeEveryMs: HOUR_MS });
    const probing = new TreeMembers({ tag: job.tag, leader: job.leader, spawnedAtEpoch: Date.now(), probeEveryMs: 300 });
    slow.look();
    probing.look();
    job.go();
    const orphan = await waitFor(job.written, 30_000, "the escapee's pid");
    leftovers.push(orphan);
    await waitFor(() => probing.look().includes(orphan), 30_000, "the escapee among the members");
    // Its parent is not a member: looks that only read children do not see it.
    for (let i = 0; i < 5; i += 1) {
      expect(slow.look()).not.toContain(orphan);
      await sleep(50);
    }
  });

  it("the first look reads children only; the first probe covers every pid since the leader, so an earlier orphan is found", async () => {
    // The escapee is init's child before any look: a first look that scanned for the tag would find it at once, at the
    // cost of a read of every process started since the spawn; the first probe finds it instead.
    const job = tagged(`(setsid sleep 100 & echo $! > "$out.tmp"); mv "$out.tmp" "$out"; sleep 100`);
    job.go();
    const orphan = await waitFor(job.written, 30_000, "the escapee's pid");
    leftovers.push(orphan);
    const slow = new TreeMembers({ tag: job.tag, leader: job.leader, spawnedAtEpoch: Date.now(), probeEveryMs: HOUR_MS });
    const probing = new TreeMembers({ tag: job.tag, leader: job.leader, spawnedAtEpoch: Date.now(), probeEveryMs: 300 });
    const everyLook = new TreeMembers({ tag: job.tag, leader: job.leader, spawnedAtEpoch: Date.now(), probeEveryMs: 0 });
    expect(slow.look()).not.toContain(orphan);
    expect(everyLook.look()).toContain(orphan);
    await waitFor(() => probing.look().includes(orphan), 30_000, "the escapee among the members after the first probe");
    expect(slow.look()).toContain(job.leader);
    expect(slow.look()).not.toContain(orphan);
  });
});
