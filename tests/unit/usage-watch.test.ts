/**
 * The usage watch is a job's one reader of its tree, and the stall watch judges idleness from its samples: a tree it
 * can read gives CPU figures, a tree with no process left (or a system without `/proc`) gives none, never a zero, so
 * the stall watch cannot take it for idle.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createJobCell, JobCellWriter, type TreeUsage } from "../../mailbox/cell.ts";
import { UsageWatch } from "../../actors/watch/usage-watch.ts";

const GONE = 2 ** 22 + 1; // above Linux's highest pid: no such process
const watches: UsageWatch[] = [];
afterEach(() => {
  for (const watch of watches.splice(0)) watch.dispose();
});

function watchOf(pid: number, seen: TreeUsage[]): UsageWatch {
  const watch = new UsageWatch({
    tag: `pi-jobs-test-${pid}`,
    pid,
    spawnedAtEpoch: Date.now(),
    limits: null,
    watchdog: null,
    cell: new JobCellWriter(createJobCell()),
    limitPassed: () => {},
    runaway: () => {},
    onSample: (_at, usage) => seen.push(usage),
  });
  watches.push(watch);
  return watch;
}

describe.runIf(process.platform === "linux")("the samples the stall watch gets", () => {
  it("a tree that can be read gives its CPU time so far", () => {
    const seen: TreeUsage[] = [];
    watchOf(process.pid, seen).sample();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.cpuMs).toBeGreaterThan(0);
  });

  it("a tree with no process left gives no sample at all, rather than an idle one", () => {
    const seen: TreeUsage[] = [];
    watchOf(GONE, seen).sample();
    expect(seen).toEqual([]);
  });
});
